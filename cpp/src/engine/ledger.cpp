#include "ledger.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"

namespace acesim {
namespace {
constexpr double kSecondsPerHour = 3600.0;
}  // namespace

void roll_up(FleetRecord& fleet, const JobRecord& r) {
    if (r.status != static_cast<std::uint8_t>(JobStatus::NotSubmitted))
        fleet.makespan = std::max(fleet.makespan, r.end);
    const double gpus = r.gpus;
    fleet.jobs_completed += r.completed ? 1u : 0u;
    fleet.failures += r.failures;
    fleet.preemptions += r.preemptions;
    fleet.timeouts += r.timeouts;
    fleet.planned_interruptions += r.planned_interruptions;
    fleet.checkpoints += r.checkpoints;
    fleet.gpu_hours += gpus * r.wall / kSecondsPerHour;
    fleet.productive_gpu_hours += gpus * r.productive / kSecondsPerHour;
    fleet.wasted_gpu_hours += gpus * r.wasted / kSecondsPerHour;
    fleet.ckpt_stall_gpu_hours += gpus * r.ckpt_stall / kSecondsPerHour;
    fleet.overhead_gpu_hours += gpus * r.overhead / kSecondsPerHour;
    fleet.init_gpu_hours += gpus * r.init / kSecondsPerHour;
    fleet.load_gpu_hours += gpus * r.load / kSecondsPerHour;
    fleet.reconfigure_gpu_hours += gpus * r.reconfigure / kSecondsPerHour;
    fleet.detection_gpu_hours += gpus * r.detection / kSecondsPerHour;
    fleet.queue_wait_gpu_hours += gpus * r.queue_wait / kSecondsPerHour;
    fleet.recovery_wait_gpu_hours += gpus * r.recovery_wait / kSecondsPerHour;
    fleet.narrow_gpu_hours += gpus * r.narrow / kSecondsPerHour;
    fleet.contention_gpu_hours += gpus * r.contention / kSecondsPerHour;
    fleet.gpu_hours_lost += r.gpu_hours_lost;
    fleet.churn_gpu_hours += r.churn_gpu_hours;
}

void finish_rollup(FleetRecord& fleet) {
    fleet.ettr = fleet.gpu_hours > 0.0 ? fleet.productive_gpu_hours / fleet.gpu_hours
                                       : std::numeric_limits<double>::quiet_NaN();
}

void Ledger::check_trace_bound() const {
    if (out_.trace.size() - trace_begin_ > kMaxFailuresPerReplica)
        throw too_many_failures_error(kMaxFailuresPerReplica, replica_);
}

void Ledger::close(const SimulationInput& in, const Plans& plans, JobStates& jobs,
                   const std::vector<Levels>& levels, const NodeTotals& nodes, std::uint64_t events,
                   std::uint64_t heap_events, bool checking, double rows_end) {
    FleetRecord fleet{};
    fleet.replica = replica_;
    fleet.jobs = static_cast<std::uint32_t>(jobs.size());
    fleet.events = events;
    fleet.heap_events = heap_events;
    fleet.node_failures = nodes.node_failures;
    fleet.quarantines = nodes.quarantines;
    fleet.quarantined_nodes = nodes.quarantined_nodes;
    fleet.spare_uses = nodes.spare_uses;
    fleet.quarantined_node_hours = nodes.quarantined_node_hours;
    fleet.down_node_hours = nodes.down_node_hours;
    fleet.maintenance_node_hours = nodes.maintenance_node_hours;
    fleet.retired_nodes = nodes.retired_nodes;
    fleet.spare_idle_node_hours = nodes.spare_idle_node_hours;
    fleet.cold_spare_uses = nodes.cold_spare_uses;
    for (std::uint32_t j = 0; j < jobs.size(); ++j) {
        // A job not submitted by the end is opened to be closed.
        if (!jobs.opened(j)) jobs.open(j);
        JobRecord& r = *jobs.row(j);
        // A job done keeps its progress and interval in its row (JobStates::done).
        double progress = r.progress;
        double interval = r.checkpoint_interval;
        if (jobs.phase(j) != Phase::Done) {
            JobState& job = jobs[j];
            const double t = std::max(rows_end, in.jobs[j].submit);
            progress = levels.empty() ? close_at(job.life, r, job.started, t)
                                      : levels_close_at(job.life, levels[j], r, job.started, t);
            if (job.phase() != Phase::Pending) log(j, EventKind::Horizon, t, job.life.committed);
            interval = job.life.interval;
        }
        const JobProfile& profile = plans.of(j);
        const double expected = expected_ettr_exponential(
            profile.mtbf, in.jobs[j].work, plans.interval(in.jobs, j), profile.save_mean, profile.restart);
        finish_row(r, progress, interval, RowConstants{profile.mtbf, profile.young, profile.daly, expected});

        roll_up(fleet, r);
        if (checking) {
            const double sum = r.productive + r.wasted + r.ckpt_stall + r.overhead + r.detection +
                               r.queue_wait + r.recovery_wait + r.narrow;
            if (std::abs(sum - r.wall) > 1e-9 * std::max(1.0, std::abs(r.wall)) && std::isfinite(r.wall))
                throw std::logic_error("invariant: accounting does not add up for job " + std::to_string(j));
        }
        jobs.release(j);  // its row to the output
    }
    finish_rollup(fleet);
    out_.fleet.push_back(fleet);
}

}  // namespace acesim

#include "replica_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {
// A debug build (ACESIM_DEBUG_INVARIANTS=ON) checks every run.
#ifdef ACESIM_CHECK_INVARIANTS
constexpr bool kAlwaysCheck = true;
#else
constexpr bool kAlwaysCheck = false;
#endif
}  // namespace

ReplicaState::ReplicaState(const SimulationInput& in, const Plans& plans,
                           const std::vector<DistributionView>& views, std::uint32_t replica,
                           std::uint64_t max_events, JobRecord* rows, SimulationOutput& out)
    : in_(in),
      plans_(plans),
      replica_(replica),
      rows_(rows),
      checking_(kAlwaysCheck || in.check_invariants),
      draws_(in.seed, replica, views, in.causes),
      kernel_(in.jobs, in.fleet.enabled ? in.fleet.nodes : 0, in.horizon, max_events, replica, checking_),
      pool_(in.fleet, in.policy.quarantine, in.gpus_per_node, plans.jobs),
      scheduler_(in.jobs, in.policy.backfill),
      policy_(in.policy, in.jobs, plans, in.gpus_per_node),
      ledger_(out, replica, in.record_events),
      reservation_(in.fleet.enabled && in.policy.backfill == Backfill::Easy, in.jobs,
                   in.fleet.enabled ? in.fleet.nodes : 0, in.gpus_per_node, plans.jobs),
      limits_(std::any_of(in.time_limits.begin(), in.time_limits.end(),
                          [](double limit) { return std::isfinite(limit); })),
      storage_(in.fleet.enabled ? in.fleet.storage_bandwidth : 0.0) {}

ReplicaEngine::ReplicaEngine(const SimulationInput& in, const Plans& plans,
                             const std::vector<DistributionView>& views, std::uint32_t replica,
                             std::uint64_t max_events, JobRecord* rows, SimulationOutput& out)
    : ReplicaState(in, plans, views, replica, max_events, rows, out),
      lifecycle_(*this),
      failures_(*this),
      recovery_(*this),
      checkpoints_(*this),
      elastic_(*this) {
    for (ReplicaParts* part :
         {static_cast<ReplicaParts*>(&lifecycle_), static_cast<ReplicaParts*>(&failures_),
          static_cast<ReplicaParts*>(&recovery_), static_cast<ReplicaParts*>(&checkpoints_),
          static_cast<ReplicaParts*>(&elastic_)})
        part->wire(&lifecycle_, &failures_, &recovery_, &checkpoints_, &elastic_);
}

void ReplicaEngine::run() {
    pool_.init(draws_);
    for (std::uint32_t n = 0; n < pool_.size(); ++n) kernel_.schedule_node(n, pool_.next_event(n));
    if (!pool_.maintenance().empty()) kernel_.plan(pool_.maintenance().times());
    const std::size_t n = in_.jobs.size();
    jobs_.resize(n);
    if (!plans_.levels.empty()) levels_.assign(n, Levels{});
    if (limits_) limit_at_.assign(n, std::numeric_limits<double>::infinity());
    for (std::uint32_t j = 0; j < n; ++j) {
        const JobSpec& spec = in_.jobs[j];
        JobState& job = jobs_[j];
        job.rec = rows_ + j;
        *job.rec = JobRecord{};
        job.rec->replica = replica_;
        job.rec->job = j;
        job.rec->gpus = spec.gpus;
        job.rec->priority = spec.priority;
        job.rec->submit = spec.submit;
        job.life.interval = plans_.jobs[j].interval;
        job.life.phase_end = spec.submit;
        lifecycle_.renew_failure_clock(j);
    }
    // Node failure processes never end: the run ends when every job is done
    // (or closed as unplaceable).
    DueEvent e;
    while (jobs_done_ < n && kernel_.next(e)) {
        pool_.set_now(e.time);
        if (e.planned) {
            failures_.begin_maintenance(e.id, e.time);
        } else if (e.node) {
            failures_.handle_node(e.id, e.time);
        } else {
            lifecycle_.handle_job(e.id);
        }
        failures_.reschedule_touched_nodes();
        ledger_.check_trace_bound();
        if (checking_) check_invariants();
    }
    // The simulated span ends at the last job's end, or at the horizon (the
    // last event's time when there is none and jobs are left).
    const double end = jobs_done_ == n              ? kernel_.now()
                       : std::isfinite(in_.horizon) ? in_.horizon
                                                    : kernel_.now();
    pool_.close(end);
    ledger_.close(in_, plans_, jobs_, levels_, pool_.totals(), kernel_.events(), checking_);
}

void ReplicaEngine::check_invariants() const {
    if (!pool_.enabled()) return;
    pool_.check_invariants();
    reservation_.check_invariants(pool_);
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
        const Phase phase = jobs_[j].phase();
        const bool idle = phase == Phase::Done || phase == Phase::Queued || phase == Phase::Pending;
        if (reservation_.enabled() && idle && reservation_.has_end(j))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " holds no node but has an estimated end");
        if (limits_ && (jobs_[j].running() ? !(limit_at_[j] >= kernel_.now())
                                           : limit_at_[j] != std::numeric_limits<double>::infinity()))
            throw std::logic_error("invariant: job " + std::to_string(j) + "'s time limit is out of date");
        if (reservation_.enabled() && jobs_[j].running() && !reservation_.has_end(j))
            throw std::logic_error("invariant: running job " + std::to_string(j) + " has no estimated end");
        if (jobs_[j].phase() == Phase::Done && !pool_.nodes_of(j).empty())
            throw std::logic_error("invariant: finished job still holds nodes");
        if (jobs_[j].phase() == Phase::Done && (scheduler_.queued(j) || scheduler_.waiting(j)))
            throw std::logic_error("invariant: finished job " + std::to_string(j) + " is still scheduled");
        if (jobs_[j].rec->status == static_cast<std::uint8_t>(JobStatus::Unplaceable) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, false) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, true))
            throw std::logic_error("invariant: job " + std::to_string(j) + " closed as unplaceable but fits");
        const JobState& job = jobs_[j];
        if (pool_.acquiring(j) > 0 && ((job.phase() != Phase::Waiting && !job.narrow) || job.replacing))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " has cold spares on their way but does not wait for them");
        if (job.narrow && (!job.running() || recovery_.ready(j)))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " runs narrow but is not running or has all its nodes");
        if (job.replacing && (job.phase() != Phase::Waiting || !recovery_.ready(j) || scheduler_.waiting(j)))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " pays a re-placement delay without all its nodes");
    }
}

}  // namespace acesim

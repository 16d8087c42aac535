// ReplicaEngine in an outside scheduler's run (FleetModel, acesim serve):
// the fleet starts with no job, jobs are submitted from outside, the clock
// advances to the next event that needs a decision, and the outside
// scheduler's starts, stops and resizes are checked before they take effect.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "replica_engine.hpp"

namespace acesim {

void ReplicaEngine::drive_from_outside(bool report_checkpoints) {
    outside_.enabled = true;
    outside_.report_checkpoints = report_checkpoints;
    jobs_.keep_everything();
    jobs_.reset(0, rows_);
    begin();
    kernel_.move_to(0.0);
}

void ReplicaEngine::rebind_rows(JobRecord* rows) {
    rows_ = rows;
    jobs_.rebind_rows(rows);
}

std::uint32_t ReplicaEngine::submit_job() {
    // The caller appended the job's spec, plan and row; it is queued now.
    const auto j = static_cast<std::uint32_t>(jobs_.size());
    jobs_.add();
    levels_.emplace_back();
    kernel_.add_job();
    scheduler_.add_job();
    pool_.add_job();
    open_job(j);
    const double t = kernel_.now() > in_.jobs[j].submit ? kernel_.now() : in_.jobs[j].submit;
    ledger_.log(j, EventKind::Submit, t, jobs_[j]);
    lifecycle_.enqueue(j, t);
    return j;
}

std::vector<ModelEvent> ReplicaEngine::advance(double until, bool whole_instant) {
    // Every event up to `until` (included), stopping at the first instant
    // at which one needs a decision (reports something): every event of
    // that instant is handled, in the kernel's order, so the scheduler
    // decides on all of them at once (or, without whole_instant, right
    // after the event that reported, as the built-in scheduler decides).
    outside_.outbox.clear();
    serve_requests();  // (none is left unless a call before this one threw)
    DueEvent e;
    for (;;) {
        const double next = kernel_.peek();
        if (next > until) break;
        if (!outside_.outbox.empty() && (!whole_instant || next > kernel_.now())) break;
        if (!kernel_.next(e)) break;
        handle(e);
    }
    // Nothing happened: the clock stands at `until` (at the horizon; never at infinity).
    if (outside_.outbox.empty() && until < std::numeric_limits<double>::infinity())
        kernel_.move_to(std::min(until, kernel_.horizon()));
    else if (outside_.outbox.empty() && std::isfinite(kernel_.horizon()))
        kernel_.move_to(kernel_.horizon());
    return std::move(outside_.outbox);
}

namespace {
const char* phase_name(Phase p) {
    switch (p) {
        case Phase::Pending:
            return "not submitted";
        case Phase::Queued:
            return "queued";
        case Phase::Waiting:
            return "waiting after a failure";
        case Phase::Detecting:
            return "failing (its fault is not detected yet)";
        case Phase::Done:
            return "done";
        default:
            return "running";
    }
}

std::string job_name(std::uint32_t j) { return "job " + std::to_string(j); }
}  // namespace

std::string ReplicaEngine::unavailable_nodes(const char* what, std::uint32_t j,
                                             const std::vector<std::uint32_t>& nodes) const {
    const JobPlan& plan = plans_.jobs[j];
    const NodeList held = pool_.nodes_of(j);
    for (std::size_t k = 0; k < nodes.size(); ++k) {
        const std::uint32_t n = nodes[k];
        const std::string node = std::string(what) + ": node " + std::to_string(n);
        if (n >= pool_.size())
            throw std::invalid_argument(node + " does not exist (the fleet has " +
                                        std::to_string(pool_.size()) + ")");
        if (std::find(nodes.begin(), nodes.begin() + static_cast<std::ptrdiff_t>(k), n) !=
            nodes.begin() + static_cast<std::ptrdiff_t>(k))
            throw std::invalid_argument(node + " is given twice");
    }
    for (const std::uint32_t n : nodes) {
        if (std::find(held.begin(), held.end(), n) != held.end()) continue;
        const std::string node = std::string(what) + ": node " + std::to_string(n);
        const NodeState& state = pool_.node(n);
        if (!state.in_service) return node + " is out of service (failed, quarantined or in maintenance)";
        if (!state.reserved.empty() || state.acquiring_for >= 0 || state.free_gpus < plan.gpus_per_node ||
            (plan.gpus_per_node == pool_.gpus_per_node() && !state.jobs.empty()))
            return node + " is busy (" + std::to_string(state.free_gpus) + " free GPUs; " + job_name(j) +
                   " needs " + std::to_string(plan.gpus_per_node) + ")";
    }
    return {};
}

void ReplicaEngine::check_nodes(const char* what, std::uint32_t j,
                                const std::vector<std::uint32_t>& nodes) const {
    const std::string reason = unavailable_nodes(what, j, nodes);
    if (!reason.empty()) throw std::invalid_argument(reason);
}

void ReplicaEngine::check_start(std::uint32_t j, const std::vector<std::uint32_t>& nodes) const {
    const Phase phase = jobs_[j].phase();
    if (phase != Phase::Queued && phase != Phase::Waiting)
        throw std::invalid_argument("start: " + job_name(j) + " is " + phase_name(phase) +
                                    "; only a queued job or one waiting after a failure can start");
    const JobPlan& plan = plans_.jobs[j];
    if (nodes.size() != plan.nodes)
        throw std::invalid_argument(
            "start: " + job_name(j) + " needs " + std::to_string(plan.nodes) + " node(s), got " +
            std::to_string(nodes.size()) +
            (in_.options(j).min_gpus > 0 ? " (resize runs an elastic job on fewer)" : ""));
}

bool ReplicaEngine::can_start(std::uint32_t j, const std::vector<std::uint32_t>& nodes) const {
    check_start(j, nodes);
    return unavailable_nodes("start", j, nodes).empty();
}

void ReplicaEngine::start_job(std::uint32_t j, const std::vector<std::uint32_t>& nodes) {
    const double t = kernel_.now();
    check_start(j, nodes);
    check_nodes("start", j, nodes);
    std::vector<std::uint32_t> released;  // (a failed job's surviving nodes it is not given)
    hold_exactly(pool_, j, nodes, released);
    scheduler_.drop(j);
    lifecycle_.begin_start(j, t);
    serve_requests();
    if (checking_) check_invariants();
}

void ReplicaEngine::resize_job(std::uint32_t j, const std::vector<std::uint32_t>& nodes) {
    const double t = kernel_.now();
    JobState& job = jobs_[j];
    const JobOptions& options = in_.options(j);
    const JobPlan& plan = plans_.jobs[j];
    if (options.min_gpus == 0)
        throw std::invalid_argument("resize: " + job_name(j) + " is not elastic (Job(min_gpus=...))");
    if (nodes.empty() || nodes.size() > plan.nodes ||
        static_cast<std::uint64_t>(nodes.size()) * plan.gpus_per_node < options.min_gpus)
        throw std::invalid_argument(
            "resize: " + job_name(j) + " runs on " +
            std::to_string((options.min_gpus + plan.gpus_per_node - 1) / plan.gpus_per_node) + " to " +
            std::to_string(plan.nodes) + " nodes, got " + std::to_string(nodes.size()));
    const Phase phase = job.phase();
    if (phase != Phase::Computing && phase != Phase::Waiting)
        throw std::invalid_argument("resize: " + job_name(j) + " is " + phase_name(phase) +
                                    (phase == Phase::Saving || phase == Phase::Starting ||
                                             phase == Phase::PersistWait || phase == Phase::Reconfiguring
                                         ? " (starting, writing or reconfiguring)"
                                         : "") +
                                    "; an elastic job is resized while it computes or after a failure");
    check_nodes("resize", j, nodes);
    const Resize& resized = elastic_.resize(j, nodes, t, phase == Phase::Waiting);
    if (resized.restart) {
        scheduler_.drop(j);
        lifecycle_.begin_start(j, t, resized.reconfigure);
    }
    serve_requests();
    if (checking_) check_invariants();
}

void ReplicaEngine::stop_job(std::uint32_t j, std::int32_t for_job) {
    const double t = kernel_.now();
    JobState& job = jobs_[j];
    if (for_job >= static_cast<std::int32_t>(jobs_.size()))
        throw std::invalid_argument("stop: for_job " + std::to_string(for_job) + " does not exist");
    if (job.running()) {
        recovery_.release_victim(j, for_job, t);  // accounted as a preemption
    } else if (job.phase() == Phase::Waiting) {
        // A failed job the scheduler sends back to the queue (REQUEUE).
        job.rec->recovery_wait += t - job.life.phase_start;
        reservation_.release_nodes(j, pool_);
        lifecycle_.enqueue(j, t);
    } else {
        throw std::invalid_argument("stop: " + job_name(j) + " is " + phase_name(job.phase()) +
                                    "; only a running job or one waiting after a failure can be stopped");
    }
    serve_requests();
    if (checking_) check_invariants();
}

}  // namespace acesim

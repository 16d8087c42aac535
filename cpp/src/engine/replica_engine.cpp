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
      kernel_(in.jobs, plans.arrivals, in.fleet.enabled ? in.fleet.nodes : 0, in.horizon, max_events, replica,
              checking_),
      pool_(in.fleet, in.policy.quarantine, in.gpus_per_node, plans.jobs),
      scheduler_(in.jobs, in.policy.backfill),
      policy_(in.policy, in.jobs, plans, in.gpus_per_node),
      ledger_(out, replica, in.record_events),
      jobs_(in.jobs, plans, replica),
      reservation_(in.fleet.enabled && in.policy.backfill == Backfill::Easy, in,
                   in.fleet.enabled ? in.fleet.nodes : 0, plans),
      limits_(std::any_of(in.time_limits.begin(), in.time_limits.end(),
                          [](double limit) { return std::isfinite(limit); })),
      storage_(in.fleet.enabled ? in.fleet.storage_bandwidth : 0.0),
      job_draws_(draws_, in, jobs_, levels_),
      due_(jobs_, plans_, levels_, limit_at_, limits_) {}

ReplicaEngine::ReplicaEngine(const SimulationInput& in, const Plans& plans,
                             const std::vector<DistributionView>& views, std::uint32_t replica,
                             std::uint64_t max_events, JobRecord* rows, SimulationOutput& out)
    : ReplicaState(in, plans, views, replica, max_events, rows, out),
      lifecycle_(in_, plans_, kernel_, pool_, scheduler_, ledger_, jobs_, reservation_, limits_, limit_at_,
                 levels_, storage_, outside_, job_draws_, due_, requests_, run_ahead_, current_),
      failures_(in_, plans_, replica_, draws_, pool_, scheduler_, ledger_, jobs_, reservation_, levels_,
                outside_, job_draws_, due_, requests_, *this),
      recovery_(in_, plans_, replica_, draws_, kernel_, pool_, scheduler_, policy_, ledger_, jobs_,
                reservation_, levels_, outside_, job_draws_, due_, requests_, *this),
      checkpoints_(in_, plans_, scheduler_, ledger_, jobs_, levels_, storage_, outside_, job_draws_, due_,
                   requests_),
      elastic_(in_, plans_, pool_, scheduler_, ledger_, jobs_, levels_, job_draws_, due_, requests_) {}

void ReplicaEngine::run() {
    begin();
    const std::size_t n = in_.jobs.size();
    jobs_.reset(n, rows_);  // each job is opened when it is submitted (handle)
    if (!plans_.levels.empty()) levels_.assign(n, Levels{});
    if (limits_) limit_at_.assign(n, std::numeric_limits<double>::infinity());
    // Routine checkpoints run ahead of the clock where nothing but a stop
    // (interrupt, which catches the job up first) or a slow failure's
    // begin (which does too) looks at a running job's progress between its
    // own events: no event log, shared storage or checkpoint-aware
    // preemption (which weighs every candidate's progress); elastic jobs
    // step theirs (begin_compute). An outside scheduler's run (FleetModel)
    // keeps the event log: it steps. (A time limit or a slow failure's
    // detection bounds a stretch like a job-level failure: routine_bound; a
    // drain checkpoint is planned in a stretch as at a compute's begin, and
    // its steps are events.)
    run_ahead_ =
        !ledger_.recording() && !storage_.enabled() && in_.policy.preemption != Preemption::CheckpointAware;
    if (run_ahead_) kernel_.defer_limit();
    // Node failure processes never end: the run ends when every job is done
    // (or closed as unplaceable).
    DueEvent e;
    std::uint32_t polled = 0;
    while (jobs_.ended() < n && kernel_.next(e)) {
        handle(e);
        if (run_ahead_ && kernel_.over_limit()) check_event_limit();
        if (++polled == 512) {
            polled = 0;
            throw_if_cancelled(in_.cancel);
        }
    }
    // What was applied ahead lies within the run (up to the horizon): it happened.
    if (run_ahead_ && kernel_.over_limit()) kernel_.throw_over_limit();
    // The simulated span ends at the last job's end, or at the horizon (the
    // last event's time when there is none and jobs are left).
    const double end = jobs_.ended() == n           ? kernel_.now()
                       : std::isfinite(in_.horizon) ? in_.horizon
                                                    : kernel_.now();
    close(end);
}

void ReplicaEngine::check_event_limit() {
    // The count holds transitions applied ahead of the clock: those past
    // the current event are taken back before the bound is judged.
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
        if (!jobs_.live(j) || !jobs_[j].ahead.active) continue;
        lifecycle_.catch_up(j);
        kernel_.schedule_job(j, due_.next(j));
    }
    if (kernel_.over_limit()) kernel_.throw_over_limit();
}

void ReplicaEngine::serve_requests() {
    // In the order asked; then the nodes whose next event moved (busy
    // clocks, acquisitions).
    for (const KernelRequests::Request& r : requests_.pending()) {
        switch (r.kind) {
            case KernelRequests::Kind::Job:
                kernel_.schedule_job(r.id, r.time);
                break;
            case KernelRequests::Kind::VoidJob:
                kernel_.invalidate_job(r.id);
                break;
            case KernelRequests::Kind::Node:
                kernel_.schedule_node(r.id, r.time);
                break;
        }
    }
    requests_.clear();
    for (std::uint32_t n : pool_.touched()) kernel_.schedule_node(n, pool_.next_event(n));
    pool_.clear_touched();
}

void ReplicaEngine::begin() {
    pool_.init(draws_);
    for (std::uint32_t n = 0; n < pool_.size(); ++n) kernel_.schedule_node(n, pool_.next_event(n));
    if (!pool_.maintenance().empty()) kernel_.plan(pool_.maintenance().times());
}

void ReplicaEngine::open_job(std::uint32_t j) {
    jobs_.open(j);
    job_draws_.renew_failure_clock(j);
}

void ReplicaEngine::handle(const DueEvent& e) {
    if (e.time > kLatestTime) {
        std::string where = "replica " + std::to_string(replica_) + " with " +
                            std::to_string(in_.jobs.size() - jobs_.ended()) + " of " +
                            std::to_string(in_.jobs.size()) + " jobs unfinished";
        if (in_.fleet.enabled) {
            std::uint32_t down = 0, quarantined = 0;
            pool_.count_out_of_service(e.time, down, quarantined);
            where += "; at that moment " + std::to_string(quarantined) + " of " +
                     std::to_string(in_.fleet.nodes) + " nodes were quarantined and " + std::to_string(down) +
                     " under repair";
        }
        throw std::runtime_error(past_latest_time(where));
    }
    pool_.set_now(e.time);
    current_ = e;
    if (e.planned) {
        if (failures_.begin_maintenance(e.id, e.time)) recovery_.dispatch(e.time);
    } else if (e.node) {
        handle_node(e.id, e.time);
    } else {
        if (e.arrival) open_job(e.id);  // its submission
        handle_job(e.id);
    }
    serve_requests();
    ledger_.check_trace_bound();
    if (checking_) check_invariants();
    jobs_.release_done();
}

void ReplicaEngine::handle_node(std::uint32_t n, double t) {
    if (pool_.failure_due(n, t)) {
        after_strike(failures_.node_failure(n, t), t);
        // A node the failure left in service (its cause does not take it to
        // repair, or another node was repaired in its place) keeps its
        // renewal process: the next gap counts from now.
        pool_.renew(n, t, draws_);
    } else if (pool_.return_due(n, t)) {
        // WAIT_REPAIR jobs get their node back first.
        for (std::uint32_t j : failures_.return_to_service(n, t)) {
            switch (failures_.node_back(j, n)) {
                case NodeBack::Resume:
                    recovery_.resume(j, t);
                    break;
                case NodeBack::WaitAgain:
                    recovery_.give_up_if_unplaceable(j, t);
                    break;
                case NodeBack::Nothing:
                    break;
            }
        }
        pool_.settle(n);
        recovery_.dispatch(t);
    } else if (pool_.acquisition_due(n, t)) {
        const std::int32_t whole = failures_.finish_acquisition(n, t);
        if (whole >= 0) {
            recovery_.resume(static_cast<std::uint32_t>(whole), t);
        } else {
            recovery_.dispatch(t);
        }
    }
    requests_.node_at(n, pool_.next_event(n));
}

void ReplicaEngine::after_strike(const Strike& struck, double t) {
    if (outside_.enabled && !struck.out_of_service.empty())
        outside_.report({t, t, ModelEvent::NodeDown, struck.blamed_job, struck.cause, struck.out_of_service});
    if (struck.retired) recovery_.give_up_unplaceable(t);
    if (struck.lost_waits) recovery_.dispatch(t);
    if (struck.detected_now >= 0) phase_end(static_cast<std::uint32_t>(struck.detected_now), t);
}

void ReplicaEngine::handle_job(std::uint32_t j) {
    JobState& job = jobs_[j];
    job.ahead.active = false;  // its own event: what was applied ahead is past
    if (job.ahead.resumes) {   // its stretch reached its look-ahead bound: it goes on
        lifecycle_.resume(j);
        return;
    }
    // At equal times: the phase end, then the time limit, then a job-level failure.
    // With checkpoint levels, a persist's end comes first, then a slow
    // failure's detection (after a phase end at the same time).
    const double limit = limits_ ? limit_at_[j] : std::numeric_limits<double>::infinity();
    const double end = job.life.phase_end;
    if (job.clock.strikes_before(std::min(due_.phase(j), limit))) {
        const double t = job.clock.fail_at;
        after_strike(failures_.job_level_failure(j, t), t);
    } else if (!levels_.empty() &&
               levels_[j].persist_end <= std::min(std::min(end, limit), levels_[j].slow_until)) {
        const double at = levels_[j].persist_end;
        after_write(j, at, checkpoints_.end_persist(j, at));
    } else if (!levels_.empty() && levels_[j].slow_until < end && levels_[j].slow_until <= limit) {
        const double t = levels_[j].slow_until;
        if (failures_.detect_slow_failure(j, t, interrupt(j, t, levels_[j].slow_lost_nodes)))  // ends it
            phase_end(j, t);
    } else if (limit < job.life.phase_end) {
        interrupt(j, limit);
        lifecycle_.stop_at_time_limit(j, limit);
        recovery_.give_up_if_unplaceable(j, limit);
        recovery_.dispatch(limit);
    } else {
        phase_end(j, job.life.phase_end);
    }
}

void ReplicaEngine::phase_end(std::uint32_t j, double t) {
    switch (jobs_[j].life.phase) {
        case Phase::Pending:
            lifecycle_.submit(j, t);
            recovery_.give_up_if_unplaceable(j, t);
            recovery_.dispatch(t);
            break;
        case Phase::Starting:
            if (checkpoints_.phase_transfer_begins(j, t))
                break;  // the load's transfer from the shared storage
            if (lifecycle_.end_start(j, t)) elastic_.take_nodes_back(j, t);
            break;
        case Phase::Computing:
            if (levels_.empty()) {
                lifecycle_.begin_checkpoint(j, t);
            } else {
                checkpoints_.reach_leveled_boundary(j, t);
            }
            break;
        case Phase::Saving:
            if (checkpoints_.phase_transfer_begins(j, t))
                break;  // the write's transfer to the shared storage
            after_write(j, t, checkpoints_.end_checkpoint(j, t));
            break;
        case Phase::Detecting:
            lifecycle_.end_detection(j, t);
            after_recovery(j, t, recovery_.recover(j, t));
            break;
        case Phase::Waiting:  // a wait's only timed end: its re-placement delay is over
            lifecycle_.end_replacement_delay(j, t);
            break;
        case Phase::Reconfiguring:
            lifecycle_.end_reconfiguration(j, t);
            break;
        case Phase::Queued:
        case Phase::Done:
        case Phase::PersistWait:  // ends with the persist (CheckpointWrites::end_persist)
            break;                // no timed end
    }
}

void ReplicaEngine::compute(std::uint32_t j, double t) {
    if (lifecycle_.begin_compute(j, t)) elastic_.take_nodes_back(j, t);
}

void ReplicaEngine::after_write(std::uint32_t j, double t, WriteOutcome outcome) {
    switch (outcome.kind) {
        case WriteOutcome::Handled:
            break;
        case WriteOutcome::Compute:
            compute(j, t);
            break;
        case WriteOutcome::Done:
            finish(j, t);
            break;
        case WriteOutcome::Preempt:
            recovery_.preempt(j, outcome.by, t);
            // Free nodes it counted on may have gone to others meanwhile.
            if (jobs_[outcome.by].pledged == 0)
                recovery_.retry_preemption(static_cast<std::int32_t>(outcome.by), t);
            recovery_.dispatch(t);
            break;
    }
}

double ReplicaEngine::interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes) {
    // (with shared storage no transition runs ahead: nothing to catch up first)
    if (!levels_.empty() && levels_[j].transfer != 0) checkpoints_.end_transfer(j, t, false);
    const double lost = lifecycle_.interrupt(j, t, lost_nodes);
    // A failure keeps an elastic job's claims for its recovery; a stop gives them up.
    if (jobs_[j].narrow || jobs_[j].grow_pending) elastic_.end_narrow(j, lost_nodes != kAllNodes);
    return lost;
}

void ReplicaEngine::finish(std::uint32_t j, double t) {
    const std::int32_t by = jobs_.cancel_deferred_preemption(j);
    if (jobs_[j].narrow || jobs_[j].grow_pending) elastic_.end_narrow(j, false);
    lifecycle_.complete(j, t);
    if (pool_.enabled()) recovery_.dispatch(t);  // its nodes
    recovery_.retry_preemption(by, t);
}

void ReplicaEngine::after_recovery(std::uint32_t j, double t, Recovery decided) {
    switch (decided.kind) {
        case Recovery::Decided:
            break;
        case Recovery::Restart:
            lifecycle_.begin_start(j, t);
            break;
        case Recovery::Requeue:
            lifecycle_.enqueue(j, t);
            recovery_.give_up_if_unplaceable(j, t);
            recovery_.dispatch(t);
            break;
        case Recovery::Shrink:
            lifecycle_.begin_start(j, t, elastic_.shrink(j, t, decided.lost_nodes).reconfigure);
            recovery_.dispatch(t);
            break;
        case Recovery::Wait:
            lifecycle_.wait_for_nodes(j, t);
            recovery_.waiting(j, t);
            break;
    }
}

void ReplicaEngine::close(double end) {
    jobs_.release_done();
    pool_.close(end);
    // (a run's unfinished jobs close at its horizon; a FleetModel's at its clock)
    ledger_.close(in_, plans_, jobs_, levels_, pool_.totals(), kernel_.events(), kernel_.delivered(),
                  checking_, outside_.enabled ? end : in_.horizon);
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
        const JobRecord* row = jobs_.row(j);  // (none before its submission)
        if (row != nullptr && row->status == static_cast<std::uint8_t>(JobStatus::Unplaceable) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, false) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, true))
            throw std::logic_error("invariant: job " + std::to_string(j) + " closed as unplaceable but fits");
        const JobState& job = jobs_[j];
        // (a job in detection keeps the acquisitions of its narrow run for its recovery)
        const bool waits = job.phase() == Phase::Waiting || job.phase() == Phase::Detecting || job.narrow;
        if (pool_.acquiring(j) > 0 && (!waits || job.replacing))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " has cold spares on their way but does not wait for them");
        if (job.narrow && (!job.running() || pool_.has_all_nodes(j)))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " runs narrow but is not running or has all its nodes");
        if (job.replacing &&
            (job.phase() != Phase::Waiting || !pool_.has_all_nodes(j) || scheduler_.waiting(j)))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " pays a re-placement delay without all its nodes");
    }
}

}  // namespace acesim

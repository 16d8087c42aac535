#include "replica_engine.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {
constexpr double kSecondsPerHour = 3600.0;
// A debug build (ACESIM_DEBUG_INVARIANTS=ON) checks every run.
#ifdef ACESIM_CHECK_INVARIANTS
constexpr bool kAlwaysCheck = true;
#else
constexpr bool kAlwaysCheck = false;
#endif
}  // namespace

ReplicaEngine::ReplicaEngine(const SimulationInput& in, const Plans& plans,
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
      scheduler_(in.jobs),
      policy_(in.policy, in.jobs, plans, in.gpus_per_node),
      ledger_(out, replica, in.record_events) {
    for (const JobPlan& p : plans.jobs) widest_ = std::max(widest_, p.nodes);
}

void ReplicaEngine::run() {
    pool_.init(draws_);
    for (std::uint32_t n = 0; n < pool_.size(); ++n) kernel_.schedule_node(n, pool_.next_event(n));
    if (pool_.has_maintenance()) kernel_.plan(pool_.maintenance_times());
    const std::size_t n = in_.jobs.size();
    jobs_.resize(n);
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
        renew_failure_clock(j);
    }
    // Node failure processes never end: the run ends when every job is done
    // (or closed as unplaceable).
    DueEvent e;
    while (jobs_done_ < n && kernel_.next(e)) {
        pool_.set_now(e.time);
        if (e.planned) {
            begin_maintenance(e.id, e.time);
        } else if (e.node) {
            handle_node(e.id, e.time);
        } else {
            handle_job(e.id);
        }
        reschedule_touched_nodes();
        ledger_.check_trace_bound();
        if (checking_) check_invariants();
    }
    // The simulated span ends at the last job's end, or at the horizon (the
    // last event's time when there is none and jobs are left).
    const double end = jobs_done_ == n              ? kernel_.now()
                       : std::isfinite(in_.horizon) ? in_.horizon
                                                    : kernel_.now();
    pool_.close(end);
    ledger_.close(in_, plans_, jobs_, pool_.totals(), kernel_.events(), checking_);
}

// --- draws ----------------------------------------------------------------------

double ReplicaEngine::draw_job(std::uint32_t j, Purpose purpose, std::uint32_t dist) {
    return draws_.law(EntityKind::Job, j, purpose, dist, jobs_[j].draws,
                      static_cast<double>(in_.jobs[j].gpus));
}

void ReplicaEngine::renew_failure_clock(std::uint32_t j) {
    JobState& job = jobs_[j];
    const std::uint32_t law = job_failure_law(in_, j);
    job.fail_draw =
        law == kNoDistribution ? std::numeric_limits<double>::infinity() : draw_job(j, Purpose::Failure, law);
    job.clock.fail_left = job.fail_draw;
}

// --- lifecycle ------------------------------------------------------------------

void ReplicaEngine::schedule_job(std::uint32_t j) {
    const JobState& job = jobs_[j];
    kernel_.schedule_job(j, job.clock.next(job.life.phase_end));
}

void ReplicaEngine::enqueue(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.life.phase = Phase::Queued;
    job.life.phase_start = t;
    scheduler_.enqueue(j);
}

void ReplicaEngine::wait_for_nodes(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.life.phase = Phase::Waiting;
    job.life.phase_start = t;
    scheduler_.wait(j);
    log(j, EventKind::Waiting, t);
}

void ReplicaEngine::handle_job(std::uint32_t j) {
    JobState& job = jobs_[j];
    if (job.clock.strikes_before(job.life.phase_end)) {
        job_level_failure(j, job.clock.fail_at);
    } else {
        on_phase_end(j, job.life.phase_end);
    }
}

void ReplicaEngine::on_phase_end(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    switch (job.life.phase) {
        case Phase::Pending:
            log(j, EventKind::Submit, t);
            enqueue(j, t);
            give_up_if_unplaceable(j, t);
            dispatch(t);
            break;
        case Phase::Starting: {
            const double overhead = t - job.life.phase_start;
            end_start(job.life, *job.rec, t);
            charge_restart_churn(j, overhead);
            begin_compute(j, t);
            break;
        }
        case Phase::Computing: {
            const double save = draw_job(j, Purpose::Save, in_.jobs[j].save);
            begin_save(job.life, t, save);
            if (job.drain_by < job.life.phase_end && save <= plans_.of(j).save_mean) {
                // A drain checkpoint that takes no longer than the mean ends
                // by the maintenance start (whatever the rounding of the start).
                job.life.phase_end = job.drain_by;
            }
            job.drain_by = std::numeric_limits<double>::infinity();
            log(j, EventKind::CheckpointBegin, t);
            schedule_job(j);
            break;
        }
        case Phase::Saving:
            end_checkpoint(j, t);
            break;
        case Phase::Detecting:
            job.rec->detection += t - job.life.phase_start;
            if (job.planned_stop) {
                job.planned_stop = false;  // nothing to detect: it was planned
            } else {
                log(j, EventKind::Detected, t);
            }
            recover(j, t);
            break;
        case Phase::Waiting:
            // A wait's only timed end: its re-placement delay is over.
            if (job.replacing) {
                job.replacing = false;
                begin_start(j, t);
            }
            break;
        case Phase::Queued:
        case Phase::Done:
            break;  // no timed end
    }
}

void ReplicaEngine::end_checkpoint(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const bool done = end_save(job.life, *job.rec, in_.jobs[j].work, t);
    log(j, EventKind::CheckpointEnd, t);
    if (done) {
        const std::int32_t by = cancel_deferred_preemption(j);
        complete(j, t);
        retry_preemption(by, t);  // the finished job's nodes went to dispatch
    } else if (job.preempt_for >= 0) {
        const auto by = static_cast<std::uint32_t>(cancel_deferred_preemption(j));
        if (jobs_[by].phase() == Phase::Waiting && scheduler_.waiting(by)) {
            // At its checkpoint nothing is lost: the write is done and no
            // compute has started.
            job.life.phase = Phase::Computing;
            job.life.phase_start = t;
            preempt(j, by, t);
            // Free nodes it counted on may have gone to others meanwhile.
            if (jobs_[by].pledged == 0) retry_preemption(static_cast<std::int32_t>(by), t);
            dispatch(t);
        } else {
            begin_compute(j, t);  // the preemptor no longer needs the nodes
        }
    } else {
        begin_compute(j, t);
    }
}

void ReplicaEngine::begin_start(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (!job.started) {
        job.started = true;
        job.rec->queue_wait += t - job.life.phase_start;
    } else {
        if (job.life.phase == Phase::Waiting || job.life.phase == Phase::Queued)
            job.rec->recovery_wait += t - job.life.phase_start;
        ++job.rec->restarts;
    }
    const JobSpec& spec = in_.jobs[j];
    if (spec.rule == IntervalRule::Adaptive) {
        const JobProfile& profile = plans_.of(j);
        job.life.interval = adaptive_interval(profile.mtbf, spec.work, profile.save_mean, job.clock.held_time,
                                              job.rec->failures, plans_.jobs[j].interval);
    }
    const double init = draw_job(j, Purpose::Init, spec.init);
    const double load = draw_job(j, Purpose::Load, spec.load);
    acesim::begin_start(job.life, t, init, load);
    job.replaced = false;
    job.run_start = t;
    job.clock.hold(t);
    log(j, EventKind::StartBegin, t);
    schedule_job(j);
}

void ReplicaEngine::begin_compute(std::uint32_t j, double t) {
    acesim::begin_compute(jobs_[j].life, in_.jobs[j].work, t);
    if (pool_.has_maintenance()) plan_drain_checkpoint(j, t);
    log(j, EventKind::ComputeBegin, t);
    schedule_job(j);
}

void ReplicaEngine::plan_drain_checkpoint(std::uint32_t j, double t) {
    // A node of the job enters maintenance at `start`: the job checkpoints
    // at start - (mean save), so that a write of the mean ends by the start.
    // Its segment ends there (an extra checkpoint) when that falls inside
    // this compute phase; otherwise nothing changes (a regular checkpoint
    // comes first, or it is too late and the job loses its work since the
    // last checkpoint when it is stopped).
    JobState& job = jobs_[j];
    const double start = pool_.next_drain(j);
    const double at = start - plans_.of(j).save_mean;
    if (!(t < at && at <= job.life.phase_end)) return;
    if (at < job.life.phase_end) {
        job.life.boundary = job.life.committed + (at - t);
        job.life.phase_end = at;
    }
    job.drain_by = start;
}

void ReplicaEngine::complete(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.clock.unhold(t);
    job.life.phase = Phase::Done;
    ++jobs_done_;
    job.rec->completed = true;
    job.rec->end = t;
    log(j, EventKind::Done, t);
    if (pool_.enabled()) {
        pool_.release_all(j);
        dispatch(t);
    }
}

double ReplicaEngine::interrupt(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const double overhead = t - job.life.phase_start;
    const bool starting = job.life.phase == Phase::Starting;
    const double lost = acesim::interrupt(job.life, *job.rec, t);
    if (starting) charge_restart_churn(j, overhead);
    job.clock.unhold(t);
    job.drain_by = std::numeric_limits<double>::infinity();
    return lost;
}

void ReplicaEngine::charge_restart_churn(std::uint32_t j, double overhead) {
    JobState& job = jobs_[j];
    if (job.churn_owner < 0) return;
    jobs_[job.churn_owner].rec->churn_gpu_hours += in_.jobs[j].gpus * overhead / kSecondsPerHour;
    job.churn_owner = -1;
}

// --- failures -------------------------------------------------------------------

void ReplicaEngine::job_level_failure(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const double drawn = job.fail_draw;
    const std::uint32_t span = pool_.enabled() ? pool_.nodes_of(j).size() : plans_.jobs[j].nodes;
    const auto local = static_cast<std::uint32_t>(
        bounded_index(draws_.bits(EntityKind::Job, j, Purpose::Blame, job.draws), std::max(span, 1u)));
    const std::int32_t cause = draws_.cause(EntityKind::Job, j, job.draws);
    const double detect =
        draws_.detect(cause, EntityKind::Job, j, job.draws, static_cast<double>(in_.jobs[j].gpus));
    const std::uint32_t event = ledger_.next_failure_event();
    if (!pool_.enabled()) {
        ledger_.trace(event, static_cast<std::int32_t>(j), static_cast<std::int32_t>(local), -1, cause, 0u, t,
                      drawn);
        fault(j, t, detect, cause, true);
        return;
    }
    const std::uint32_t blamed = pool_.nodes_of(j)[local];
    strike(event, blamed, -1, cause, 0u, t, drawn, detect, static_cast<std::int32_t>(j));
}

void ReplicaEngine::handle_node(std::uint32_t n, double t) {
    if (pool_.failure_due(n, t)) {
        const double drawn = pool_.fire(n);
        const std::int32_t cause = draws_.cause(EntityKind::Node, n, pool_.counters(n));
        const double detect = draws_.detect(cause, EntityKind::Node, n, pool_.counters(n),
                                            static_cast<double>(in_.gpus_per_node));
        strike(ledger_.next_failure_event(), n, static_cast<std::int32_t>(n), cause, 1u, t, drawn, detect,
               -1);
        // A node the failure left in service (its cause does not take it to
        // repair, or another node was repaired in its place) keeps its
        // renewal process: the next gap counts from now.
        pool_.renew(n, t, draws_);
    } else if (pool_.return_due(n, t)) {
        return_to_service(n, t);
    } else if (pool_.acquisition_due(n, t)) {
        finish_acquisition(n, t);
    }
    kernel_.schedule_node(n, pool_.next_event(n));
}

void ReplicaEngine::strike(std::uint32_t event, std::uint32_t node, std::int32_t origin, std::int32_t cause,
                           std::uint32_t source, double t, double drawn, double detect,
                           std::int32_t blamed_job) {
    const CauseSpec* spec = draws_.cause_spec(cause);
    const bool down = spec ? spec->node_down : true;
    const std::uint32_t width = spec ? std::max(spec->nodes, 1u) : 1u;
    const std::uint32_t first = (node / width) * width;
    const std::uint32_t last = std::min(first + width, in_.fleet.nodes);
    hit_.clear();
    // One trace row per job the event interrupts (counted in its failures),
    // and one row with job -1 for each struck node none of whose jobs it
    // interrupts (idle, or its jobs were already down).
    auto hit_job = [&](std::uint32_t j, std::uint32_t m) {
        if (std::find(hit_.begin(), hit_.end(), j) != hit_.end()) return true;
        if (!jobs_[j].running()) return false;
        hit_.push_back(j);
        ledger_.trace(event, static_cast<std::int32_t>(j), static_cast<std::int32_t>(m), origin, cause,
                      source, t, drawn);
        fault(j, t, detect, cause, static_cast<std::int32_t>(j) == blamed_job);
        return true;
    };
    if (blamed_job >= 0) hit_job(static_cast<std::uint32_t>(blamed_job), node);
    bool retired = false;
    bool redispatch = false;  // a waiting job lost a cold spare on its way, or its re-placement delay
    for (std::uint32_t m = first; m < last; ++m) {
        if (!pool_.node(m).in_service) continue;  // a node out of service cannot fail
        pool_.count_failure(m, t);
        const bool acquiring = pool_.node(m).acquiring_for >= 0;
        const std::vector<std::uint32_t> on = pool_.node(m).jobs;  // fault() may detach
        bool interrupted = false;
        std::int32_t failed = -1;  // the job whose failure the diagnosis follows
        for (std::uint32_t j : on) {
            const bool hit = hit_job(j, m);
            if (hit && failed < 0) failed = static_cast<std::int32_t>(j);
            interrupted = hit || interrupted;
        }
        if (m == node && blamed_job >= 0) failed = blamed_job;
        if (!interrupted)
            ledger_.trace(event, -1, static_cast<std::int32_t>(m), origin, cause, source, t, drawn);
        // The node that goes to repair: m, or under misdiagnosis another node
        // of the failed job (m then stays in service, still faulty).
        std::uint32_t repaired = m;
        if (down) {
            if (failed >= 0)
                repaired = pool_.diagnosed(m, static_cast<std::uint32_t>(failed), first, last, draws_);
            if (repaired != m) {
                // Pulling a node for repair interrupts every job on it.
                for (std::uint32_t j : std::vector<std::uint32_t>(pool_.node(repaired).jobs))
                    hit_job(j, repaired);
            }
            pool_.send_to_repair(repaired, t, detect, draws_);
            kernel_.schedule_node(repaired, pool_.next_event(repaired));
        }
        // Quarantine counts the failure against the node diagnosed.
        if (pool_.note_failure_for_quarantine(repaired, t)) {
            kernel_.schedule_node(repaired, pool_.next_event(repaired));
            retired = retired || pool_.node(repaired).retired;
        }
        // A cold spare out of service is no longer on its way: its job, still
        // waiting, looks for another node.
        if (acquiring && !pool_.node(m).in_service) redispatch = true;
        // A job that was waiting while holding this node now lacks it.
        if (pool_.node(repaired).in_service) continue;
        for (std::uint32_t j : std::vector<std::uint32_t>(pool_.node(repaired).jobs)) {
            if (jobs_[j].phase() == Phase::Waiting) redispatch = lose_held_node(j, repaired, t) || redispatch;
        }
    }
    if (retired) give_up_unplaceable(t);
    if (redispatch) dispatch(t);
}

bool ReplicaEngine::lose_held_node(std::uint32_t j, std::uint32_t m, double t) {
    // Job j was waiting while holding node m, out of service now: it lacks it.
    JobState& job = jobs_[j];
    pool_.detach(j, m);
    if (job.decision == Replacement::WaitRepair && pool_.under_repair_only(m, t)) pool_.reserve(j, m);
    if (!job.replacing) return false;
    cancel_replacement_delay(j);
    return true;
}

void ReplicaEngine::fault(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level) {
    JobState& job = jobs_[j];
    if (!job.running()) return;  // detecting already, waiting, queued or done
    const std::int32_t preemptor = cancel_deferred_preemption(j);
    job.lost_work = interrupt(j, t);
    job.cause = cause;
    ++job.rec->failures;
    log(j, EventKind::Failure, t);
    // The sources are independent: only a job-level failure renews the
    // job-level process; after a node-level one its held-time clock goes on.
    if (job_level) renew_failure_clock(j);
    job.fault_time = t;
    job.life.phase = Phase::Detecting;
    job.life.phase_start = t;
    job.life.phase_end = t + detect;
    if (detect == 0.0 && !pool_.enabled()) {
        on_phase_end(j, t);  // seen at once and nothing to wait for
    } else {
        schedule_job(j);
    }
    retry_preemption(preemptor, t);  // j is no longer a candidate: it is down
}

void ReplicaEngine::return_to_service(std::uint32_t n, double t) {
    // WAIT_REPAIR jobs get their node back first.
    for (std::uint32_t j : pool_.return_to_service(n, t, draws_)) {
        JobState& job = jobs_[j];
        pool_.attach(j, n);
        if (ready(j) && job.phase() == Phase::Waiting) {
            if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
            resume(j, t);  // its own node back: a re-placement only if it took others
        } else if (pool_.reserved(j) == 0 && job.phase() == Phase::Waiting && !scheduler_.waiting(j)) {
            scheduler_.wait(j);
            give_up_if_unplaceable(j, t);
        }
    }
    pool_.settle(n);
    dispatch(t);
}

// --- planned maintenance ----------------------------------------------------------

void ReplicaEngine::begin_maintenance(std::uint32_t k, double t) {
    const std::vector<NodePool::Drain>& drains = pool_.maintenance_at(k);
    bool redispatch = false;  // a waiting job lost a cold spare on its way, or its re-placement delay
    for (const NodePool::Drain& d : drains) {
        // A cold spare drained during its acquisition is no longer on its way.
        redispatch = pool_.node(d.node).acquiring_for >= 0 || redispatch;
        pool_.begin_maintenance(d.node, t, d.until);
        kernel_.schedule_node(d.node, pool_.next_event(d.node));
    }
    // Every node of the windows has left service before any job recovers,
    // so none is re-placed onto a node drained at the same time.
    for (const NodePool::Drain& d : drains) {
        const std::uint32_t m = d.node;
        for (std::uint32_t j : std::vector<std::uint32_t>(pool_.node(m).jobs)) {
            JobState& job = jobs_[j];
            if (job.running()) {
                planned_stop(j, t);
            } else if (job.phase() == Phase::Waiting) {
                redispatch = lose_held_node(j, m, t) || redispatch;
            }
        }
    }
    if (redispatch) dispatch(t);
}

void ReplicaEngine::planned_stop(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    cancel_deferred_preemption(j);
    job.lost_work = interrupt(j, t);
    job.cause = -1;
    ++job.rec->planned_interruptions;
    log(j, EventKind::Maintenance, t);
    job.fault_time = t;
    job.planned_stop = true;
    // It recovers under the re-placement policy as after a failure seen at
    // once (once every node of the window is out).
    job.life.phase = Phase::Detecting;
    job.life.phase_start = t;
    job.life.phase_end = t;
    schedule_job(j);
}

void ReplicaEngine::reschedule_touched_nodes() {
    for (std::uint32_t n : pool_.touched()) kernel_.schedule_node(n, pool_.next_event(n));
    pool_.clear_touched();
}

// --- recovery -------------------------------------------------------------------

bool ReplicaEngine::place(std::uint32_t j, bool recovering) {
    if (!pool_.enabled()) return true;
    if (pool_.missing(j) == 0 && pool_.acquiring(j) == 0) return true;
    if (recovering) return take_for_recovery(j);
    if (in_.policy.place) {
        const int chosen = place_outside(j, false);
        if (chosen >= 0) return chosen == 1 || pool_.take_free(j);
        return false;
    }
    return pool_.take_free(j);
}

bool ReplicaEngine::take_for_recovery(std::uint32_t j) {
    const std::uint32_t before = pool_.nodes_of(j).size() + pool_.acquiring(j);
    // The place callback chooses among the nodes available now; cold spares
    // (and trading acquisitions in flight) are the built-in choice.
    const int chosen =
        in_.policy.place && pool_.acquiring(j) == 0 && pool_.missing(j) > 0 ? place_outside(j, true) : 0;
    bool ready = chosen == 1;
    // Nodes whose next event changed are rescheduled after the event.
    if (chosen != 1) ready = pool_.take_for_recovery(j, draws_);
    if (pool_.nodes_of(j).size() + pool_.acquiring(j) > before) jobs_[j].replaced = true;
    return ready;
}

void ReplicaEngine::resume(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (job.replaced && in_.policy.replacement_delay != kNoDistribution) {
        // Host selection / rescheduling: once per re-placement, before init + load.
        const double delay = draw_job(j, Purpose::Replace, in_.policy.replacement_delay);
        job.replaced = false;
        if (delay > 0.0) {
            job.replacing = true;
            job.life.phase_end = t + delay;
            schedule_job(j);
            return;
        }
    }
    begin_start(j, t);
}

void ReplicaEngine::cancel_replacement_delay(std::uint32_t j) {
    // A node it holds went down during the delay: it waits for nodes again
    // and pays a fresh delay once it has them.
    JobState& job = jobs_[j];
    job.replacing = false;
    job.replaced = true;
    kernel_.invalidate_job(j);
    if (pool_.reserved(j) == 0 && !scheduler_.waiting(j)) scheduler_.wait(j);
}

void ReplicaEngine::finish_acquisition(std::uint32_t n, double t) {
    const std::uint32_t j = pool_.finish_acquisition(n);
    if (ready(j)) {
        if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
        resume(j, t);
        return;
    }
    dispatch(t);  // it still lacks a node (one it held went down meanwhile)
}

int ReplicaEngine::place_outside(std::uint32_t j, bool recovering) {
    const std::uint32_t need = pool_.missing(j);
    const double t = kernel_.now();
    pool_.candidates(j, recovering, t, candidates_);
    const std::vector<std::uint32_t>& nodes = candidates_.nodes;
    // Cannot start now, whoever chooses (a smaller job needs one node that fits).
    if (nodes.size() < need) return -1;
    const PlacementView view{
        t,         replica_, j, in_.jobs[j].gpus, in_.jobs[j].priority, need, plans_.jobs[j].gpus_per_node,
        recovering};
    std::vector<std::uint32_t> chosen;
    if (!in_.policy.place(view, candidates_, chosen)) return 0;
    if (chosen.size() != need)
        throw std::invalid_argument("place returned " + std::to_string(chosen.size()) + " nodes for job " +
                                    std::to_string(j) + "; it needs " + std::to_string(need));
    std::vector<std::uint32_t> sorted = chosen;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t k = 0; k < sorted.size(); ++k) {
        const bool known = std::binary_search(nodes.begin(), nodes.end(), sorted[k]);
        if (!known || (k > 0 && sorted[k] == sorted[k - 1]))
            throw std::invalid_argument("place returned node " + std::to_string(sorted[k]) +
                                        ", which is not a free node that fits job " + std::to_string(j) +
                                        " (or is given twice)");
    }
    for (std::uint32_t n : chosen) pool_.take_chosen(j, n);
    return 1;
}

void ReplicaEngine::recover(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (!pool_.enabled()) {
        // Replacements are always available: a fault that takes its node
        // down re-places the job (on a node it did not hold).
        const CauseSpec* cause = draws_.cause_spec(job.cause);
        if (in_.policy.replacement_delay != kNoDistribution && (cause == nullptr || cause->node_down)) {
            job.replaced = true;
            job.life.phase = Phase::Waiting;
            job.life.phase_start = t;
            resume(j, t);
            return;
        }
        begin_start(j, t);
        return;
    }
    std::vector<std::uint32_t> failed;
    double repair_remaining = 0.0;
    for (std::uint32_t n : pool_.nodes_of(j)) {
        const NodeState& node = pool_.node(n);
        if (!node.in_service) {
            failed.push_back(n);
            repair_remaining = std::max(repair_remaining, pool_.return_time(n) - t);
        }
    }
    const Replacement decision = policy_.decide(j, t, replica_, jobs_, pool_,
                                                static_cast<std::uint32_t>(failed.size()), repair_remaining);
    job.decision = decision;
    job.life.phase = Phase::Waiting;  // for the recovery_wait accounting of begin_start
    job.life.phase_start = t;
    if (decision == Replacement::Requeue) {
        pool_.release_all(j);
        enqueue(j, t);
        give_up_if_unplaceable(j, t);
        dispatch(t);
        return;
    }
    if (failed.empty()) {
        begin_start(j, t);  // nothing went down (a software fault): restart in place
        return;
    }
    // WAIT_REPAIR waits for nodes under repair; a quarantined node is
    // replaced like under SPARES.
    for (std::uint32_t n : failed) {
        pool_.detach(j, n);
        if (decision == Replacement::WaitRepair && pool_.under_repair_only(n, t)) pool_.reserve(j, n);
    }
    if (pool_.reserved(j) > 0) {
        log(j, EventKind::Waiting, t);
        if (give_up_if_unplaceable(j, t)) dispatch(t);
        return;  // return_to_service restarts it, or queues it for the rest
    }
    if (place(j, true)) {
        resume(j, t);
        return;
    }
    wait_for_nodes(j, t);
    if (!give_up_if_unplaceable(j, t) && decision == Replacement::PreemptLower) preempt_lower(j, t);
    dispatch(t);
}

std::int32_t ReplicaEngine::cancel_deferred_preemption(std::uint32_t v) {
    JobState& victim = jobs_[v];
    const std::int32_t by = victim.preempt_for;
    if (by < 0) return -1;
    jobs_[by].pledged -= plans_.jobs[v].nodes;
    victim.preempt_for = -1;
    return by;
}

void ReplicaEngine::retry_preemption(std::int32_t by, double t) {
    if (by < 0) return;
    const auto j = static_cast<std::uint32_t>(by);
    if (jobs_[j].phase() != Phase::Waiting || !scheduler_.waiting(j) || pool_.reserved(j) > 0) return;
    if (place(j, true)) {
        scheduler_.stop_waiting(j);
        resume(j, t);
    } else {
        preempt_lower(j, t);
    }
}

void ReplicaEngine::preempt_lower(std::uint32_t j, double t) {
    // Victims for the nodes still lacking after the free ones the job may
    // take now and those that deferred victims will give.
    const std::uint32_t missing = pool_.missing(j);
    const std::uint32_t covered = pool_.free_for_recovery(j) + jobs_[j].pledged;
    if (missing <= covered) return;
    for (const Victim& v : policy_.victims(j, t, missing - covered, jobs_)) {
        if (v.defer) {
            jobs_[v.job].preempt_for = static_cast<std::int32_t>(j);
            jobs_[j].pledged += plans_.jobs[v.job].nodes;
        } else {
            preempt(v.job, j, t);
        }
    }
}

void ReplicaEngine::preempt(std::uint32_t v, std::uint32_t by, double t) {
    JobState& victim = jobs_[v];
    const double lost = interrupt(v, t);
    jobs_[by].rec->churn_gpu_hours += in_.jobs[v].gpus * lost / kSecondsPerHour;
    victim.churn_owner = static_cast<std::int32_t>(by);
    ++victim.rec->preemptions;
    kernel_.invalidate_job(v);  // its pending phase end is void
    log(v, EventKind::Preempted, t);
    pool_.release_all(v);
    enqueue(v, t);
    give_up_if_unplaceable(v, t);
    // The preemptor takes the freed nodes before anyone else.
    JobState& job = jobs_[by];
    if (job.phase() == Phase::Waiting && scheduler_.waiting(by) && pool_.reserved(by) == 0 &&
        place(by, true)) {
        scheduler_.stop_waiting(by);
        resume(by, t);
    }
}

// --- unplaceable jobs ----------------------------------------------------------

bool ReplicaEngine::give_up_if_unplaceable(std::uint32_t j, double t) {
    if (!pool_.enabled() || pool_.retired() == 0) return false;
    const Phase phase = jobs_[j].phase();
    if (phase != Phase::Queued && phase != Phase::Waiting) return false;
    if (!pool_.can_never_place(plans_.jobs[j].nodes, phase == Phase::Queued)) return false;
    abandon(j, t);
    return true;
}

void ReplicaEngine::give_up_unplaceable(double t) {
    // Jobs in detection are judged when they recover, pending ones when
    // they are submitted, running ones when they next need nodes.
    if (!pool_.can_never_place(widest_, true)) return;  // the stricter rule: nobody is stranded
    bool any = false;
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) any = give_up_if_unplaceable(j, t) || any;
    if (any) dispatch(t);
}

void ReplicaEngine::abandon(std::uint32_t j, double t) {
    // The row is closed now, as at a horizon (the wait so far is queue or
    // recovery wait), so its wall is finite and its buckets add up.
    JobState& job = jobs_[j];
    scheduler_.drop(j);
    pool_.unreserve_all(j);
    pool_.cancel_acquisitions(j);
    pool_.release_all(j);
    kernel_.invalidate_job(j);
    job.replacing = false;
    job.replaced = false;
    close_at(job.life, *job.rec, job.started, t);
    job.rec->status = static_cast<std::uint32_t>(JobStatus::Unplaceable);
    job.life.phase = Phase::Done;
    ++jobs_done_;
    log(j, EventKind::Unplaceable, t);
}

void ReplicaEngine::check_invariants() const {
    if (!pool_.enabled()) return;
    pool_.check_invariants();
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
        if (jobs_[j].phase() == Phase::Done && !pool_.nodes_of(j).empty())
            throw std::logic_error("invariant: finished job still holds nodes");
        if (jobs_[j].phase() == Phase::Done && (scheduler_.queued(j) || scheduler_.waiting(j)))
            throw std::logic_error("invariant: finished job " + std::to_string(j) + " is still scheduled");
        if (jobs_[j].rec->status == static_cast<std::uint32_t>(JobStatus::Unplaceable) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, false) &&
            !pool_.can_never_place(plans_.jobs[j].nodes, true))
            throw std::logic_error("invariant: job " + std::to_string(j) + " closed as unplaceable but fits");
        const JobState& job = jobs_[j];
        if (pool_.acquiring(j) > 0 && (job.phase() != Phase::Waiting || job.replacing))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " has cold spares on their way but does not wait for them");
        if (job.replacing && (job.phase() != Phase::Waiting || !ready(j) || scheduler_.waiting(j)))
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " pays a re-placement delay without all its nodes");
    }
}

}  // namespace acesim

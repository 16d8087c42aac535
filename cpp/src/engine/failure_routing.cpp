#include "failure_routing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "replica_engine.hpp"

namespace acesim {
const Strike& FailureRouting::job_level_failure(std::uint32_t j, double t) {
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
        const CauseSpec* spec = draws_.cause_spec(cause);
        const std::uint32_t width = spec ? (spec->node_scope ? std::max(spec->nodes, 1u) : 0u) : 1u;
        struck_.clear();  // (nothing for the engine to act on without a fleet)
        fault(j, t, detect, cause, true, std::min(width, plans_.jobs[j].nodes));
        return struck_;
    }
    const std::uint32_t blamed = pool_.nodes_of(j)[local];
    return strike(event, blamed, -1, cause, 0u, t, drawn, detect, static_cast<std::int32_t>(j));
}

const Strike& FailureRouting::node_failure(std::uint32_t n, double t) {
    const double drawn = pool_.fire(n);
    const std::int32_t cause = draws_.cause(EntityKind::Node, n, pool_.counters(n));
    const double detect =
        draws_.detect(cause, EntityKind::Node, n, pool_.counters(n), static_cast<double>(in_.gpus_per_node));
    return strike(ledger_.next_failure_event(), n, static_cast<std::int32_t>(n), cause, 1u, t, drawn, detect,
                  -1);
}

const Strike& FailureRouting::strike(std::uint32_t event, std::uint32_t node, std::int32_t origin,
                                     std::int32_t cause, std::uint32_t source, double t, double drawn,
                                     double detect, std::int32_t blamed_job) {
    const CauseSpec* spec = draws_.cause_spec(cause);
    const bool down = spec ? spec->node_down : true;
    const std::uint32_t width = spec ? std::max(spec->nodes, 1u) : 1u;
    const std::uint32_t first = (node / width) * width;
    const std::uint32_t last = std::min(first + width, in_.fleet.nodes);
    struck_.clear();
    struck_.blamed_job = blamed_job;
    struck_.cause = cause;
    std::vector<std::uint32_t>& hit = struck_.interrupted;
    std::vector<std::uint32_t>& downed = struck_.out_of_service;
    // One trace row per job the event interrupts (counted in its failures),
    // and one row with job -1 for each struck node none of whose jobs it
    // interrupts (idle, or its jobs were already down).
    auto hit_job = [&](std::uint32_t j, std::uint32_t m) {
        if (std::find(hit.begin(), hit.end(), j) != hit.end()) return true;
        if (!jobs_[j].interruptible()) return false;
        hit.push_back(j);
        ledger_.trace(event, static_cast<std::int32_t>(j), static_cast<std::int32_t>(m), origin, cause,
                      source, t, drawn);
        fault(j, t, detect, cause, static_cast<std::int32_t>(j) == blamed_job,
              levels_.empty() ? 0u : nodes_taken(j, cause, first, last));
        return true;
    };
    if (blamed_job >= 0) hit_job(static_cast<std::uint32_t>(blamed_job), node);
    bool& retired = struck_.retired;
    bool& redispatch = struck_.lost_waits;
    for (std::uint32_t m = first; m < last; ++m) {
        if (!pool_.node(m).in_service) continue;  // a node out of service cannot fail
        pool_.count_failure(m, t);
        const bool acquiring = pool_.node(m).acquiring_for >= 0;
        const std::vector<std::uint32_t> on = pool_.node(m).jobs.copy();  // fault() may detach
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
                for (std::uint32_t j : pool_.node(repaired).jobs.copy()) hit_job(j, repaired);
            }
            pool_.send_to_repair(repaired, t, detect, draws_);
            requests_.node_at(repaired, pool_.next_event(repaired));
            downed.push_back(repaired);
        }
        // Quarantine counts the failure against the node diagnosed.
        if (pool_.note_failure_for_quarantine(repaired, t)) {
            requests_.node_at(repaired, pool_.next_event(repaired));
            quarantined_.push_back(repaired);
            retired = retired || pool_.node(repaired).retired;
            if (std::find(downed.begin(), downed.end(), repaired) == downed.end()) downed.push_back(repaired);
        }
        // A cold spare out of service is no longer on its way: its job, still
        // waiting, looks for another node.
        if (acquiring && !pool_.node(m).in_service) redispatch = true;
        // A job that was waiting while holding this node now lacks it.
        if (pool_.node(repaired).in_service) continue;
        for (std::uint32_t j : pool_.node(repaired).jobs.copy()) {
            if (jobs_[j].phase() == Phase::Waiting) redispatch = lose_held_node(j, repaired, t) || redispatch;
        }
    }
    for (std::uint32_t n : downed) ledger_.node_event(n, 0, t, event, cause);
    for (std::uint32_t n : quarantined_) {  // after the node's kNodeDown row of this event
        const NodeState& q = pool_.node(n);
        ledger_.node_event(n, q.retired ? kNodeRetired : kNodeQuarantined, t, event, cause,
                           q.quarantined_until);
    }
    quarantined_.clear();
    return struck_;
}

bool FailureRouting::lose_held_node(std::uint32_t j, std::uint32_t m, double t) {
    // Job j was waiting while holding node m, out of service now: it lacks it.
    JobState& job = jobs_[j];
    pool_.detach(j, m);
    if (job.decision == Replacement::WaitRepair && pool_.under_repair_only(m, t)) pool_.reserve(j, m);
    if (!job.replacing) return false;
    cancel_replacement_delay(j);
    return true;
}

void FailureRouting::cancel_replacement_delay(std::uint32_t j) {
    JobState& job = jobs_[j];
    job.replacing = false;
    job.replaced = true;
    requests_.void_job(j);
    if (pool_.reserved(j) == 0 && !scheduler_.waiting(j)) scheduler_.wait(j);
}

std::uint32_t FailureRouting::nodes_taken(std::uint32_t j, std::int32_t cause, std::uint32_t first,
                                          std::uint32_t last) const {
    const CauseSpec* spec = draws_.cause_spec(cause);
    if (spec && !spec->node_scope) return 0;
    std::uint32_t taken = 0;
    for (std::uint32_t n : pool_.nodes_of(j)) taken += n >= first && n < last ? 1u : 0u;
    return taken;
}

void FailureRouting::fault(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level,
                           std::uint32_t lost_nodes) {
    JobState& job = jobs_[j];
    if (!job.interruptible()) return;  // detecting already (or slow), waiting, queued or done
    const CauseSpec* spec = draws_.cause_spec(cause);
    if (spec && spec->slowdown > 0.0 && detect > 0.0) {
        begin_slow_failure(j, t, detect, cause, job_level, lost_nodes);
        return;
    }
    const std::int32_t preemptor = jobs_.cancel_deferred_preemption(j);
    job.lost_work = engine_.interrupt(j, t, lost_nodes);
    job.cause = cause;
    ++job.rec->failures;
    count_stall(j);
    ledger_.log(j, EventKind::Failure, t, jobs_[j]);
    // The sources are independent: only a job-level failure renews the
    // job-level process; after a node-level one its held-time clock goes on.
    if (job_level) job_draws_.renew_failure_clock(j);
    // It keeps its nodes until it recovers: estimated as a restart at once.
    if (reservation_.enabled()) reservation_.set_end(j, t + reservation_.run_estimate(j, jobs_[j].life));
    job.fault_time = t;
    job.life.phase = Phase::Detecting;
    job.life.phase_start = t;
    job.life.phase_end = t + detect;
    // Seen at once without a fleet (nothing to wait for): the engine ends
    // its detection after the strike (no preemption is deferred without one).
    if (detect == 0.0 && detected_at(j)) struck_.detected_now = static_cast<std::int32_t>(j);
    if (detect != 0.0) requests_.job_at(j, due_.next(j));
    engine_.retry_preemption(preemptor, t);  // j is no longer a candidate: it is down
}

void FailureRouting::count_stall(std::uint32_t j) {
    // Durable progress: the durable level's with checkpoint levels, else the
    // last checkpoint's (every synchronous checkpoint is durable).
    JobState& job = jobs_[j];
    const double durable = levels_.empty() ? job.life.committed : levels_[j].durable;
    if (job.stall.interrupted(durable, in_.max_stalled_failures))
        throw stalled_job_error(j, in_.max_stalled_failures, replica_);
}

bool FailureRouting::detected_at(std::uint32_t j) {
    if (!pool_.enabled()) return true;  // seen at once and nothing to wait for
    requests_.job_at(j, due_.next(j));
    return false;
}

void FailureRouting::begin_slow_failure(std::uint32_t j, double t, double detect, std::int32_t cause,
                                        bool job_level, std::uint32_t lost_nodes) {
    // The job goes on at the cause's rate until the fault is found; no other
    // failure can strike it meanwhile (its failure clock stops, as in detection).
    engine_.catch_up(j);  // (its rate changes now)
    JobState& job = jobs_[j];
    const std::int32_t preemptor = jobs_.cancel_deferred_preemption(j);
    job.slow = true;
    levels_[j].slow_until = t + detect;
    levels_[j].slow_lost_nodes = lost_nodes;
    job.cause = cause;
    job.fault_time = t;
    ++job.rec->failures;
    count_stall(j);
    ledger_.log(j, EventKind::Failure, t, jobs_[j]);
    job.clock.unhold(t);
    if (job_level) job_draws_.renew_failure_clock(j);
    Levels& L = levels_[j];
    levels_set_rates(job.life, L, *job.rec, t, L.width_rate, draws_.cause_spec(cause)->slowdown);
    requests_.job_at(j, due_.next(j));
    engine_.retry_preemption(preemptor, t);
}

bool FailureRouting::detect_slow_failure(std::uint32_t j, double t, double lost) {
    JobState& job = jobs_[j];
    job.lost_work = lost;
    if (reservation_.enabled()) reservation_.set_end(j, t + reservation_.run_estimate(j, jobs_[j].life));
    job.life.phase = Phase::Detecting;
    job.life.phase_start = t;
    job.life.phase_end = t;
    return detected_at(j);
}

std::vector<std::uint32_t> FailureRouting::return_to_service(std::uint32_t n, double t) {
    ledger_.node_event(n, 1, t, 0xFFFFFFFFu, -1);
    if (outside_.enabled) outside_.report({t, t, ModelEvent::NodeUp, -1, -1, {n}});
    return pool_.return_to_service(n, t, draws_);
}

NodeBack FailureRouting::node_back(std::uint32_t j, std::uint32_t n) {
    JobState& job = jobs_[j];
    pool_.attach(j, n);
    const bool waits = job.waiting_for_nodes();
    if (pool_.has_all_nodes(j) && waits) {
        if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
        return NodeBack::Resume;  // its own node back: a re-placement only if it took others
    }
    if (pool_.reserved(j) == 0 && waits && !scheduler_.waiting(j)) {
        scheduler_.wait(j);
        return NodeBack::WaitAgain;
    }
    return NodeBack::Nothing;
}

bool FailureRouting::begin_maintenance(std::uint32_t k, double t) {
    const std::vector<MaintenanceCalendar::Drain>& drains = pool_.maintenance().at(k);
    bool redispatch = false;  // a waiting job lost a cold spare on its way, or its re-placement delay
    for (const MaintenanceCalendar::Drain& d : drains) {
        // A cold spare drained during its acquisition is no longer on its way.
        redispatch = pool_.node(d.node).acquiring_for >= 0 || redispatch;
        pool_.begin_maintenance(d.node, t, d.until);
        requests_.node_at(d.node, pool_.next_event(d.node));
        downed_.push_back(d.node);
        ledger_.node_event(d.node, 2, t, 0xFFFFFFFFu, -1);
    }
    if (outside_.enabled && !downed_.empty()) outside_.report({t, t, ModelEvent::NodeDown, -1, -1, downed_});
    downed_.clear();
    // Every node of the windows has left service before any job recovers,
    // so none is re-placed onto a node drained at the same time.
    for (const MaintenanceCalendar::Drain& d : drains) {
        const std::uint32_t m = d.node;
        for (std::uint32_t j : pool_.node(m).jobs.copy()) {
            JobState& job = jobs_[j];
            if (job.running()) {
                planned_stop(j, t);
            } else if (job.phase() == Phase::Waiting) {
                redispatch = lose_held_node(j, m, t) || redispatch;
            }
        }
    }
    return redispatch;
}

void FailureRouting::planned_stop(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    jobs_.cancel_deferred_preemption(j);
    job.lost_work = engine_.interrupt(j, t);
    job.cause = -1;
    ++job.rec->planned_interruptions;
    ledger_.log(j, EventKind::Maintenance, t, jobs_[j]);
    // It keeps its nodes until it recovers: estimated as a restart at once.
    if (reservation_.enabled()) reservation_.set_end(j, t + reservation_.run_estimate(j, jobs_[j].life));
    job.fault_time = t;
    job.planned_stop = true;
    // It recovers under the re-placement policy as after a failure seen at
    // once (once every node of the window is out).
    job.life.phase = Phase::Detecting;
    job.life.phase_start = t;
    job.life.phase_end = t;
    requests_.job_at(j, due_.next(j));
}

std::int32_t FailureRouting::finish_acquisition(std::uint32_t n, double /*t*/) {
    const std::uint32_t j = pool_.rules().finish_acquisition(n);
    // A job in detection (it failed again while the spare was on its way)
    // finds the node when it recovers.
    if (jobs_[j].waiting_for_nodes() && pool_.has_all_nodes(j)) {
        if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
        return static_cast<std::int32_t>(j);
    }
    return -1;  // it still lacks a node (one it held went down meanwhile)
}

}  // namespace acesim

#include "recovery_actions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "replica_engine.hpp"

namespace acesim {
namespace {
constexpr double kSecondsPerHour = 3600.0;
}  // namespace

bool RecoveryActions::place(std::uint32_t j, bool recovering) {
    if (!pool_.enabled()) return true;
    if (pool_.missing(j) == 0 && pool_.acquiring(j) == 0) return true;
    if (recovering) return take_for_recovery(j);
    if (in_.policy.place) {
        const int chosen = place_outside(j, false);
        if (chosen >= 0) return chosen == 1 || pool_.rules().take_free(j);
        return false;
    }
    return pool_.rules().take_free(j);
}

bool RecoveryActions::take_for_recovery(std::uint32_t j) {
    const std::uint32_t before = pool_.nodes_of(j).size() + pool_.acquiring(j);
    // The place callback chooses among the nodes available now; cold spares
    // (and trading acquisitions in flight) are the built-in choice.
    const int chosen =
        in_.policy.place && pool_.acquiring(j) == 0 && pool_.missing(j) > 0 ? place_outside(j, true) : 0;
    bool ready = chosen == 1;
    // Nodes whose next event changed are rescheduled after the event.
    if (chosen != 1) ready = pool_.rules().take_for_recovery(j, draws_);
    if (pool_.nodes_of(j).size() + pool_.acquiring(j) > before) jobs_[j].replaced = true;
    return ready;
}

void RecoveryActions::resume(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (job.narrow) {
        engine_.grow(j, t);  // an elastic job running narrow has its nodes back
        return;
    }
    if (job.replaced && in_.policy.replacement_delay != kNoDistribution) {
        // Host selection / rescheduling: once per re-placement, before init + load.
        const double delay = job_draws_.law(j, Purpose::Replace, in_.policy.replacement_delay);
        job.replaced = false;
        if (delay > 0.0) {
            job.replacing = true;
            job.life.phase_end = t + delay;
            requests_.job_at(j, due_.next(j));
            return;
        }
    }
    engine_.begin_start(j, t);
}

int RecoveryActions::place_outside(std::uint32_t j, bool recovering) {
    const std::uint32_t need = pool_.missing(j);
    const double t = kernel_.now();
    pool_.rules().candidates(j, recovering, t, candidates_);
    // EASY, a start from the queue: only the nodes that keep the head's reservation.
    if (!recovering && reservation_.enabled()) keep_candidates(j);
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

void RecoveryActions::keep_candidates(std::uint32_t j) {
    std::vector<std::uint32_t> kept = candidates_.nodes;
    reservation_.keep_only(j, kept, pool_);
    if (kept.size() == candidates_.nodes.size()) return;
    // Keep the history columns in step with the ids left (both ascending).
    std::size_t k = 0;
    for (std::size_t i = 0; i < candidates_.nodes.size(); ++i) {
        if (k < kept.size() && candidates_.nodes[i] == kept[k]) {
            candidates_.nodes[k] = candidates_.nodes[i];
            candidates_.failures[k] = candidates_.failures[i];
            candidates_.since_failure[k] = candidates_.since_failure[i];
            ++k;
        }
    }
    candidates_.nodes.resize(k);
    candidates_.failures.resize(k);
    candidates_.since_failure.resize(k);
}

void RecoveryActions::report_failure(std::uint32_t j, double t) {
    // The outside scheduler re-places it: it keeps its surviving nodes and
    // waits for start() or stop().
    JobState& job = jobs_[j];
    std::vector<std::uint32_t> lost;
    pool_.held_out_of_service(j, lost);
    const NodeList before = pool_.nodes_of(j);
    std::vector<std::uint32_t> held(before.begin(), before.end());
    for (std::uint32_t n : lost) pool_.detach(j, n);
    job.life.phase = Phase::Waiting;
    job.life.phase_start = t;
    outside_.report({t, job.fault_time, ModelEvent::JobFailed, static_cast<std::int32_t>(j), job.cause, lost,
                     job.life.committed, false, std::move(held)});
}

Recovery RecoveryActions::recover(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (outside_.enabled) {
        report_failure(j, t);
        return {Recovery::Decided};
    }
    if (!pool_.enabled()) {
        // Replacements are always available: a fault that takes its node
        // down re-places the job (on a node it did not hold).
        const CauseSpec* cause = draws_.cause_spec(job.cause);
        if (in_.policy.replacement_delay != kNoDistribution && (cause == nullptr || cause->node_down)) {
            job.replaced = true;
            job.life.phase = Phase::Waiting;
            job.life.phase_start = t;
            resume(j, t);
            return {Recovery::Decided};
        }
        return {Recovery::Restart};
    }
    std::vector<std::uint32_t> failed;
    pool_.held_out_of_service(j, failed);
    double repair_remaining = 0.0;
    for (std::uint32_t n : failed) repair_remaining = std::max(repair_remaining, pool_.return_time(n) - t);
    Replacement decision = policy_.decide(j, t, replica_, jobs_, pool_,
                                          static_cast<std::uint32_t>(failed.size()), repair_remaining);
    // An elastic job that can go on with what it holds is not requeued.
    if (decision == Replacement::Requeue && can_shrink(in_, plans_, pool_, j, failed.size()))
        decision = Replacement::Spares;
    job.decision = decision;
    job.life.phase = Phase::Waiting;  // for the recovery_wait accounting of begin_start
    job.life.phase_start = t;
    if (decision == Replacement::Requeue) {
        // It gives up what it kept for its recovery: nodes under repair it
        // waited for and cold spares on their way (from a narrow run).
        pool_.drop_claims(j);
        reservation_.release_nodes(j, pool_);
        return {Recovery::Requeue};
    }
    // Nothing went down (a software fault): a restart in place, unless the
    // job ran narrow and still lacks nodes (it goes on narrow, below).
    const bool lacking = pool_.nodes_of(j).size() < plans_.jobs[j].nodes;
    if (failed.empty() && !lacking) return {Recovery::Restart};
    // WAIT_REPAIR waits for nodes under repair; a quarantined node is
    // replaced like under SPARES.
    for (std::uint32_t n : failed) {
        pool_.detach(j, n);
        if (decision == Replacement::WaitRepair && pool_.under_repair_only(n, t)) pool_.reserve(j, n);
    }
    if (in_.options(j).min_gpus > 0) {
        // Elastic: whole again at once if the replacements are at hand, else
        // on with what it holds when that is enough, else it waits as others do.
        if (pool_.reserved(j) == 0 && place(j, true)) {
            resume(j, t);
            return {Recovery::Decided};
        }
        if (can_shrink(in_, plans_, pool_, j, 0)) return {Recovery::Shrink, !failed.empty()};
        if (pool_.reserved(j) == 0) return {Recovery::Wait};
    }
    if (pool_.reserved(j) > 0) {
        ledger_.log(j, EventKind::Waiting, t, jobs_[j]);
        if (give_up_if_unplaceable(j, t)) dispatch(t);
        return {Recovery::Decided};  // return_to_service restarts it, or queues it for the rest
    }
    if (place(j, true)) {
        resume(j, t);
        return {Recovery::Decided};
    }
    return {Recovery::Wait};
}

void RecoveryActions::waiting(std::uint32_t j, double t) {
    if (!give_up_if_unplaceable(j, t) && jobs_[j].decision == Replacement::PreemptLower) preempt_lower(j, t);
    dispatch(t);
}

void RecoveryActions::retry_preemption(std::int32_t by, double t) {
    if (by < 0) return;
    const auto j = static_cast<std::uint32_t>(by);
    if (jobs_.phase(j) != Phase::Waiting || !scheduler_.waiting(j) || pool_.reserved(j) > 0) return;
    if (place(j, true)) {
        scheduler_.stop_waiting(j);
        resume(j, t);
    } else {
        preempt_lower(j, t);
    }
}

void RecoveryActions::preempt_lower(std::uint32_t j, double t) {
    // Victims for the nodes still lacking after the free ones the job may
    // take now and those that deferred victims will give.
    const std::uint32_t missing = pool_.missing(j);
    const std::uint32_t covered = pool_.free_for_recovery(j) + jobs_[j].pledged;
    if (missing <= covered) return;
    for (const Victim& v : policy_.victims(j, t, missing - covered, jobs_, levels_, pool_)) {
        if (v.defer) {
            jobs_[v.job].preempt_for = static_cast<std::int32_t>(j);
            jobs_[j].pledged += plans_.jobs[v.job].nodes;
        } else {
            preempt(v.job, j, t);
        }
    }
}

void RecoveryActions::release_victim(std::uint32_t v, std::int32_t by, double t) {
    JobState& victim = jobs_[v];
    const double lost = engine_.interrupt(v, t);
    if (by >= 0) {
        jobs_.row(static_cast<std::uint32_t>(by))->churn_gpu_hours +=
            in_.jobs[v].gpus * lost / kSecondsPerHour;
        victim.churn_owner = by;
    }
    ++victim.rec->preemptions;
    requests_.void_job(v);  // its pending phase end is void
    ledger_.log(v, EventKind::Preempted, t, victim.life.committed, by);
    reservation_.release_nodes(v, pool_);
    engine_.enqueue(v, t);
}

void RecoveryActions::preempt(std::uint32_t v, std::uint32_t by, double t) {
    release_victim(v, static_cast<std::int32_t>(by), t);
    give_up_if_unplaceable(v, t);
    // The preemptor takes the freed nodes before anyone else.
    JobState& job = jobs_[by];
    if (job.phase() == Phase::Waiting && scheduler_.waiting(by) && pool_.reserved(by) == 0 &&
        place(by, true)) {
        scheduler_.stop_waiting(by);
        resume(by, t);
    }
}

bool RecoveryActions::give_up_if_unplaceable(std::uint32_t j, double t) {
    if (outside_.enabled) return false;  // the outside scheduler's call
    if (!pool_.enabled() || pool_.retired() == 0) return false;
    const Phase phase = jobs_.phase(j);  // (any job: give_up_unplaceable asks them all)
    if (phase != Phase::Queued && phase != Phase::Waiting) return false;
    if (!pool_.can_never_place(plans_.jobs[j].nodes, phase == Phase::Queued)) return false;
    abandon(j, t);
    return true;
}

void RecoveryActions::give_up_unplaceable(double t) {
    // Jobs in detection are judged when they recover, pending ones when
    // they are submitted, running ones when they next need nodes.
    if (!pool_.can_never_place(widest_, true)) return;  // the stricter rule: nobody is stranded
    bool any = false;
    for (std::uint32_t j = 0; j < jobs_.size(); ++j) any = give_up_if_unplaceable(j, t) || any;
    if (any) dispatch(t);
}

void RecoveryActions::abandon(std::uint32_t j, double t) {
    // The row is closed now, as at a horizon (the wait so far is queue or
    // recovery wait), so its wall is finite and its buckets add up.
    JobState& job = jobs_[j];
    scheduler_.drop(j);
    pool_.drop_claims(j);
    reservation_.release_nodes(j, pool_);
    requests_.void_job(j);
    job.replacing = false;
    job.replaced = false;
    close_at(job.life, *job.rec, job.started, t);
    job.rec->status = static_cast<std::uint8_t>(JobStatus::Unplaceable);
    job.life.phase = Phase::Done;
    ledger_.log(j, EventKind::Unplaceable, t, jobs_[j]);
    jobs_.done(j);
}

void RecoveryActions::start(std::uint32_t j, double t) {
    if (jobs_[j].phase() == Phase::Waiting || jobs_[j].narrow) {
        resume(j, t);
    } else {
        engine_.begin_start(j, t);
    }
}

}  // namespace acesim

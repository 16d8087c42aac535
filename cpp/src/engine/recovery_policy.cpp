#include "recovery_policy.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>
#include <tuple>

namespace acesim {

void RecoveryPolicy::durable_release(std::uint32_t k, double t, const JobState& v, const Levels& L,
                                     double& lost, double& until_released) const {
    // A preemption keeps only the durable checkpoint: everything since it is
    // lost, and the victim gives its nodes once its next checkpoint is durable
    // (the persist in flight ends; else its next durable snapshot and persist).
    const Lifecycle& life = v.life;
    const LevelPlan& plan = plans_.levels[k];
    double current = 0.0;
    if (life.phase == Phase::Computing) current = compute_progress(life, L, t);
    if (life.phase == Phase::Saving || life.phase == Phase::PersistWait)
        current = life.segment_compute + (t - life.phase_start);
    lost = (v.rec->productive - L.durable_credit) + L.unkept + current;
    if (L.persisting()) {
        until_released = L.persist_end - t;
    } else if (life.phase == Phase::Computing) {
        // The durable boundary ahead: this phase's when it is the durable's
        // (a drain checkpoint before maintenance included), else the next
        // one after the tiers' boundaries.
        const double ahead = L.writing == 0 ? life.boundary
                             : L.durable_base + life.interval < specs_[k].work
                                 ? L.durable_base + life.interval
                                 : specs_[k].work;
        const double done = life.committed + compute_progress(life, L, t);
        until_released =
            (ahead > done ? (ahead - done) / L.rate : 0.0) + plans_.of(k).save_mean + plan.persist_mean;
    } else if (life.phase == Phase::Saving && L.writing == 0) {
        until_released = (life.phase_end - t) + plan.persist_mean;
    } else {
        until_released = std::numeric_limits<double>::infinity();
    }
}

Replacement RecoveryPolicy::decide(std::uint32_t j, double t, std::uint32_t replica, const JobStates& jobs,
                                   const NodePool& pool, std::uint32_t failed,
                                   double repair_remaining) const {
    if (!policy_.on_failure && !policy_.compiled) return policy_.replacement;
    const JobState& job = jobs[j];
    acesim_failure_view view{};
    view.time = t;
    view.fault_time = job.fault_time;
    view.progress = job.life.committed;
    view.work = specs_[j].work;
    view.lost_work = job.lost_work;
    view.repair_remaining = repair_remaining;
    view.replica = replica;
    view.job = j;
    view.gpus = specs_[j].gpus;
    view.priority = specs_[j].priority;
    view.failures = job.rec->failures;
    view.cause = job.cause;
    view.nodes_held = pool.nodes_of(j).size() - failed;
    view.nodes_needed = failed;
    view.free_nodes = pool.free_whole_nodes();
    view.spare_nodes = pool.free_spares();
    pool.count_out_of_service(t, view.down_nodes, view.quarantined_nodes);
    std::uint32_t preemptible = 0;
    if (specs_[j].priority > plans_.lowest_priority) {  // else no job has a lower priority
        for_each_placed_job(pool, jobs.size(), [&](std::uint32_t k) {
            if (may_preempt(j, k, jobs)) preemptible += pool.nodes_of(k).size();
        });
    }
    view.preemptible_nodes = preemptible;
    const std::int32_t choice =
        policy_.compiled ? policy_.compiled(&view, policy_.compiled_user_data) : policy_.on_failure(view);
    if (choice == ACESIM_DEFAULT) return policy_.replacement;
    if (choice < 0 || choice > 3)
        throw std::invalid_argument("on_failure returned " + std::to_string(choice) +
                                    "; expected a Replacement (0-3) or None");
    return static_cast<Replacement>(choice);
}

std::vector<Victim> RecoveryPolicy::victims(std::uint32_t j, double t, std::uint32_t need,
                                            const JobStates& jobs, const std::vector<Levels>& levels,
                                            const NodePool& pool) const {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    struct Candidate {
        double cost;
        std::int32_t priority;
        double started;
        std::uint32_t job;
        bool defer;
    };
    std::vector<Candidate> candidates;
    if (specs_[j].priority <= plans_.lowest_priority) return {};  // no job has a lower priority
    // In node order (the sorts below are total orders: the order found does
    // not matter).
    for_each_placed_job(pool, jobs.size(), [&](std::uint32_t k) {
        const JobState& v = jobs[k];
        if (!may_preempt(j, k, jobs) || v.preempt_for >= 0) return;
        const Lifecycle& life = v.life;
        double lost = 0.0;
        if (life.phase == Phase::Computing) lost = t - life.phase_start;
        if (life.phase == Phase::Saving) lost = life.segment_compute + (t - life.phase_start);
        // The victim gives its nodes when its checkpoint write ends.
        double until_released = life.phase == Phase::Saving ? life.phase_end - t
                                : life.phase == Phase::Computing
                                    ? (life.phase_end - t) + plans_.of(k).save_mean
                                    : kInf;
        if (!levels.empty()) durable_release(k, t, v, levels[k], lost, until_released);
        const bool defer = policy_.preemption == Preemption::CheckpointAware &&
                           policy_.preemption_grace > 0.0 && until_released <= policy_.preemption_grace;
        candidates.push_back(
            {defer ? 0.0 : lost * specs_[k].gpus, specs_[k].priority, v.run_start, k, defer});
    });
    if (policy_.preemption == Preemption::CheckpointAware) {
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            return std::tie(a.cost, a.priority, a.job) < std::tie(b.cost, b.priority, b.job);
        });
    } else {
        std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
            return std::make_tuple(a.priority, -a.started, a.job) <
                   std::make_tuple(b.priority, -b.started, b.job);
        });
    }
    std::uint32_t available = 0;
    std::size_t take = 0;
    while (take < candidates.size() && available < need)
        available += plans_.jobs[candidates[take++].job].nodes;
    std::vector<Victim> out;
    if (available < need) return out;  // not enough even with every candidate: keep waiting
    out.reserve(take);
    for (std::size_t c = 0; c < take; ++c) out.push_back({candidates[c].job, candidates[c].defer});
    return out;
}

}  // namespace acesim

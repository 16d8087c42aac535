// Recovery decisions: which re-placement a failed job gets (the built-in
// policy, a Python callable or a compiled callback, over a read-only view)
// and which running jobs PREEMPT_LOWER takes nodes from. It reads
// snapshots of the replica and returns decisions; it mutates nothing.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "acesim/policy_abi.h"
#include "acesim/simulator.hpp"
#include "job_states.hpp"
#include "node_pool.hpp"
#include "plans.hpp"

namespace acesim {

/// A victim PREEMPT_LOWER chose: preempt now, or at its next checkpoint.
struct Victim {
    std::uint32_t job;
    bool defer;
};

class RecoveryPolicy {
public:
    RecoveryPolicy(const PolicySpec& policy, const JobTable& specs, const Plans& plans,
                   std::uint32_t gpus_per_node)
        : policy_(policy), specs_(specs), plans_(plans), gpn_(gpus_per_node) {}

    /// The re-placement for job j, detected at t, with `failed` of its nodes
    /// out of service (the longest back in `repair_remaining` seconds).
    Replacement decide(std::uint32_t j, double t, std::uint32_t replica, const JobStates& jobs,
                       const NodePool& pool, std::uint32_t failed, double repair_remaining) const;

    /// Victims among the running lower-priority whole-node jobs that free
    /// `need` nodes for job j at t, in the order they are taken; empty when
    /// even all of them would not be enough. Under CHECKPOINT_AWARE with a
    /// grace, a victim whose checkpoint write would end within the grace
    /// (compute left plus its mean save, or the rest of a write in progress)
    /// is deferred to it.
    std::vector<Victim> victims(std::uint32_t j, double t, std::uint32_t need, const JobStates& jobs,
                                const std::vector<Levels>& levels, const NodePool& pool) const;

private:
    /// With checkpoint levels: victim k's work lost to a preemption at t (back
    /// to its durable checkpoint) and the time until its next checkpoint is durable.
    void durable_release(std::uint32_t k, double t, const JobState& v, const Levels& L, double& lost,
                         double& until_released) const;
    /// Calls fn(k) once for each job placed on some node, in node order: the
    /// running jobs, found in O(nodes) rather than a scan of every job (a
    /// fleet month has 1.7M jobs and 16K nodes).
    template <class Fn>
    void for_each_placed_job(const NodePool& pool, std::size_t jobs, Fn fn) const {
        if (seen_.size() < jobs) seen_.resize(jobs, 0);
        if (++generation_ == 0) {  // wrapped: start the marks afresh
            std::fill(seen_.begin(), seen_.end(), 0u);
            generation_ = 1;
        }
        for (std::uint32_t n = 0; n < pool.size(); ++n)
            for (std::uint32_t k : pool.node(n).jobs)
                if (seen_[k] != generation_) {
                    seen_[k] = generation_;
                    fn(k);
                }
    }
    /// Job j may take job k's nodes: k runs, has a lower priority and holds whole nodes.
    bool may_preempt(std::uint32_t j, std::uint32_t k, const JobStates& jobs) const {
        return jobs[k].running() && specs_[k].priority < specs_[j].priority &&
               plans_.jobs[k].gpus_per_node == gpn_;
    }

    const PolicySpec& policy_;
    const JobTable& specs_;
    const Plans& plans_;
    std::uint32_t gpn_;
    mutable std::vector<std::uint32_t> seen_;  ///< for_each_placed_job's marks, by job
    mutable std::uint32_t generation_ = 0;
};

}  // namespace acesim

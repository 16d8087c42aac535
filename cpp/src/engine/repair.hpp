// Repair of a replica's nodes: a plain duration law, or a pipeline of stages
// (automatic remediation, then manual repair, then vendor RMA, ...) each
// with a duration law, a probability of escalating to the next stage and a
// probability that a node leaving after it returns healthy (a lemon cured);
// and misdiagnosis (the node sent to repair is another node of the failed
// job). It draws from the node's own streams and holds no node state: the
// node pool applies the outcomes.
//
// Streams of node n (common random numbers: a node's k-th repair has the
// same stages and outcome under every policy, whenever it happens):
// - Purpose::Repair: the stage durations, one draw per stage gone through,
//   in order (a plain law: one draw per repair, as before pipelines).
// - Purpose::RepairOutcome, draw k (the node's k-th pipeline repair),
//   sub-block 1 + s: its low 64 bits decide whether stage s escalates
//   (uniform < escalate; never drawn for the last stage's decision), its high
//   64 bits whether the node leaving after stage s is fixed (uniform < fix).
// - Purpose::RepairOutcome, draw d, sub-block 0: the d-th misdiagnosis
//   decision of node n as the faulty node (low bits: uniform < misdiagnosis;
//   high bits: which of the job's other nodes goes instead). d counts only
//   the failures that could be misdiagnosed, so it depends on placement.
#pragma once

#include <cstdint>

#include "acesim/simulator.hpp"
#include "draws.hpp"

namespace acesim {

/// One repair of one node, resolved when the node goes down.
struct RepairOutcome {
    double duration = 0.0;     ///< time out of service after detection (sum of the stages)
    std::uint32_t stages = 0;  ///< stages gone through (1 for a plain law, 0 without a law)
    bool fixed = false;        ///< a lemon returns healthy (never with a plain law)
};

class RepairModel {
public:
    RepairModel(const FleetSpec& fleet, std::uint32_t gpus_per_node) : fleet_(fleet), gpn_(gpus_per_node) {}

    bool pipeline() const { return !fleet_.repair_stages.empty(); }
    bool misdiagnoses() const { return fleet_.misdiagnosis > 0.0; }

    /// Node n's next repair: the plain law's draw (a lemon stays a lemon), or
    /// a walk through the stages from the first until one does not escalate.
    RepairOutcome repair(std::uint32_t n, const ReplicaDraws& draws, DrawCounters& counters) const;

    /// A failure of `faulty` that interrupted a job with `others` other
    /// candidate nodes: the index in [0, others) of the node sent to repair
    /// instead, or `others` when the diagnosis is right. `decisions` is the
    /// faulty node's misdiagnosis counter.
    std::uint32_t diagnose(std::uint32_t faulty, std::uint32_t others, const ReplicaDraws& draws,
                           std::uint32_t& decisions) const;

private:
    const FleetSpec& fleet_;
    std::uint32_t gpn_;
};

}  // namespace acesim

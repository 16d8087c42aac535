#include "repair.hpp"

namespace acesim {

RepairOutcome RepairModel::repair(std::uint32_t n, const ReplicaDraws& draws, DrawCounters& counters) const {
    RepairOutcome out;
    const double gpus = static_cast<double>(gpn_);
    if (!pipeline()) {
        if (fleet_.repair == kNoDistribution) return out;
        out.duration = draws.law(EntityKind::Node, n, Purpose::Repair, fleet_.repair, counters, gpus);
        out.stages = 1;
        return out;
    }
    // The whole walk is drawn now: a node under repair cannot fail and
    // nothing else changes its repair, so its stage boundaries are never
    // observed; the policy sees the total, as it sees a plain law's draw.
    const Stream outcomes = draws.stream(EntityKind::Node, n, Purpose::RepairOutcome);
    const std::uint32_t k = counters[static_cast<std::size_t>(Purpose::RepairOutcome)]++;
    const auto last = static_cast<std::uint32_t>(fleet_.repair_stages.size() - 1);
    for (std::uint32_t s = 0;; ++s) {
        const RepairStageSpec& stage = fleet_.repair_stages[s];
        out.duration += draws.law(EntityKind::Node, n, Purpose::Repair, stage.duration, counters, gpus);
        ++out.stages;
        const Block bits = outcomes.block(k, 1 + s);
        if (s < last && uniform_open(lo64(bits)) < stage.escalate) continue;
        out.fixed = uniform_open(hi64(bits)) < stage.fix;
        return out;
    }
}

std::uint32_t RepairModel::diagnose(std::uint32_t faulty, std::uint32_t others, const ReplicaDraws& draws,
                                    std::uint32_t& decisions) const {
    const Block bits = draws.stream(EntityKind::Node, faulty, Purpose::RepairOutcome).block(decisions++, 0);
    if (!(uniform_open(lo64(bits)) < fleet_.misdiagnosis)) return others;
    return static_cast<std::uint32_t>(bounded_index(hi64(bits), others));
}

}  // namespace acesim

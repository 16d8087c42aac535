#include "node_pool.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {
constexpr double kSecondsPerHour = 3600.0;
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

NodePool::NodePool(const FleetSpec& fleet, const QuarantineSpec& quarantine, std::uint32_t gpus_per_node,
                   const std::vector<JobPlan>& plans)
    : fleet_(fleet),
      quarantine_(quarantine),
      gpn_(gpus_per_node),
      repair_(fleet, gpus_per_node),
      plans_(plans),
      slots_(widest_span(fleet.nodes)),
      processes_(fleet, gpus_per_node),
      calendar_(fleet) {
    held_.resize(plans.size());
    reserved_.assign(plans.size(), 0);
    acquiring_.assign(plans.size(), 0);
}

void NodePool::compact(std::uint32_t j) {
    NodeSlice& held = held_[j];
    const std::uint32_t slots = capacity(j);
    std::uint32_t* data = slots_.at(held.first);
    std::uint32_t kept = 0;
    for (std::uint32_t at = 0; at < held.end; ++at) {
        const std::uint32_t n = data[at];
        if (n == kVacant) continue;
        nodes_[n].held_slot = kept;
        data[kept++] = n;
    }
    held.end = kept;
    std::uint32_t* counts = data + slots;
    for (std::uint32_t b = 0; b < slots / kHeldBlock; ++b) {
        const std::uint32_t from = b * kHeldBlock;
        counts[b] = kept > from ? std::min(kept - from, kHeldBlock) : 0u;
    }
}

void NodePool::add_job() {
    const std::size_t j = held_.size();
    held_.emplace_back();
    reserved_.push_back(0);
    acquiring_.push_back(0);
}

void NodePool::init(const ReplicaDraws& draws) {
    if (!fleet_.enabled) return;
    nodes_.resize(fleet_.nodes);
    processes_.resize(fleet_.nodes);
    pools_.assign(gpn_ + 3, {});
    spare_pool_ = gpn_ + 1;
    cold_pool_ = gpn_ + 2;
    const std::uint32_t first_spare = fleet_.nodes - fleet_.spares;
    const std::uint32_t first_cold = first_spare - fleet_.cold_spares;
    for (std::uint32_t n = 0; n < fleet_.nodes; ++n) {
        NodeState& node = nodes_[n];
        node.free_gpus = gpn_;
        if (fleet_.lemon_fraction > 0.0) {
            node.lemon = uniform_open(draws.bits(EntityKind::Node, n, Purpose::Lemon, node.draws)) <
                         fleet_.lemon_fraction;
        }
        // The last `spares` nodes start as hot spares; the `cold_spares`
        // before them are the cold spares.
        node.cold = n >= first_cold && n < first_spare;
        pool_add(n, n >= first_spare ? spare_pool_ : node.cold ? cold_pool_ : gpn_);
        node.spare_since = 0.0;  // the spares' stints start with the run
        start_process(n, 0.0, draws, true);
    }
}

void NodePool::renew(std::uint32_t n, double t, const ReplicaDraws& draws) {
    NodeState& node = nodes_[n];
    if (!node.in_service) return;  // it starts again, fresh, when the node returns
    start_process(n, t, draws, false);
}

void NodePool::send_to_repair(std::uint32_t m, double t, double detect, const ReplicaDraws& draws) {
    const RepairOutcome outcome = repair_.repair(m, draws, nodes_[m].draws);
    nodes_[m].cure_on_return = outcome.fixed;
    take_down(m, t, t + detect + outcome.duration);
}

std::uint32_t NodePool::diagnosed(std::uint32_t faulty, std::uint32_t j, std::uint32_t first,
                                  std::uint32_t last, const ReplicaDraws& draws) {
    if (!repair_.misdiagnoses()) return faulty;
    candidates_.clear();
    for (std::uint32_t n : nodes_of(j)) {  // in the order the job took them
        if (n != faulty && nodes_[n].in_service && (n < first || n >= last)) candidates_.push_back(n);
    }
    // A one-node job (or one whose other nodes are all struck) cannot be
    // misdiagnosed: no draw.
    if (candidates_.empty()) return faulty;
    const auto others = static_cast<std::uint32_t>(candidates_.size());
    const std::uint32_t pick = repair_.diagnose(faulty, others, draws, nodes_[faulty].diagnoses);
    return pick < others ? candidates_[pick] : faulty;
}

void NodePool::leave_service(std::uint32_t m, double t) {
    NodeState& node = nodes_[m];
    ++changes_;  // its return time moves (or it leaves service)
    if (node.in_service) {
        node.out_pos = static_cast<std::uint32_t>(out_.size());
        out_.push_back(m);
        node.in_service = false;
        for (std::uint32_t j : node.jobs) departed_[j].push_back(m);
        node.out_since = t;
        processes_.stop(m);  // no failure process out of service
        leave_spares(m);
        pool_remove(m);
        if (node.acquiring_for >= 0) rules_.drop_acquisition(m);  // back in the cold reserve when it returns
    }
}

void NodePool::held_out_of_service(std::uint32_t j, std::vector<std::uint32_t>& out) {
    out.clear();
    const auto it = departed_.find(j);
    if (it == departed_.end()) return;
    for (std::uint32_t n : it->second) {
        const NodeState& node = nodes_[n];
        const bool held = std::find(node.jobs.begin(), node.jobs.end(), j) != node.jobs.end();
        if (held && !node.in_service && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    departed_.erase(it);
    if (out.size() > 1) {  // in the order j holds them
        out.clear();
        for (std::uint32_t n : nodes_of(j))
            if (!nodes_[n].in_service) out.push_back(n);
    }
}

void NodePool::unreserve_all(std::uint32_t j) {
    if (reserved_[j] == 0) return;
    for (NodeState& node : nodes_) {
        auto it = std::find(node.reserved.begin(), node.reserved.end(), j);
        if (it == node.reserved.end()) continue;
        node.reserved.erase(it);
        --reserved_[j];
    }
}

void NodePool::take_down(std::uint32_t m, double t, double until) {
    NodeState& node = nodes_[m];
    node.down_until = until;
    leave_service(m, t);
}

bool NodePool::note_failure_for_quarantine(std::uint32_t m, double t) {
    const QuarantineSpec& q = quarantine_;
    if (!q.enabled) return false;
    NodeState& node = nodes_[m];
    node.recent.push_back(t);
    node.recent.erase(
        std::remove_if(node.recent.begin(), node.recent.end(), [&](double f) { return f < t - q.window; }),
        node.recent.end());
    if (node.recent.size() < q.failures) return false;
    node.recent.clear();
    ++totals_.quarantines;
    if (!node.ever_quarantined) {
        node.ever_quarantined = true;
        ++totals_.quarantined_nodes;
    }
    node.quarantined_until = t + q.duration;  // inf: retired for good
    if (!(node.quarantined_until < kInf) && !node.retired) {
        node.retired = true;
        ++totals_.retired_nodes;
        if (node.cold) ++retired_cold_;
    }
    leave_service(m, t);
    return true;
}

void NodePool::count_out_of_service_hours(const NodeState& node, double end) {
    // Spans start when the node leaves service; a node out of service cannot
    // fail, so a span never overlaps the next one.
    const double from = node.out_since;
    if (node.down_until > from)
        totals_.down_node_hours += (std::min(node.down_until, end) - from) / kSecondsPerHour;
    if (node.quarantined_until > from)
        totals_.quarantined_node_hours += (std::min(node.quarantined_until, end) - from) / kSecondsPerHour;
}

void NodePool::close(double end) {
    for (const NodeState& node : nodes_) {
        if (!node.in_service) count_out_of_service_hours(node, end);
        if (node.pool == static_cast<std::int32_t>(spare_pool_)) count_spare_stint(node, end);
    }
    totals_.maintenance_node_hours += calendar_.node_hours(end);
}

void NodePool::begin_maintenance(std::uint32_t m, double t, double until) {
    NodeState& node = nodes_[m];
    node.maintained_until = std::max(node.maintained_until, until);
    calendar_.begin(m);
    leave_service(m, t);
}

std::vector<std::uint32_t> NodePool::return_to_service(std::uint32_t n, double t, const ReplicaDraws& draws) {
    NodeState& node = nodes_[n];
    count_out_of_service_hours(node, t);
    node.in_service = true;
    ++changes_;
    const std::uint32_t last = out_.back();
    out_[node.out_pos] = last;
    nodes_[last].out_pos = node.out_pos;
    out_.pop_back();
    if (node.cure_on_return) {
        node.lemon = false;  // fails at the normal rate from now on
        node.cure_on_return = false;
    }
    start_process(n, t, draws, false);
    std::vector<std::uint32_t> reserved = std::move(node.reserved);
    node.reserved.clear();
    for (std::uint32_t j : reserved) --reserved_[j];
    return reserved;
}

void NodePool::count_out_of_service(double t, std::uint32_t& down, std::uint32_t& quarantined) const {
    down = quarantined = 0;
    for (std::uint32_t m : out_) {  // the out-of-service list: no scan of every node
        const NodeState& n = nodes_[m];
        if (t < n.quarantined_until)
            ++quarantined;
        else
            ++down;
    }
}

}  // namespace acesim

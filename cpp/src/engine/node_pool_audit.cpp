// The node pool's consistency checks (check_invariants=True, and every run
// of a debug build): links, pools, GPU counts, spares, reservations,
// retirement, failure processes, maintenance and cold-spare acquisitions.
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "node_pool.hpp"

namespace acesim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

void NodePoolAudit::check_held(std::uint32_t j) const {
    const NodeSlice& held = p_.held_[j];
    const auto fail = [j](const char* what) {
        throw std::logic_error("invariant: job " + std::to_string(j) + "'s node list: " + what);
    };
    if (held.size == 0) return;
    if (!p_.wide(j)) {
        if (held.end != held.size) fail("a narrow list has slots beyond its nodes");
        return;
    }
    const std::uint32_t slots = p_.capacity(j);
    const std::uint32_t* data = p_.slots_.at(held.first);
    if (held.end > slots || data[held.end - 1] == kVacant) fail("it ends past its slots or on a vacant slot");
    std::uint32_t alive = 0;
    for (std::uint32_t b = 0; b < slots / kHeldBlock; ++b) {
        std::uint32_t count = 0;
        for (std::uint32_t at = b * kHeldBlock; at < std::min((b + 1) * kHeldBlock, held.end); ++at) {
            if (data[at] == kVacant) continue;
            ++count;
            if (p_.nodes_[data[at]].held_slot != at) fail("a node's slot is not where it is");
        }
        if (data[slots + b] != count) fail("a block's count is not its nodes'");
        alive += count;
    }
    if (alive != held.size) fail("its nodes are not its size");
    // A few places (each a walk of the counts): the first, last, and a third and half way.
    const NodeList list = p_.nodes_of(j);
    const std::uint32_t size = list.size();
    std::uint32_t i = 0;
    for (std::uint32_t n : list) {
        const bool probe = i == 0 || i == size - 1 || i == size / 3 || i == size / 2;
        if (probe && list[i] != n) fail("the i-th node is not the one iterating finds");
        ++i;
    }
}

void NodePoolAudit::check_invariants() const {
    if (!p_.fleet_.enabled) return;
    std::vector<std::uint32_t> used(p_.nodes_.size(), 0);
    std::uint32_t retired = 0;
    std::uint32_t retired_cold = 0;
    for (std::uint32_t j = 0; j < p_.held_.size(); ++j) {
        check_held(j);
        for (std::uint32_t n : p_.nodes_of(j)) {
            const auto& on = p_.nodes_[n].jobs;
            if (std::count(on.begin(), on.end(), j) != 1)
                throw std::logic_error("invariant: job " + std::to_string(j) + " holds node " +
                                       std::to_string(n) + " that does not list it");
            used[n] += p_.plans_[j].gpus_per_node;
        }
    }
    for (std::uint32_t p = 0; p < p_.pools_.size(); ++p) {
        for (std::uint32_t k = 0; k < p_.pools_[p].size(); ++k) {
            const NodeState& node = p_.nodes_[p_.pools_[p][k]];
            if (node.pool != static_cast<std::int32_t>(p) || node.pos != k)
                throw std::logic_error("invariant: pool bookkeeping");
        }
    }
    for (std::uint32_t n = 0; n < p_.nodes_.size(); ++n) {
        const NodeState& node = p_.nodes_[n];
        if (used[n] + node.free_gpus != p_.gpn_)
            throw std::logic_error("invariant: node " + std::to_string(n) + " GPUs do not add up");
        for (std::uint32_t j : node.jobs) {
            if (const NodeList held = p_.nodes_of(j); std::count(held.begin(), held.end(), n) != 1)
                throw std::logic_error("invariant: node " + std::to_string(n) +
                                       " lists a job that does not hold it");
        }
        const bool pooled = node.pool >= 0;
        if (pooled && (!node.in_service || !node.reserved.empty()))
            throw std::logic_error("invariant: node " + std::to_string(n) +
                                   " is in a pool while out of service");
        if (pooled && node.pool == static_cast<std::int32_t>(p_.spare_pool_) && !node.jobs.empty())
            throw std::logic_error("invariant: a hot spare runs a job");
        const bool acquiring = node.acquiring_for >= 0;
        if (node.in_service && node.reserved.empty() && node.free_gpus > 0 && !pooled && !acquiring)
            throw std::logic_error("invariant: free node " + std::to_string(n) + " is in no pool");
        if (!node.reserved.empty() && node.in_service)
            throw std::logic_error("invariant: node reserved while in service");
        const bool listed = node.out_pos < p_.out_.size() && p_.out_[node.out_pos] == n;
        if (listed == node.in_service)
            throw std::logic_error("invariant: node " + std::to_string(n) +
                                   " and the out-of-service list disagree");
        p_.processes_.check(n, node.in_service, !node.jobs.empty(), p_.now_);
        // Planned maintenance: begun windows are past, the next one ahead,
        // and a node inside a window is out of service.
        p_.calendar_.check(n, p_.now_);
        if (node.maintained_until > p_.now_ && node.in_service)
            throw std::logic_error("invariant: node " + std::to_string(n) + " in service during maintenance");
        if (node.retired && (node.in_service || node.quarantined_until < kInf || !node.reserved.empty()))
            throw std::logic_error("invariant: retired node " + std::to_string(n) + " is back or reserved");
        if (node.cure_on_return && node.in_service)
            throw std::logic_error("invariant: node " + std::to_string(n) +
                                   " in service with a pending cure");
        if (node.pool == static_cast<std::int32_t>(p_.spare_pool_) && node.spare_since > p_.now_)
            throw std::logic_error("invariant: hot spare " + std::to_string(n) +
                                   " entered the pool in the future");
        check_cold(n);
        retired += node.retired ? 1u : 0u;
        retired_cold += node.retired && node.cold ? 1u : 0u;
    }
    if (retired != p_.totals_.retired_nodes || retired_cold != p_.retired_cold_)
        throw std::logic_error("invariant: retired node count");
    if (p_.out_.size() > p_.nodes_.size()) throw std::logic_error("invariant: out-of-service list");
    std::vector<std::uint32_t> waits(p_.held_.size(), 0);
    for (const NodeState& node : p_.nodes_)
        for (std::uint32_t j : node.reserved) ++waits[j];
    if (waits != p_.reserved_) throw std::logic_error("invariant: reservation counts");
    if (!p_.touched_.empty()) throw std::logic_error("invariant: node events left to reschedule");
    std::vector<std::uint32_t> acquiring(p_.acquiring_.size(), 0);
    for (std::uint32_t n : p_.acquisitions_) {
        if (p_.nodes_[n].acquiring_for < 0) throw std::logic_error("invariant: cold-spare acquisition list");
        ++acquiring[static_cast<std::uint32_t>(p_.nodes_[n].acquiring_for)];
    }
    if (acquiring != p_.acquiring_) throw std::logic_error("invariant: acquisitions per job do not add up");
    if (p_.pools_[p_.spare_pool_].size() > p_.fleet_.spares)
        throw std::logic_error("invariant: more hot spares than the fleet holds back");
}

void NodePoolAudit::check_cold(std::uint32_t n) const {
    const NodeState& node = p_.nodes_[n];
    const bool pooled = node.pool >= 0;
    if (pooled && node.pool == static_cast<std::int32_t>(p_.cold_pool_) && (!node.cold || !node.jobs.empty()))
        throw std::logic_error("invariant: the cold reserve holds node " + std::to_string(n) +
                               ", busy or not a cold spare");
    if (node.acquiring_for < 0) {
        if (node.acquired_at != kInf)
            throw std::logic_error("invariant: node " + std::to_string(n) + " has a stale acquisition");
        return;
    }
    const bool listed = std::count(p_.acquisitions_.begin(), p_.acquisitions_.end(), n) == 1;
    if (!node.cold || !node.in_service || pooled || !node.jobs.empty() || !node.reserved.empty() ||
        !std::isfinite(node.acquired_at) ||
        static_cast<std::size_t>(node.acquiring_for) >= p_.acquiring_.size() || !listed)
        throw std::logic_error("invariant: cold spare " + std::to_string(n) +
                               " in acquisition is also somewhere else");
}

}  // namespace acesim

#include "placement_rules.hpp"

#include <algorithm>
#include <limits>

#include "node_pool.hpp"

namespace acesim {
namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

std::uint32_t PlacementRules::healthiest(std::uint32_t p) const {
    const std::vector<std::uint32_t>& pool = p_.pools_[p];
    std::uint32_t best = pool.front();
    for (std::uint32_t n : pool) {
        const NodeState& a = p_.nodes_[n];
        const NodeState& b = p_.nodes_[best];
        if (a.last_failure < b.last_failure || (a.last_failure == b.last_failure && n < best)) best = n;
    }
    return best;
}

bool PlacementRules::take_for_recovery(std::uint32_t j, const ReplicaDraws& draws) {
    const std::uint32_t need = p_.missing(j);
    const std::uint32_t used = p_.plans_[j].gpus_per_node;
    if (need > 0 && used < p_.gpn_) {
        // A job smaller than a node: best fit among partly free nodes, then
        // a hot spare, then a cold spare.
        const std::int64_t now = available_now(j);
        if (now >= 0) {
            p_.take_chosen(j, static_cast<std::uint32_t>(now));
        } else if (!p_.pools_[p_.cold_pool_].empty()) {
            acquire(j, healthiest(p_.cold_pool_), draws);
        } else {
            return false;
        }
    } else if (need > 0) {
        const std::size_t now = p_.pools_[p_.gpn_].size() + p_.pools_[p_.spare_pool_].size();
        if (now + p_.pools_[p_.cold_pool_].size() < need) return false;
        for (std::uint32_t k = 0; k < need; ++k) {
            if (!p_.pools_[p_.spare_pool_].empty()) {
                ++p_.totals_.spare_uses;
                p_.attach(j, healthiest(p_.spare_pool_));
            } else if (!p_.pools_[p_.gpn_].empty()) {
                p_.attach(j, healthiest(p_.gpn_));
            } else {
                acquire(j, healthiest(p_.cold_pool_), draws);
            }
        }
    }
    // A node available now beats a cold spare still on its way: the
    // acquisition that would end last is cancelled (its node is an idle cold
    // spare again).
    while (p_.acquiring_[j] > 0) {
        const std::int64_t now = available_now(j);
        if (now < 0) break;
        std::int64_t last = -1;
        for (std::uint32_t n : p_.acquisitions_) {
            if (p_.nodes_[n].acquiring_for != static_cast<std::int32_t>(j)) continue;
            const double at = p_.nodes_[n].acquired_at;
            if (last < 0 || at > p_.nodes_[last].acquired_at ||
                (at == p_.nodes_[last].acquired_at && n > last))
                last = n;
        }
        const auto cancelled = static_cast<std::uint32_t>(last);
        drop_acquisition(cancelled);
        p_.repool(cancelled);
        p_.touched_.push_back(cancelled);
        p_.take_chosen(j, static_cast<std::uint32_t>(now));
    }
    return p_.acquiring_[j] == 0 && p_.missing(j) == 0;
}

std::int64_t PlacementRules::available_now(std::uint32_t j) const {
    const std::uint32_t used = p_.plans_[j].gpus_per_node;
    if (used < p_.gpn_) {
        for (std::uint32_t k = used; k <= p_.gpn_; ++k)
            if (!p_.pools_[k].empty()) return healthiest(k);
    }
    if (!p_.pools_[p_.spare_pool_].empty()) return healthiest(p_.spare_pool_);
    if (!p_.pools_[p_.gpn_].empty()) return healthiest(p_.gpn_);
    return -1;
}

void PlacementRules::acquire(std::uint32_t j, std::uint32_t n, const ReplicaDraws& draws) {
    p_.pool_remove(n);
    NodeState& node = p_.nodes_[n];
    const double delay = draws.law(EntityKind::Node, n, Purpose::Replace, p_.fleet_.cold_spare_delay,
                                   node.draws, static_cast<double>(p_.gpn_));
    if (!(delay > 0.0)) {
        ++p_.totals_.cold_spare_uses;
        p_.attach(j, n);
        return;
    }
    node.acquiring_for = static_cast<std::int32_t>(j);
    node.acquired_at = p_.now_ + delay;
    ++p_.acquiring_[j];
    p_.acquisitions_.push_back(n);
    p_.touched_.push_back(n);
}

void PlacementRules::drop_acquisition(std::uint32_t n) {
    NodeState& node = p_.nodes_[n];
    --p_.acquiring_[static_cast<std::uint32_t>(node.acquiring_for)];
    node.acquiring_for = -1;
    node.acquired_at = kInf;
    p_.acquisitions_.erase(std::find(p_.acquisitions_.begin(), p_.acquisitions_.end(), n));
}

std::uint32_t PlacementRules::finish_acquisition(std::uint32_t n) {
    const auto j = static_cast<std::uint32_t>(p_.nodes_[n].acquiring_for);
    drop_acquisition(n);
    ++p_.totals_.cold_spare_uses;
    p_.attach(j, n);
    return j;
}

bool PlacementRules::take_free(std::uint32_t j) {
    const std::uint32_t need = p_.missing(j);
    const std::uint32_t used = p_.plans_[j].gpus_per_node;
    const bool lend = p_.fleet_.lend_spares;
    const std::vector<std::uint32_t>& spares = p_.pools_[p_.spare_pool_];
    if (used < p_.gpn_) {
        for (std::uint32_t k = used; k <= p_.gpn_; ++k) {
            if (!p_.pools_[k].empty()) {
                p_.attach(j, p_.pools_[k].back());
                return true;
            }
        }
        if (lend && !spares.empty()) {
            ++p_.totals_.spare_uses;
            p_.attach(j, spares.back());
            return true;
        }
        return false;
    }
    if (p_.pools_[p_.gpn_].size() < need) {
        if (!lend || p_.pools_[p_.gpn_].size() + spares.size() < need) return false;
        // Lent spares: the free nodes first, the spares for the rest.
        for (std::uint32_t k = 0; k < need; ++k) {
            if (!p_.pools_[p_.gpn_].empty()) {
                p_.attach(j, p_.pools_[p_.gpn_].back());
            } else {
                ++p_.totals_.spare_uses;
                p_.attach(j, spares.back());
            }
        }
        return true;
    }
    for (std::uint32_t k = 0; k < need; ++k) p_.attach(j, p_.pools_[p_.gpn_].back());
    return true;
}

void PlacementRules::candidates(std::uint32_t j, bool recovering, double t, PlacementCandidates& out) const {
    const std::uint32_t used = p_.plans_[j].gpus_per_node;
    std::vector<std::uint32_t>& ids = out.nodes;
    ids.clear();
    for (std::uint32_t k = used; k <= p_.gpn_; ++k) {
        if (used == p_.gpn_ && k != p_.gpn_) continue;  // whole-node jobs take whole free nodes
        ids.insert(ids.end(), p_.pools_[k].begin(), p_.pools_[k].end());
    }
    // The hot spares: for a re-placement, or (lend_spares) for a start from
    // the queue when the free nodes alone do not suffice.
    if (recovering || (p_.fleet_.lend_spares && ids.size() < p_.missing(j)))
        ids.insert(ids.end(), p_.pools_[p_.spare_pool_].begin(), p_.pools_[p_.spare_pool_].end());
    std::sort(ids.begin(), ids.end());
    out.failures.resize(ids.size());
    out.since_failure.resize(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const NodeState& node = p_.nodes_[ids[i]];
        out.failures[i] = node.failures;
        out.since_failure[i] = t - node.last_failure;  // inf when it never failed
    }
}

void PlacementRules::cancel_acquisitions(std::uint32_t j) {
    for (std::size_t k = p_.acquisitions_.size(); k-- > 0;) {
        const std::uint32_t n = p_.acquisitions_[k];
        if (p_.nodes_[n].acquiring_for != static_cast<std::int32_t>(j)) continue;
        drop_acquisition(n);
        p_.repool(n);
        p_.touched_.push_back(n);
    }
}

}  // namespace acesim

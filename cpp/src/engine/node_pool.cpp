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
    : fleet_(fleet), quarantine_(quarantine), gpn_(gpus_per_node), plans_(plans) {
    held_.resize(plans.size());
    reserved_.assign(plans.size(), 0);
    acquiring_.assign(plans.size(), 0);
    if (!fleet.enabled) return;
    std::size_t slots = 0;
    for (const JobPlan& p : plans) slots += p.nodes;
    slots_.resize(slots);
    std::size_t slot = 0;
    for (std::size_t j = 0; j < plans.size(); ++j) {
        held_[j].bind(slots_.data() + slot);
        slot += plans[j].nodes;
    }
}

void NodePool::init(const ReplicaDraws& draws) {
    if (!fleet_.enabled) return;
    nodes_.resize(fleet_.nodes);
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
        arm(n, 0.0, draws, true);
    }
}

double NodePool::gap(std::uint32_t n, const ReplicaDraws& draws, bool first) {
    const std::uint32_t law =
        fleet_.node_failure_laws.empty() ? fleet_.node_failures : fleet_.node_failure_laws[n];
    if (law == kNoDistribution) return kInf;
    const double gpus = static_cast<double>(gpn_);
    // Per-node laws (a replayed trace) are taken as they are, from t = 0.
    const bool replayed = !fleet_.node_failure_laws.empty();
    const double x =
        first && fleet_.stationary_start && !replayed
            ? draws.forward_recurrence(EntityKind::Node, n, Purpose::Failure, law, nodes_[n].draws, gpus)
            : draws.law(EntityKind::Node, n, Purpose::Failure, law, nodes_[n].draws, gpus);
    return nodes_[n].lemon && !replayed ? x / fleet_.lemon_factor : x;
}

void NodePool::arm(std::uint32_t n, double t, const ReplicaDraws& draws, bool first) {
    NodeState& node = nodes_[n];
    if (!fleet_.node_failure_times) {
        node.fail_draw = gap(n, draws, first);
        node.next_failure = t + node.fail_draw;
        return;
    }
    // Recorded times: the next one at or after t; those that fell while the
    // node was out of service are skipped.
    const std::uint32_t times = fleet_.node_failure_laws[n];
    const std::uint32_t reported = fleet_.node_failure_reported[n];
    const double gpus = static_cast<double>(gpn_);
    node.next_failure = kInf;
    node.fail_draw = kInf;
    if (times == kNoDistribution) return;
    do {
        node.next_failure = draws.law(EntityKind::Node, n, Purpose::Failure, times, node.draws, gpus);
        node.fail_draw = reported == kNoDistribution
                             ? kInf
                             : draws.law(EntityKind::Node, n, Purpose::Repair, reported, node.replayed, gpus);
    } while (node.next_failure < t);
}

double NodePool::fire(std::uint32_t n) {
    NodeState& node = nodes_[n];
    const double drawn = node.fail_draw;
    node.next_failure = kInf;  // the next gap is drawn once the failure's effects are known
    return drawn;
}

void NodePool::renew(std::uint32_t n, double t, const ReplicaDraws& draws) {
    NodeState& node = nodes_[n];
    if (!node.in_service) return;  // it starts again, fresh, when the node returns
    arm(n, t, draws, false);
}

double NodePool::repair_time(std::uint32_t m, const ReplicaDraws& draws) {
    if (fleet_.repair == kNoDistribution) return 0.0;
    return draws.law(EntityKind::Node, m, Purpose::Repair, fleet_.repair, nodes_[m].draws,
                     static_cast<double>(gpn_));
}

void NodePool::leave_service(std::uint32_t m, double t) {
    NodeState& node = nodes_[m];
    if (node.in_service) {
        node.in_service = false;
        node.out_since = t;
        node.next_failure = kInf;  // no failure process out of service
        pool_remove(m);
        if (node.acquiring_for >= 0) drop_acquisition(m);  // back in the cold reserve when it returns
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
    node.quarantined_until = t + q.duration;
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
    for (const NodeState& node : nodes_)
        if (!node.in_service) count_out_of_service_hours(node, end);
}

std::vector<std::uint32_t> NodePool::return_to_service(std::uint32_t n, double t, const ReplicaDraws& draws) {
    NodeState& node = nodes_[n];
    count_out_of_service_hours(node, t);
    node.in_service = true;
    arm(n, t, draws, false);
    std::vector<std::uint32_t> reserved = std::move(node.reserved);
    node.reserved.clear();
    for (std::uint32_t j : reserved) --reserved_[j];
    return reserved;
}

std::uint32_t NodePool::healthiest(std::uint32_t p) const {
    const std::vector<std::uint32_t>& pool = pools_[p];
    std::uint32_t best = pool.front();
    for (std::uint32_t n : pool) {
        const NodeState& a = nodes_[n];
        const NodeState& b = nodes_[best];
        if (a.last_failure < b.last_failure || (a.last_failure == b.last_failure && n < best)) best = n;
    }
    return best;
}

bool NodePool::take_for_recovery(std::uint32_t j, double t, const ReplicaDraws& draws,
                                 std::vector<std::uint32_t>& touched) {
    const std::uint32_t need = missing(j);
    const std::uint32_t used = plans_[j].gpus_per_node;
    if (need > 0 && used < gpn_) {
        // A job smaller than a node: best fit among partly free nodes, then
        // a hot spare, then a cold spare.
        const std::int64_t now = available_now(j);
        if (now >= 0) {
            take_chosen(j, static_cast<std::uint32_t>(now));
        } else if (!pools_[cold_pool_].empty()) {
            acquire(j, healthiest(cold_pool_), t, draws, touched);
        } else {
            return false;
        }
    } else if (need > 0) {
        const std::size_t now = pools_[gpn_].size() + pools_[spare_pool_].size();
        if (now + pools_[cold_pool_].size() < need) return false;
        for (std::uint32_t k = 0; k < need; ++k) {
            if (!pools_[spare_pool_].empty()) {
                ++totals_.spare_uses;
                attach(j, healthiest(spare_pool_));
            } else if (!pools_[gpn_].empty()) {
                attach(j, healthiest(gpn_));
            } else {
                acquire(j, healthiest(cold_pool_), t, draws, touched);
            }
        }
    }
    // A node available now beats a cold spare still on its way: the
    // acquisition that would end last is cancelled (its node is an idle cold
    // spare again).
    while (acquiring_[j] > 0) {
        const std::int64_t now = available_now(j);
        if (now < 0) break;
        std::int64_t last = -1;
        for (std::uint32_t n : acquisitions_) {
            if (nodes_[n].acquiring_for != static_cast<std::int32_t>(j)) continue;
            const double at = nodes_[n].acquired_at;
            if (last < 0 || at > nodes_[last].acquired_at || (at == nodes_[last].acquired_at && n > last))
                last = n;
        }
        const auto cancelled = static_cast<std::uint32_t>(last);
        drop_acquisition(cancelled);
        repool(cancelled);
        touched.push_back(cancelled);
        take_chosen(j, static_cast<std::uint32_t>(now));
    }
    return acquiring_[j] == 0 && missing(j) == 0;
}

std::int64_t NodePool::available_now(std::uint32_t j) const {
    const std::uint32_t used = plans_[j].gpus_per_node;
    if (used < gpn_) {
        for (std::uint32_t k = used; k <= gpn_; ++k)
            if (!pools_[k].empty()) return healthiest(k);
    }
    if (!pools_[spare_pool_].empty()) return healthiest(spare_pool_);
    if (!pools_[gpn_].empty()) return healthiest(gpn_);
    return -1;
}

void NodePool::acquire(std::uint32_t j, std::uint32_t n, double t, const ReplicaDraws& draws,
                       std::vector<std::uint32_t>& touched) {
    pool_remove(n);
    NodeState& node = nodes_[n];
    const double delay = draws.law(EntityKind::Node, n, Purpose::Replace, fleet_.cold_spare_delay, node.draws,
                                   static_cast<double>(gpn_));
    if (!(delay > 0.0)) {
        ++totals_.cold_spare_uses;
        attach(j, n);
        return;
    }
    node.acquiring_for = static_cast<std::int32_t>(j);
    node.acquired_at = t + delay;
    ++acquiring_[j];
    acquisitions_.push_back(n);
    touched.push_back(n);
}

void NodePool::drop_acquisition(std::uint32_t n) {
    NodeState& node = nodes_[n];
    --acquiring_[static_cast<std::uint32_t>(node.acquiring_for)];
    node.acquiring_for = -1;
    node.acquired_at = kInf;
    acquisitions_.erase(std::find(acquisitions_.begin(), acquisitions_.end(), n));
}

std::uint32_t NodePool::finish_acquisition(std::uint32_t n) {
    const auto j = static_cast<std::uint32_t>(nodes_[n].acquiring_for);
    drop_acquisition(n);
    ++totals_.cold_spare_uses;
    attach(j, n);
    return j;
}

bool NodePool::take_free(std::uint32_t j) {
    const std::uint32_t need = missing(j);
    const std::uint32_t used = plans_[j].gpus_per_node;
    if (used < gpn_) {
        for (std::uint32_t k = used; k <= gpn_; ++k) {
            if (!pools_[k].empty()) {
                attach(j, pools_[k].back());
                return true;
            }
        }
        return false;
    }
    if (pools_[gpn_].size() < need) return false;
    for (std::uint32_t k = 0; k < need; ++k) attach(j, pools_[gpn_].back());
    return true;
}

void NodePool::candidates(std::uint32_t j, bool recovering, double t, PlacementCandidates& out) const {
    const std::uint32_t used = plans_[j].gpus_per_node;
    std::vector<std::uint32_t>& ids = out.nodes;
    ids.clear();
    for (std::uint32_t k = used; k <= gpn_; ++k) {
        if (used == gpn_ && k != gpn_) continue;  // whole-node jobs take whole free nodes
        ids.insert(ids.end(), pools_[k].begin(), pools_[k].end());
    }
    if (recovering) ids.insert(ids.end(), pools_[spare_pool_].begin(), pools_[spare_pool_].end());
    std::sort(ids.begin(), ids.end());
    out.failures.resize(ids.size());
    out.since_failure.resize(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const NodeState& node = nodes_[ids[i]];
        out.failures[i] = node.failures;
        out.since_failure[i] = t - node.last_failure;  // inf when it never failed
    }
}

void NodePool::count_out_of_service(double t, std::uint32_t& down, std::uint32_t& quarantined) const {
    down = quarantined = 0;
    for (const NodeState& n : nodes_) {
        if (n.in_service) continue;
        if (t < n.quarantined_until)
            ++quarantined;
        else
            ++down;
    }
}

void NodePool::check_invariants() const {
    if (!fleet_.enabled) return;
    std::vector<std::uint32_t> used(nodes_.size(), 0);
    for (std::uint32_t j = 0; j < held_.size(); ++j) {
        for (std::uint32_t n : held_[j]) {
            const auto& on = nodes_[n].jobs;
            if (std::count(on.begin(), on.end(), j) != 1)
                throw std::logic_error("invariant: job " + std::to_string(j) + " holds node " +
                                       std::to_string(n) + " that does not list it");
            used[n] += plans_[j].gpus_per_node;
        }
    }
    for (std::uint32_t p = 0; p < pools_.size(); ++p) {
        for (std::uint32_t k = 0; k < pools_[p].size(); ++k) {
            const NodeState& node = nodes_[pools_[p][k]];
            if (node.pool != static_cast<std::int32_t>(p) || node.pos != k)
                throw std::logic_error("invariant: pool bookkeeping");
        }
    }
    for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
        const NodeState& node = nodes_[n];
        if (used[n] + node.free_gpus != gpn_)
            throw std::logic_error("invariant: node " + std::to_string(n) + " GPUs do not add up");
        for (std::uint32_t j : node.jobs) {
            if (std::count(held_[j].begin(), held_[j].end(), n) != 1)
                throw std::logic_error("invariant: node " + std::to_string(n) +
                                       " lists a job that does not hold it");
        }
        const bool pooled = node.pool >= 0;
        if (pooled && (!node.in_service || !node.reserved.empty()))
            throw std::logic_error("invariant: node " + std::to_string(n) +
                                   " is in a pool while out of service");
        if (pooled && node.pool == static_cast<std::int32_t>(spare_pool_) && !node.jobs.empty())
            throw std::logic_error("invariant: a hot spare runs a job");
        const bool acquiring = node.acquiring_for >= 0;
        if (node.in_service && node.reserved.empty() && node.free_gpus > 0 && !pooled && !acquiring)
            throw std::logic_error("invariant: free node " + std::to_string(n) + " is in no pool");
        if (!node.reserved.empty() && node.in_service)
            throw std::logic_error("invariant: node reserved while in service");
        check_cold(n);
    }
    std::vector<std::uint32_t> acquiring(acquiring_.size(), 0);
    for (std::uint32_t n : acquisitions_) {
        if (nodes_[n].acquiring_for < 0) throw std::logic_error("invariant: cold-spare acquisition list");
        ++acquiring[static_cast<std::uint32_t>(nodes_[n].acquiring_for)];
    }
    if (acquiring != acquiring_) throw std::logic_error("invariant: acquisitions per job do not add up");
    if (pools_[spare_pool_].size() > fleet_.spares)
        throw std::logic_error("invariant: more hot spares than the fleet holds back");
}

void NodePool::check_cold(std::uint32_t n) const {
    const NodeState& node = nodes_[n];
    const bool pooled = node.pool >= 0;
    if (pooled && node.pool == static_cast<std::int32_t>(cold_pool_) && (!node.cold || !node.jobs.empty()))
        throw std::logic_error("invariant: the cold reserve holds node " + std::to_string(n) +
                               ", busy or not a cold spare");
    if (node.acquiring_for < 0) {
        if (node.acquired_at != kInf)
            throw std::logic_error("invariant: node " + std::to_string(n) + " has a stale acquisition");
        return;
    }
    const bool listed = std::count(acquisitions_.begin(), acquisitions_.end(), n) == 1;
    if (!node.cold || !node.in_service || pooled || !node.jobs.empty() || !node.reserved.empty() ||
        !std::isfinite(node.acquired_at) ||
        static_cast<std::size_t>(node.acquiring_for) >= acquiring_.size() || !listed)
        throw std::logic_error("invariant: cold spare " + std::to_string(n) +
                               " in acquisition is also somewhere else");
}

}  // namespace acesim

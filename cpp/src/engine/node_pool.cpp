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
      processes_(fleet, gpus_per_node),
      calendar_(fleet) {
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
    for (std::uint32_t n : held_[j]) {  // in the order the job took them
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
    if (node.in_service) {
        node.in_service = false;
        node.out_since = t;
        processes_.stop(m);  // no failure process out of service
        leave_spares(m);
        pool_remove(m);
        if (node.acquiring_for >= 0) drop_acquisition(m);  // back in the cold reserve when it returns
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

void NodePool::cancel_acquisitions(std::uint32_t j) {
    for (std::size_t k = acquisitions_.size(); k-- > 0;) {
        const std::uint32_t n = acquisitions_[k];
        if (nodes_[n].acquiring_for != static_cast<std::int32_t>(j)) continue;
        drop_acquisition(n);
        repool(n);
        touched_.push_back(n);
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

bool NodePool::take_for_recovery(std::uint32_t j, const ReplicaDraws& draws) {
    const std::uint32_t need = missing(j);
    const std::uint32_t used = plans_[j].gpus_per_node;
    if (need > 0 && used < gpn_) {
        // A job smaller than a node: best fit among partly free nodes, then
        // a hot spare, then a cold spare.
        const std::int64_t now = available_now(j);
        if (now >= 0) {
            take_chosen(j, static_cast<std::uint32_t>(now));
        } else if (!pools_[cold_pool_].empty()) {
            acquire(j, healthiest(cold_pool_), draws);
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
                acquire(j, healthiest(cold_pool_), draws);
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
        touched_.push_back(cancelled);
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

void NodePool::acquire(std::uint32_t j, std::uint32_t n, const ReplicaDraws& draws) {
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
    node.acquired_at = now_ + delay;
    ++acquiring_[j];
    acquisitions_.push_back(n);
    touched_.push_back(n);
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
    std::uint32_t retired = 0;
    std::uint32_t retired_cold = 0;
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
        processes_.check(n, node.in_service, !node.jobs.empty(), now_);
        // Planned maintenance: begun windows are past, the next one ahead,
        // and a node inside a window is out of service.
        calendar_.check(n, now_);
        if (node.maintained_until > now_ && node.in_service)
            throw std::logic_error("invariant: node " + std::to_string(n) + " in service during maintenance");
        if (node.retired && (node.in_service || node.quarantined_until < kInf || !node.reserved.empty()))
            throw std::logic_error("invariant: retired node " + std::to_string(n) + " is back or reserved");
        if (node.cure_on_return && node.in_service)
            throw std::logic_error("invariant: node " + std::to_string(n) +
                                   " in service with a pending cure");
        if (node.pool == static_cast<std::int32_t>(spare_pool_) && node.spare_since > now_)
            throw std::logic_error("invariant: hot spare " + std::to_string(n) +
                                   " entered the pool in the future");
        check_cold(n);
        retired += node.retired ? 1u : 0u;
        retired_cold += node.retired && node.cold ? 1u : 0u;
    }
    if (retired != totals_.retired_nodes || retired_cold != retired_cold_)
        throw std::logic_error("invariant: retired node count");
    std::vector<std::uint32_t> waits(held_.size(), 0);
    for (const NodeState& node : nodes_)
        for (std::uint32_t j : node.reserved) ++waits[j];
    if (waits != reserved_) throw std::logic_error("invariant: reservation counts");
    if (!touched_.empty()) throw std::logic_error("invariant: node events left to reschedule");
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

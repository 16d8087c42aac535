// The node pool of one replica: node health, the job-node links, the free
// pools (by free GPU count), the hot spares and the cold spares (with their
// acquisitions in flight), node failure processes (on wall-clock or busy
// time, under a time-varying intensity), repair (through the repair model:
// a law or a pipeline, misdiagnosis), quarantine and retirement, planned
// maintenance and WAIT_REPAIR reservations. It reports what is due and
// changes node state when told; it never calls jobs or the heap.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <unordered_map>
#include <vector>

#include "acesim/simulator.hpp"
#include "draws.hpp"
#include "maintenance.hpp"
#include "node_processes.hpp"
#include "placement_rules.hpp"
#include "plans.hpp"
#include "repair.hpp"
#include "slice_arena.hpp"

namespace acesim {

/// The first element equal to `value` in [first, last), or `last`: what
/// std::find returns. A long list (a 4,096-node job's held nodes, searched
/// at each of its node failures) is scanned 64 elements at a time by a loop
/// without an early exit, which compilers vectorize; std::find's loop does
/// not vectorize and compares one element a cycle.
inline std::uint32_t* find_value(std::uint32_t* first, std::uint32_t* last, std::uint32_t value) {
    constexpr std::ptrdiff_t kBlock = 64;
    while (last - first >= kBlock) {
        std::uint32_t seen = 0;
        // 0 or all ones per element: a compare and an or, nothing to mask.
        for (std::ptrdiff_t i = 0; i < kBlock; ++i)
            seen |= 0u - static_cast<std::uint32_t>(first[i] == value);
        if (seen != 0) break;
        first += kBlock;
    }
    return std::find(first, last, value);
}

/// Removes `value` (which must be in [first, last)), keeping the order of
/// the others: the job and node lists keep placement order (the blamed
/// index depends on it). Removing the last is the common case.
inline void remove_in_order(std::uint32_t* first, std::uint32_t* last, std::uint32_t value) {
    if (last[-1] == value) return;
    std::uint32_t* at = find_value(first, last, value);
    std::copy(at + 1, last, at);
}

/// The jobs placed on a node, in placement order: up to kInline in the node
/// itself (a node of 8 GPUs holds at most 8 jobs of a GPU or more), beyond
/// that in a vector. Releasing a node then reads no memory outside it.
class NodeJobs {
public:
    static constexpr std::uint32_t kInline = 8;

    std::uint32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    const std::uint32_t* begin() const { return size_ <= kInline ? inline_ : more_->data(); }
    const std::uint32_t* end() const { return begin() + size_; }
    std::uint32_t operator[](std::uint32_t i) const { return begin()[i]; }
    /// A copy, for a caller that changes the links while it walks them.
    std::vector<std::uint32_t> copy() const { return {begin(), end()}; }

    void push_back(std::uint32_t j) {
        if (size_ < kInline) {
            inline_[size_++] = j;
            return;
        }
        if (size_ == kInline)
            more_ = std::make_unique<std::vector<std::uint32_t>>(inline_, inline_ + kInline);
        more_->push_back(j);
        ++size_;
    }
    /// Removes j (which must be there), keeping the others' order.
    void remove(std::uint32_t j) {
        if (size_ <= kInline) {
            remove_in_order(inline_, inline_ + size_, j);
            --size_;
            return;
        }
        more_->erase(std::find(more_->begin(), more_->end(), j));
        if (--size_ == kInline) {
            std::copy(more_->begin(), more_->end(), inline_);
            more_.reset();
        }
    }

private:
    std::uint32_t size_ = 0;
    std::uint32_t inline_[kInline] = {};
    std::unique_ptr<std::vector<std::uint32_t>> more_;  ///< every job while there are more than kInline
};

/// A slot of a wide job's node list that no longer holds a node (NodeSlice).
inline constexpr std::uint32_t kVacant = std::numeric_limits<std::uint32_t>::max();
/// Slots per count of a wide job's node list (NodeSlice).
inline constexpr std::uint32_t kHeldBlock = 64;

/// The nodes a job holds: a slice of the pool's SliceArena, held while it
/// holds a node, so jobs cost no allocation of their own. A job keeps its
/// slice's first slot, its node count and the slots used (12 bytes a job);
/// the pool changes it (NodePool::attach, detach), everyone else reads it
/// through a NodeList.
///
/// A narrow job's slice is as wide as its node count (a job never holds
/// more; nor more than the fleet has): a node it gives back is removed and
/// the later ones move up, which costs at most that width.
///
/// A wide job's (more than kHeldBlock whole nodes) would cost 16,384 moves
/// for a node change of a 16,384-node job: its slice has twice its node
/// count in slots, then one count per kHeldBlock of them. A node it takes
/// goes in the next slot (the slice is compacted, in order, when it has
/// none left: at most once per node count of changes); a node it gives
/// back leaves its slot kVacant (found through NodeState::held_slot) and
/// its block's count goes down. Both are O(1); the nodes keep the order in
/// which the job took them, and the i-th (the blamed node of a job-level
/// failure) is found by walking the counts, then one block.
struct NodeSlice {
    std::uint32_t first = 0;  ///< its first slot in the flat array
    std::uint32_t size = 0;   ///< nodes held
    std::uint32_t end = 0;    ///< slots used: the nodes and the kVacant slots among them
};

/// A read-only view of the nodes a job holds, in the order it took them;
/// valid until the pool next changes them. Iterating skips the kVacant
/// slots of a wide job's slice (NodeSlice).
class NodeList {
public:
    class Iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = std::uint32_t;
        using difference_type = std::ptrdiff_t;
        using pointer = const std::uint32_t*;
        using reference = const std::uint32_t&;

        Iterator() = default;
        Iterator(const std::uint32_t* at, const std::uint32_t* end) : at_(at), end_(end) { skip(); }
        reference operator*() const { return *at_; }
        Iterator& operator++() {
            ++at_;
            skip();
            return *this;
        }
        Iterator operator++(int) {
            Iterator before = *this;
            ++*this;
            return before;
        }
        bool operator==(const Iterator& o) const { return at_ == o.at_; }
        bool operator!=(const Iterator& o) const { return at_ != o.at_; }

    private:
        void skip() {
            while (at_ != end_ && *at_ == kVacant) ++at_;
        }
        const std::uint32_t* at_ = nullptr;
        const std::uint32_t* end_ = nullptr;
    };

    NodeList(const std::uint32_t* data, std::uint32_t size, std::uint32_t end = 0,
             const std::uint32_t* counts = nullptr)
        : data_(data), size_(size), end_(counts ? end : size), counts_(counts) {}
    std::uint32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    /// The last node (a slice never ends with a kVacant slot).
    std::uint32_t back() const { return data_[end_ - 1]; }
    Iterator begin() const { return {data_, data_ + end_}; }
    Iterator end() const { return {data_ + end_, data_ + end_}; }
    /// The i-th node in the order the job took them.
    std::uint32_t operator[](std::uint32_t i) const {
        if (end_ == size_) return data_[i];  // no kVacant slot
        std::uint32_t block = 0;
        while (i >= counts_[block]) i -= counts_[block++];
        for (const std::uint32_t* at = data_ + block * kHeldBlock;; ++at)
            if (*at != kVacant && i-- == 0) return *at;
    }

private:
    const std::uint32_t* data_;
    std::uint32_t size_;
    std::uint32_t end_;
    const std::uint32_t* counts_;  ///< a wide job's counts per block (null: a narrow job's)
};

/// Cache-line aligned: what a placement and a release change (the jobs,
/// free GPUs and pool position) is in its first line.
struct alignas(64) NodeState {
    NodeJobs jobs;  ///< jobs placed on it
    std::uint32_t free_gpus = 0;
    std::int32_t pool = -1;  ///< index into pools_, -1: none
    std::uint32_t pos = 0;   ///< position in that pool
    bool in_service = true;
    bool lemon = false;
    bool ever_quarantined = false;
    double down_until = -std::numeric_limits<double>::infinity();
    double quarantined_until = -std::numeric_limits<double>::infinity();
    double out_since = 0.0;      ///< when it last left service (its repair and quarantine spans start there)
    std::uint32_t failures = 0;  ///< failures observed on it
    double last_failure = -std::numeric_limits<double>::infinity();
    DrawCounters draws = {};
    std::vector<std::uint32_t> reserved;  ///< WAIT_REPAIR jobs waiting for it
    std::vector<double> recent;           ///< failure times inside the quarantine window
    double maintained_until = -std::numeric_limits<double>::infinity();
    bool retired = false;         ///< quarantined for good: never returns
    bool cure_on_return = false;  ///< its repair fixed it: a lemon returns healthy
    std::uint32_t diagnoses = 0;  ///< misdiagnosis decisions drawn with it as the faulty node
    double spare_since = 0.0;     ///< when it last entered the hot-spare pool

    bool cold = false;                ///< a cold spare (borrowed): idle, it waits in the cold reserve
    std::int32_t acquiring_for = -1;  ///< in acquisition for this job (-1: none)
    double acquired_at = std::numeric_limits<double>::infinity();  ///< when that acquisition ends
    std::uint32_t out_pos = 0;  ///< position in the out-of-service list while out of service
    std::uint32_t held_slot = 0;  ///< its slot in the node list of the wide job holding it (NodeSlice)
};

/// Node-level totals of one replica, for the fleet rollup.
struct NodeTotals {
    std::uint32_t node_failures = 0;
    std::uint32_t quarantines = 0;
    std::uint32_t quarantined_nodes = 0;
    std::uint32_t spare_uses = 0;
    double quarantined_node_hours = 0.0;
    double down_node_hours = 0.0;
    double maintenance_node_hours = 0.0;
    std::uint32_t retired_nodes = 0;
    double spare_idle_node_hours = 0.0;
    std::uint32_t cold_spare_uses = 0;
};

class NodePool;

/// The node pool's consistency checks (node_pool_audit.cpp).
class NodePoolAudit {
public:
    explicit NodePoolAudit(const NodePool& pool) : p_(pool) {}
    void check_invariants() const;

private:
    void check_cold(std::uint32_t n) const;
    /// Job j's node list (NodeSlice): counts, slots and order.
    void check_held(std::uint32_t j) const;
    const NodePool& p_;
};

class NodePool {
    friend class PlacementRules;
    friend class NodePoolAudit;

public:
    NodePool(const FleetSpec& fleet, const QuarantineSpec& quarantine, std::uint32_t gpus_per_node,
             const std::vector<JobPlan>& plans);

    /// Nodes, lemons, hot spares and first failure draws (no-op without a fleet).
    void init(const ReplicaDraws& draws);

    bool enabled() const { return fleet_.enabled; }
    std::uint32_t size() const { return static_cast<std::uint32_t>(nodes_.size()); }
    const NodeState& node(std::uint32_t n) const { return nodes_[n]; }
    DrawCounters& counters(std::uint32_t n) { return nodes_[n].draws; }
    const NodeTotals& totals() const { return totals_; }

    // --- job-node links -----------------------------------------------------
    NodeList nodes_of(std::uint32_t j) const {
        const NodeSlice& held = held_[j];
        if (held.size == 0) return {nullptr, 0};
        const std::uint32_t* data = slots_.at(held.first);
        if (!wide(j)) return {data, held.size};
        return {data, held.size, held.end, data + capacity(j)};
    }
    /// WAIT_REPAIR nodes job j waits for.
    std::uint32_t reserved(std::uint32_t j) const { return reserved_[j]; }
    /// Cold spares in acquisition for job j.
    std::uint32_t acquiring(std::uint32_t j) const { return acquiring_[j]; }
    /// The nodes job j holds that are out of service, in the order it holds
    /// them (a recovery's failed nodes). Only nodes that left service while
    /// it held them since its last call can be, so those are looked at (a
    /// job of 4,096 nodes scanned them all at every recovery); several in
    /// one recovery are put in order by a scan of its nodes.
    void held_out_of_service(std::uint32_t j, std::vector<std::uint32_t>& out);
    /// Nodes job j lacks (neither held, nor reserved, nor in acquisition).
    /// Job j has every node it needs (none reserved, on its way or missing).
    bool has_all_nodes(std::uint32_t j) const {
        return reserved(j) == 0 && acquiring(j) == 0 && missing(j) == 0;
    }
    std::uint32_t missing(std::uint32_t j) const {
        return plans_[j].nodes - held_[j].size - reserved_[j] - acquiring_[j];
    }
    /// A job submitted from outside (FleetModel): its slice of the node lists.
    void add_job();
    void attach(std::uint32_t j, std::uint32_t n) {
        NodeState& node = nodes_[n];
        node.jobs.push_back(j);
        node.free_gpus -= plans_[j].gpus_per_node;
        add_held(j, n);
        repool(n);
        if (processes_.busy_clock() && node.jobs.size() == 1) busy_changed(n);
    }
    void detach(std::uint32_t j, std::uint32_t n) {
        NodeState& node = nodes_[n];
        node.jobs.remove(j);
        node.free_gpus += plans_[j].gpus_per_node;
        remove_held(j, n);
        repool(n);
        if (processes_.busy_clock() && node.jobs.empty()) busy_changed(n);
    }
    void release_all(std::uint32_t j) {
        while (held_[j].size > 0) detach(j, nodes_of(j).back());
        departed_.erase(j);
    }
    /// WAIT_REPAIR: job j waits for node m to come back.
    void reserve(std::uint32_t j, std::uint32_t m) {
        nodes_[m].reserved.push_back(j);
        ++reserved_[j];
        leave_spares(m);
        pool_remove(m);
    }
    /// Job j no longer waits for any node.
    void unreserve_all(std::uint32_t j);
    /// Job j gives up what it kept for a recovery: the nodes under repair it
    /// waits for and the cold spares on their way to it.
    void drop_claims(std::uint32_t j) {
        unreserve_all(j);
        rules_.cancel_acquisitions(j);
    }

    // --- free capacity -------------------------------------------------------
    /// Node n is in the hot-spare pool now.
    bool is_spare(std::uint32_t n) const { return nodes_[n].pool == static_cast<std::int32_t>(spare_pool_); }
    /// Attaches a node chosen among the candidates (counts a spare use).
    void take_chosen(std::uint32_t j, std::uint32_t n) {
        if (nodes_[n].pool == static_cast<std::int32_t>(spare_pool_)) ++totals_.spare_uses;
        attach(j, n);
    }
    /// Some free GPU outside the spares (or a hot spare, with lend_spares).
    bool capacity_left() const {
        for (std::uint32_t k = 1; k <= gpn_; ++k)
            if (!pools_[k].empty()) return true;
        return fleet_.lend_spares && !pools_[spare_pool_].empty();
    }
    /// A start of job j from the queue would find its nodes now (what
    /// PlacementRules::take_free checks).
    bool can_start(std::uint32_t j) const {
        const std::uint32_t need = missing(j);
        if (need == 0) return true;
        const std::uint32_t spares = fleet_.lend_spares ? free_spares() : 0;
        const std::uint32_t used = plans_[j].gpus_per_node;
        if (used == gpn_) return free_whole_nodes() + spares >= need;
        return free_nodes_with(used) + spares > 0;
    }
    /// The node take_free gives a job of `used` GPUs, smaller than a node (-1: none).
    std::int64_t peek_free_gpus(std::uint32_t used) const {
        for (std::uint32_t k = used; k <= gpn_; ++k)
            if (!pools_[k].empty()) return pools_[k].back();
        if (fleet_.lend_spares && !pools_[spare_pool_].empty()) return pools_[spare_pool_].back();
        return -1;
    }
    /// Free nodes outside the spares with at least `gpus` free GPUs.
    std::uint32_t free_nodes_with(std::uint32_t gpus) const {
        std::uint32_t n = 0;
        for (std::uint32_t k = std::max(gpus, 1u); k <= gpn_; ++k)
            n += static_cast<std::uint32_t>(pools_[k].size());
        return n;
    }
    /// Hot spares missing from the spare pool (the next nodes to come free refill it).
    std::uint32_t spare_deficit() const { return fleet_.spares - free_spares(); }
    bool lends_spares() const { return fleet_.lend_spares; }
    std::uint32_t gpus_per_node() const { return gpn_; }
    /// Nodes now out of service (repair, quarantine, maintenance, retired), in no particular order.
    const std::vector<std::uint32_t>& out_of_service() const { return out_; }
    /// Moves on whenever a node's free GPUs, pool, service or return time change.
    std::uint64_t changes() const { return changes_; }
    /// Nodes a recovering job j could take now or acquire (whole free nodes,
    /// hot and idle cold spares for a whole-node job; a smaller job needs one
    /// node that fits).
    std::uint32_t free_for_recovery(std::uint32_t j) const {
        return plans_[j].gpus_per_node == gpn_ ? free_whole_nodes() + free_spares() + free_cold_spares() : 0;
    }
    std::uint32_t free_whole_nodes() const { return static_cast<std::uint32_t>(pools_[gpn_].size()); }
    std::uint32_t free_spares() const { return static_cast<std::uint32_t>(pools_[spare_pool_].size()); }
    /// Idle cold spares (not in acquisition).
    std::uint32_t free_cold_spares() const { return static_cast<std::uint32_t>(pools_[cold_pool_].size()); }

    // --- failures, repair, quarantine --------------------------------------
    /// The wall time of the event being handled (busy clocks pause and
    /// resume at it when jobs come and go).
    void set_now(double t) { now_ = t; }
    /// Nodes whose next event moved since the last call (a busy clock paused
    /// or resumed): the caller reschedules them, then calls clear_touched().
    const std::vector<std::uint32_t>& touched() const { return touched_; }
    void clear_touched() { touched_.clear(); }
    /// When node n, out of service, returns (the latest of its repair,
    /// quarantine and maintenance).
    double return_time(std::uint32_t n) const {
        const NodeState& node = nodes_[n];
        return std::max(std::max(node.down_until, node.quarantined_until), node.maintained_until);
    }
    /// Wall time of node n's next event (a failure or the end of its
    /// acquisition while in service, its return while out; inf: none).
    double next_event(std::uint32_t n) const {
        const NodeState& node = nodes_[n];
        return node.in_service ? std::min(processes_.next_failure(n), node.acquired_at) : return_time(n);
    }
    bool failure_due(std::uint32_t n, double t) const {
        return nodes_[n].in_service && processes_.next_failure(n) <= t;
    }
    bool return_due(std::uint32_t n, double t) const { return !nodes_[n].in_service && t >= return_time(n); }
    bool acquisition_due(std::uint32_t n, double t) const {
        const NodeState& node = nodes_[n];
        return node.in_service && node.acquiring_for >= 0 && node.acquired_at <= t;
    }
    /// Node n's failure process fires: returns the draw that fired. The
    /// process waits for renew() (the failure may take the node out of service).
    double fire(std::uint32_t n) { return processes_.fire(n); }
    /// After a failure of n at t: a node still in service draws its next gap
    /// (a renewal in wall-clock time); one out of service draws it when it returns.
    void renew(std::uint32_t n, double t, const ReplicaDraws& draws);
    /// A failure event strikes node m at t.
    void count_failure(std::uint32_t m, double t) {
        ++totals_.node_failures;
        ++nodes_[m].failures;
        nodes_[m].last_failure = t;
    }
    /// Node m, in service, goes to repair at t: out of service for `detect`
    /// plus its repair (a law's draw or a pipeline walk); a repair that
    /// fixes it cures a lemon when it returns.
    void send_to_repair(std::uint32_t m, double t, double detect, const ReplicaDraws& draws);
    /// The node that goes to repair for a failure of `faulty` that
    /// interrupted job j: with the fleet's misdiagnosis probability, one of
    /// j's other nodes (uniformly among those in service outside the struck
    /// block [first, last)); `faulty` itself otherwise, or when j has none.
    std::uint32_t diagnosed(std::uint32_t faulty, std::uint32_t j, std::uint32_t first, std::uint32_t last,
                            const ReplicaDraws& draws);
    /// Node m, in service, leaves it at t for repair until `until`. Its
    /// failure process stops until it returns; an acquisition of it in
    /// flight is cancelled.
    void take_down(std::uint32_t m, double t, double until);
    /// Node m is under repair (not quarantined): WAIT_REPAIR waits for it.
    bool under_repair_only(std::uint32_t m, double t) const {
        const NodeState& node = nodes_[m];
        return !node.in_service && !(node.quarantined_until > t);
    }
    /// Counts a failure of m toward quarantine; true when m was quarantined
    /// (retired for good when the quarantine's duration is infinite).
    bool note_failure_for_quarantine(std::uint32_t m, double t);
    /// Nodes retired for good.
    std::uint32_t retired() const { return totals_.retired_nodes; }
    /// Whether a job of `nodes` nodes can never start again: retired nodes
    /// never return; every other node does (from repair, from a quarantine).
    /// A start from the queue never takes the hot spares, which are refilled
    /// first, nor the cold spares; a recovering job may take both.
    bool can_never_place(std::uint32_t nodes, bool from_queue) const {
        const std::uint32_t alive = fleet_.nodes - totals_.retired_nodes;
        if (!from_queue) return nodes > alive;
        const std::uint32_t own = alive - (fleet_.cold_spares - retired_cold_);  // the fleet's own nodes
        if (fleet_.lend_spares) return nodes > own;  // it may take the hot spares too
        return nodes > (own > fleet_.spares ? own - fleet_.spares : 0);
    }
    /// Node n is back in service at t, with a fresh failure draw (repaired
    /// as good as new); returns the WAIT_REPAIR jobs that waited for it (in
    /// reservation order), for the caller to re-attach.
    std::vector<std::uint32_t> return_to_service(std::uint32_t n, double t, const ReplicaDraws& draws);
    /// Ends the node-hour accounting at the end of the simulated span.
    void close(double end);

    // --- planned maintenance -------------------------------------------------
    const MaintenanceCalendar& maintenance() const { return calendar_; }
    /// Node m enters its next maintenance window at t, until `until`; it
    /// leaves service (if it has not already) and has no failures meanwhile.
    void begin_maintenance(std::uint32_t m, double t, double until);
    /// The earliest maintenance start not yet begun on any node job j holds (inf: none).
    double next_drain(std::uint32_t j) const { return calendar_.next_start(nodes_of(j)); }
    /// Puts a node back where it belongs after its reservations are served.
    void settle(std::uint32_t n) { repool(n); }
    /// Out-of-service nodes at t: (under repair, quarantined).
    void count_out_of_service(double t, std::uint32_t& down, std::uint32_t& quarantined) const;

    /// The built-in placement rules over this pool (placement_rules.hpp).
    PlacementRules& rules() { return rules_; }
    const PlacementRules& rules() const { return rules_; }

    /// Throws std::logic_error when the pools, links or GPU counts disagree.
    void check_invariants() const { NodePoolAudit(*this).check_invariants(); }

private:
    /// The most nodes job j can hold.
    std::uint32_t slice_width(std::uint32_t j) const { return std::min(plans_[j].nodes, fleet_.nodes); }
    /// Job j's node list is a wide one (NodeSlice): more than kHeldBlock
    /// nodes, each held whole (no other job on it: NodeState::held_slot is
    /// its slot in j's list).
    bool wide(std::uint32_t j) const { return slice_width(j) > kHeldBlock && plans_[j].gpus_per_node == gpn_; }
    /// Node slots of job j's slice: its width, twice that (in whole blocks) for a wide job.
    std::uint32_t capacity(std::uint32_t j) const {
        return wide(j) ? wide_capacity(slice_width(j)) : slice_width(j);
    }
    static std::uint32_t wide_capacity(std::uint32_t width) {
        return (2 * width + kHeldBlock - 1) / kHeldBlock * kHeldBlock;
    }
    /// Slots of job j's slice: its node slots, then a wide job's counts.
    std::uint32_t span(std::uint32_t j) const {
        return wide(j) ? capacity(j) + capacity(j) / kHeldBlock : slice_width(j);
    }
    /// The widest slice a job of this fleet can take.
    static std::uint32_t widest_span(std::uint32_t nodes) {
        const std::uint32_t wide = wide_capacity(nodes);
        return std::max(nodes, wide + wide / kHeldBlock);
    }
    /// Job j holds node n too, after the others.
    void add_held(std::uint32_t j, std::uint32_t n) {
        NodeSlice& held = held_[j];
        if (!wide(j)) {
            if (held.size == 0) held.first = slots_.take(span(j));
            slots_.at(held.first)[held.size++] = n;
            held.end = held.size;
            return;
        }
        const std::uint32_t slots = capacity(j);
        if (held.size == 0) {
            held.first = slots_.take(span(j));
            held.end = 0;
            std::uint32_t* counts = slots_.at(held.first) + slots;
            std::fill(counts, counts + slots / kHeldBlock, 0u);
        } else if (held.end == slots) {
            compact(j);
        }
        std::uint32_t* data = slots_.at(held.first);
        nodes_[n].held_slot = held.end;
        ++data[slots + held.end / kHeldBlock];
        data[held.end++] = n;
        ++held.size;
    }
    /// Job j no longer holds node n; the others keep their order. A job that
    /// holds none gives its slice back.
    void remove_held(std::uint32_t j, std::uint32_t n) {
        NodeSlice& held = held_[j];
        std::uint32_t* first = slots_.at(held.first);
        if (!wide(j)) {
            remove_in_order(first, first + held.size, n);
            held.end = held.size - 1;
        } else {
            const std::uint32_t at = nodes_[n].held_slot;
            first[at] = kVacant;
            --first[capacity(j) + at / kHeldBlock];
            if (at + 1 == held.end) {  // no slice ends with a kVacant slot
                while (held.end > 0 && first[held.end - 1] == kVacant) --held.end;
            }
        }
        if (--held.size == 0) slots_.give(held.first, span(j));
    }
    /// Moves wide job j's nodes to the first slots of its slice, in order,
    /// and counts them again.
    void compact(std::uint32_t j);

    void pool_add(std::uint32_t n, std::uint32_t p) {
        ++changes_;
        NodeState& node = nodes_[n];
        node.pool = static_cast<std::int32_t>(p);
        node.pos = static_cast<std::uint32_t>(pools_[p].size());
        pools_[p].push_back(n);
    }
    void pool_remove(std::uint32_t n) {
        ++changes_;
        NodeState& node = nodes_[n];
        if (node.pool < 0) return;
        auto& pool = pools_[node.pool];
        const std::uint32_t last = pool.back();
        pool[node.pos] = last;
        nodes_[last].pos = node.pos;
        pool.pop_back();
        node.pool = -1;
    }
    /// Puts a node where it belongs: a whole free cold spare back in the
    /// cold reserve (it is borrowed: it never becomes a hot spare or a free
    /// node), another whole free node in the hot spares while they are
    /// short, else the pool of its free GPU count, or none (out of service,
    /// reserved, in acquisition or full).
    void repool(std::uint32_t n) {
        NodeState& node = nodes_[n];
        const bool was_spare = node.pool == static_cast<std::int32_t>(spare_pool_);
        pool_remove(n);
        if (node.in_service && node.reserved.empty() && node.free_gpus > 0 && node.acquiring_for < 0) {
            const bool whole = node.free_gpus == gpn_ && node.jobs.empty();
            if (whole && node.cold) {
                pool_add(n, cold_pool_);
            } else if (whole && pools_[spare_pool_].size() < fleet_.spares) {
                pool_add(n, spare_pool_);
            } else {
                pool_add(n, node.free_gpus);
            }
        }
        // A spare put back in the spare pool stays in it: its stint goes on.
        const bool spare = node.pool == static_cast<std::int32_t>(spare_pool_);
        if (spare && !was_spare) node.spare_since = now_;
        if (was_spare && !spare) count_spare_stint(node, now_);
    }
    /// Node n leaves the hot-spare pool now (if it is in it).
    void leave_spares(std::uint32_t n) {
        if (nodes_[n].pool == static_cast<std::int32_t>(spare_pool_)) count_spare_stint(nodes_[n], now_);
    }
    void count_spare_stint(const NodeState& node, double end) {
        totals_.spare_idle_node_hours += (end - node.spare_since) / 3600.0;
    }
    /// Node n's failure process (re)starts or renews at t.
    void start_process(std::uint32_t n, double t, const ReplicaDraws& draws, bool first) {
        NodeState& node = nodes_[n];
        processes_.start(n, t, !node.jobs.empty(), node.lemon, draws, node.draws, first);
    }
    /// Busy clock: node n went idle (pause) or busy (resume) at now_.
    void busy_changed(std::uint32_t n) {
        if (nodes_[n].in_service && processes_.busy_changed(n, !nodes_[n].jobs.empty(), now_))
            touched_.push_back(n);
    }
    void leave_service(std::uint32_t m, double t);
    /// Adds node m's repair and quarantine spans, cut at `end`, to the totals.
    void count_out_of_service_hours(const NodeState& node, double end);

    const FleetSpec& fleet_;
    const QuarantineSpec& quarantine_;
    std::uint32_t gpn_;
    RepairModel repair_;
    const std::vector<JobPlan>& plans_;
    std::vector<NodeState> nodes_;
    std::vector<std::vector<std::uint32_t>> pools_;
    std::uint32_t spare_pool_ = 0;
    std::uint32_t cold_pool_ = 0;
    SliceArena slots_;  ///< the slices of the jobs that hold nodes
    std::vector<NodeSlice> held_;
    std::vector<std::uint32_t> reserved_;
    NodeTotals totals_;
    NodeProcesses processes_;
    double now_ = 0.0;
    std::vector<std::uint32_t> touched_;
    MaintenanceCalendar calendar_;
    PlacementRules rules_{*this};
    std::vector<std::uint32_t> candidates_;    ///< scratch: misdiagnosis candidates
    std::vector<std::uint32_t> acquiring_;     ///< per job: cold spares in acquisition for it
    std::vector<std::uint32_t> acquisitions_;  ///< cold spares in acquisition
    std::uint32_t retired_cold_ = 0;           ///< cold spares retired for good
    std::vector<std::uint32_t> out_;           ///< nodes out of service
    /// Per job (only those it concerns): nodes that left service while the
    /// job held them, since its last held_out_of_service call.
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> departed_;
    std::uint64_t changes_ = 0;
};

}  // namespace acesim

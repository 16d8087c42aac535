// EASY backfill (Lifka 1995; Mu'alem and Feitelson 2001): the reservation of
// the queue's blocked head, computed from the estimated ends of the jobs that
// hold nodes and the scheduled returns of nodes out of service, and the test
// that a later job may start now without delaying it.
//
// The head needs `need` nodes with `u` free GPUs each (u = its GPUs per node).
// Walking the releases in time order (each holder's estimated end, then job
// index; each node's scheduled return), a node counts once it is in service
// (or back), reserved for no WAIT_REPAIR job, and has u free GPUs; a node
// that comes wholly free while the spare pool is short refills it first (as
// the node pool does), unless spares are lent. The shadow time S is the
// first release at which `need` nodes count (every release at S included);
// the extra nodes are those counted at S beyond `need`. A job that fits now
// may start when its own estimated end is <= S, or when the nodes it takes
// that count at S and would no longer count are at most the extra nodes
// (which it then uses up). Estimates are not moved when a job overruns its
// own: S may then lie in the past, and no job ends before it. No S (the head
// cannot fit even after every known release): no reservation, every job
// that fits may start.
//
// A job smaller than a node is judged on the node the built-in placement
// would give it; an outside placement is then offered only the nodes that
// keep the reservation, so it changes no decision.
//
// The walk is lazy (it goes only as far as a decision needs) and reads no
// clock, so it is kept for the next dispatch when nothing it read changed.
// The queued jobs are kept by size class in queue order, so finding the next
// job that may start skips whole the classes that cannot.
#pragma once

#include <cstdint>
#include <limits>
#include <new>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "acesim/lifecycle.hpp"
#include "acesim/simulator.hpp"
#include "estimated_ends.hpp"
#include "live_slots.hpp"
#include "node_pool.hpp"
#include "plans.hpp"

namespace acesim {

class Reservation {
public:
    /// `nodes`: the fleet's (0 without one).
    Reservation(bool enabled, const SimulationInput& in, std::uint32_t nodes, const Plans& plans);

    bool enabled() const { return enabled_; }

    // --- estimated ends of the jobs that hold nodes -------------------------
    /// Job j holds (or may hold) nodes until about `end`.
    void set_end(std::uint32_t j, double end);
    /// Job j holds no node.
    void clear_end(std::uint32_t j);
    bool has_end(std::uint32_t j) const { return ends_.has(j); }
    /// Job j gives back every node it holds to the pool: it has no estimated end.
    void release_nodes(std::uint32_t j, NodePool& pool) {
        pool.release_all(j);
        if (enabled_) clear_end(j);
    }
    /// The estimated length of a run of job j started now, at its
    /// lifecycle's progress and interval (the EASY estimate).
    [[gnu::noinline]] double run_estimate(std::uint32_t j, const Lifecycle& life) const;

    // --- the queue's estimates ------------------------------------------------
    /// Job j joins the queue; a run of it started then is estimated to last
    /// `estimate` (constant while it waits in the queue).
    void enqueued(std::uint32_t j, double estimate);
    /// Job j leaves the queue (or starts after a failure).
    void dequeued(std::uint32_t j);
    /// The run estimate of queued job j (as given to enqueued()).
    double estimate(std::uint32_t j) const { return queued(j).estimate; }

    // --- one dispatch --------------------------------------------------------
    /// Job `head` (queued, not fitting) gets the reservation at time t.
    void begin(std::uint32_t head, double t, const NodePool& pool);
    /// The first queued job behind the last one returned (behind the head at
    /// first), in queue order, that may start now (-1: none): what a scan of
    /// the queue with allows() would find, without visiting the jobs of the
    /// size classes that cannot start.
    std::int64_t next(const NodePool& pool);
    /// An outside placement of job j (just returned by next()) may choose
    /// among `candidates` only the nodes that keep the head's reservation:
    /// drops the others (none when j ends by the shadow time, or takes whole
    /// nodes, or extra nodes are left).
    void keep_only(std::uint32_t j, std::vector<std::uint32_t>& candidates, const NodePool& pool) const;
    /// Job j, just returned by next(), started (its nodes attached).
    void started(std::uint32_t j, const NodePool& pool);
    /// The dispatch is over.
    void finish();

    /// Throws std::logic_error when the estimates disagree with the job-node links.
    void check_invariants(const NodePool& pool) const;

private:
    enum class Walk : std::uint8_t { Walking, Found, Exhausted };
    enum : std::uint8_t { kCounted = 1, kAbsorbed = 2, kReturned = 4, kTouched = 8 };
    static constexpr double kInf = std::numeric_limits<double>::infinity();

    using End = EstimatedEnds::End;
    struct Entry {  // of a min-heap; stale once its job's version moved on
        double key;
        std::uint32_t job;
        std::uint32_t version;
        bool operator>(const Entry& o) const { return key > o.key || (key == o.key && job > o.job); }
    };
    static void push(std::vector<Entry>& heap, const Entry& e);
    static void pop(std::vector<Entry>& heap);

    /// Processes the releases up to `limit` (stops at the shadow time).
    void walk_to(double limit, const NodePool& pool);
    /// The time of the next release (inf: none left).
    double next_time();
    /// Processes the next release.
    void step(const NodePool& pool);
    void release(std::uint32_t m, std::uint32_t gpus);
    void consider(std::uint32_t m, const NodePool& pool);
    /// Node m with `free_gpus` free GPUs at the shadow time counts for the head.
    bool counts(std::uint32_t m, std::uint32_t free_gpus) const {
        return (flags_[m] & kAbsorbed) == 0 && free_gpus >= used_;
    }
    /// A job of `gpus` GPUs per node placed on node m now, running past the
    /// shadow time, takes m from the head.
    bool spoils(std::uint32_t m, std::uint32_t gpus, const NodePool& pool) const {
        const std::uint32_t free = pool.node(m).free_gpus + freed_[m];
        return counts(m, free) && !counts(m, free - gpus);
    }
    /// Queued job j may start now: it fits, and its estimated end is `end`.
    /// A job smaller than a node is judged on the node the built-in
    /// placement would give it (with an outside placement too: see keep_only).
    bool allows(std::uint32_t j, double end, const NodePool& pool);

    // The queue by size class: jobs smaller than a node by GPUs per node
    // (1 .. gpn - 1), whole-node jobs by node count (class gpn - 1 + nodes).
    using Key = std::tuple<std::int64_t, double, std::uint32_t>;  ///< the queue's order
    Key key(std::uint32_t j) const {
        return {-static_cast<std::int64_t>(specs_[j].priority), specs_[j].submit, j};
    }
    std::uint32_t class_of(std::uint32_t j) const {
        const JobPlan& plan = plans_[j];
        return plan.gpus_per_node < gpn_ ? plan.gpus_per_node : gpn_ - 1 + plan.nodes;
    }
    struct Class {
        std::set<Key> jobs;        ///< in queue order
        std::vector<Entry> least;  ///< min-heap of their estimates (stale entries dropped lazily)
        std::size_t live = 0;
    };
    /// The jobs queued since the last look, still queued, join their classes.
    void register_arrivals();
    /// The least run estimate in class c (inf: none).
    double least_estimate(Class& c);
    /// Jobs of class c fit now.
    bool fits(std::uint32_t c, const NodePool& pool) const;

    bool enabled_;
    const Plans& all_plans_;
    const std::vector<JobPlan>& plans_;
    const JobTable& specs_;
    const std::vector<double>& time_limits_;
    std::uint32_t gpn_;

    EstimatedEnds ends_;
    /// What is kept per queued job.
    /// A queued job's (held only while it is queued).
    struct PerJob {
        double estimate = 0.0;  ///< its run estimate
        /// The enqueue that queued it: numbered across jobs, so an entry of
        /// a stay in the queue that ended is told from the one in force.
        std::uint32_t queue_version = 0;
        std::uint8_t registered = 0;  ///< counted in the queue's classes
    };
    /// Job j, which is queued.
    const PerJob& queued(std::uint32_t j) const {
        const PerJob* p = of_.find(j);
        if (p == nullptr) not_queued(j);
        return *p;
    }
    [[noreturn]] static void not_queued(std::uint32_t j);
    /// (j, version) is job j's stay in the queue in force.
    bool current(std::uint32_t j, std::uint32_t version) const {
        const PerJob* p = of_.find(j);
        return p != nullptr && p->queue_version == version;
    }
    LiveSlots<PerJob> of_;
    std::uint32_t enqueues_ = 0;  ///< enqueues so far (fewer than a replica's events)
    std::vector<End> pending_;    ///< ends set (inf: cleared) during a dispatch, applied after

    // The queue: estimates, the least of them, and the size classes waiting.
    std::vector<std::pair<std::uint32_t, std::uint32_t>> arrived_;  ///< (job, version) not yet registered
    std::vector<Class> classes_;
    std::vector<std::uint32_t> present_;  ///< classes with registered jobs, ascending
    Key after_{};                         ///< next(): the queue position reached

    // One dispatch.
    std::vector<std::uint32_t> freed_;  ///< GPUs released on each node by the walk
    std::vector<std::uint8_t> flags_;
    std::vector<std::uint32_t> touched_;
    std::vector<std::pair<double, std::uint32_t>> returns_;  ///< (scheduled return, node)
    std::size_t next_return_ = 0;
    bool returns_ready_ = false;
    std::vector<std::uint8_t> late_ok_;  ///< per GPUs per node: 0 unknown, 1 may start past S, 2 may not
    Walk state_ = Walk::Exhausted;
    double now_ = 0.0;
    double shadow_ = kInf;
    std::uint32_t used_ = 0;  ///< GPUs per node the head needs
    std::uint32_t need_ = 0;
    std::uint32_t avail_ = 0;
    std::uint32_t deficit_ = 0;  ///< spare-pool refills still ahead
    bool active_ = false;
    bool backfilled_ = false;  ///< a job started in this dispatch
    // A walk is kept for the next dispatch when nothing it read has changed
    // (the same head, no node or estimate changed, no job started).
    bool kept_ = false;
    std::uint32_t kept_head_ = 0;
    std::uint64_t kept_pool_ = 0;
    std::uint64_t kept_ends_ = 0;
};

}  // namespace acesim

// The event kernel of one replica: the clock, the heap of timed events, the
// sorted arrivals, the horizon and the version counters that void an
// entity's older entries (lazy deletion). Components never touch the heap:
// they ask (KernelRequests) and the engine schedules and pops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "acesim/event_heap.hpp"
#include "acesim/simulator.hpp"
#include "plans.hpp"

namespace acesim {

/// What the kernel hands the engine: a job's or a node's next event, or a
/// planned one (id: its index in the planned times).
struct DueEvent {
    double time;
    std::uint32_t id;
    bool node;
    bool planned = false;
    bool arrival = false;  ///< a job's submission (from the sorted arrivals, not the heap)
};

/// What the engine's parts ask of the kernel while an event is handled: a
/// job's or a node's next event at a time they computed, or a job's
/// pending entries void. The engine serves them in the order asked once the
/// part it called returns (ReplicaEngine::serve_requests), before the next
/// event is popped: the heap then holds what it would have held had each
/// been served at once (an entity's latest entry is its live one, and live
/// entries are ordered by (time, entity) alone).
class KernelRequests {
public:
    enum class Kind : std::uint8_t { Job, VoidJob, Node };
    struct Request {
        double time;
        std::uint32_t id;
        Kind kind;
    };
    /// Job j's next event is at `time`.
    void job_at(std::uint32_t j, double time) { pending_.push_back({time, j, Kind::Job}); }
    /// Job j has no pending event (its entries are void).
    void void_job(std::uint32_t j) { pending_.push_back({0.0, j, Kind::VoidJob}); }
    /// Node n's next event is at `time` (inf: none).
    void node_at(std::uint32_t n, double time) { pending_.push_back({time, n, Kind::Node}); }
    const std::vector<Request>& pending() const { return pending_; }
    bool empty() const { return pending_.empty(); }
    void clear() { pending_.clear(); }

private:
    std::vector<Request> pending_;
};

class EventKernel {
public:
    /// `arrivals`: the job indices in submission order (Plans::arrivals),
    /// which must outlive the kernel.
    EventKernel(const JobTable& jobs, const Arrivals& arrivals, std::uint32_t nodes, double horizon,
                std::uint64_t max_events, std::uint32_t replica, bool checking)
        : jobs_(jobs),
          arrivals_(arrivals),
          horizon_(horizon),
          max_events_(max_events),
          replica_(replica),
          checking_(checking),
          job_version_(jobs.size(), 0),
          node_version_(nodes, 0) {
        // Submissions wait in that list, not in the heap, so the heap only
        // holds what is running (it stays small and in cache). At equal
        // times a submission comes first, then by job index.
        heap_.reserve(nodes + 1024);
    }

    /// Job j's next event is at `time`; its earlier entries are void.
    void schedule_job(std::uint32_t j, double time) { heap_.push(time, j | kJobBit, ++job_version_[j]); }
    /// Voids job j's pending entries.
    void invalidate_job(std::uint32_t j) { ++job_version_[j]; }
    /// Node n's next event is at `time` (inf: none); its earlier entries are void.
    void schedule_node(std::uint32_t n, double time) {
        const std::uint32_t version = ++node_version_[n];
        if (time < kNever) heap_.push(time, n, version);
    }

    /// Fleet events known in advance (maintenance window starts) at these
    /// times, ascending. At equal times they come after every other event.
    void plan(std::vector<double> times) { planned_ = std::move(times); }

    /// The next live event up to the horizon (false: nothing is left).
    bool next(DueEvent& due) {
        for (;;) {
            if (next_planned_ < planned_.size()) {
                const double p = planned_[next_planned_];
                const bool first =
                    (heap_.empty() || p < heap_.top().time) &&
                    (next_arrival_ == arrivals_.size() || p < jobs_[arrivals_[next_arrival_]].submit);
                if (first) {
                    if (p > horizon_) return false;
                    count_event();
                    if (checking_ && p < now_)
                        throw std::logic_error("invariant: events ran backwards in time");
                    now_ = p;
                    due = DueEvent{p, static_cast<std::uint32_t>(next_planned_++), false, true};
                    return true;
                }
            }
            const bool arrival =
                next_arrival_ < arrivals_.size() &&
                (heap_.empty() || jobs_[arrivals_[next_arrival_]].submit <= heap_.top().time);
            if (!arrival && heap_.empty()) return false;
            Event e;
            if (arrival) {
                const std::uint32_t j = arrivals_[next_arrival_];
                e = Event{jobs_[j].submit, j | kJobBit, job_version_[j]};
                if (e.time > horizon_) return false;
                ++next_arrival_;
            } else {
                e = heap_.top();
                if (e.time > horizon_ || e.time == kNever) return false;  // nothing happens at infinity
                heap_.pop();
            }
            if (!live(e)) continue;  // superseded
            const bool is_node = (e.entity & kJobBit) == 0;
            const std::uint32_t id = e.entity & ~kJobBit;
            count_event();
            if (checking_ && e.time < now_) throw std::logic_error("invariant: events ran backwards in time");
            now_ = e.time;
            due = DueEvent{e.time, id, is_node, false, arrival};
            return true;
        }
    }

    double now() const { return now_; }
    std::uint64_t events() const { return events_; }
    /// The events it delivered (the rest of events() were applied without it).
    std::uint64_t delivered() const { return delivered_; }

    // --- transitions applied without the heap (JobTransitions::run_ahead) -----
    /// They count as events (the count is of what happened, heap or not).
    void count_routine(std::uint32_t n) { events_ += n; }
    /// Those that turned out to lie past the moment their job was stopped.
    void uncount_routine(std::uint32_t n) { events_ -= n; }
    /// The event bound is the engine's to judge (over_limit): the count may
    /// hold transitions ahead of the clock that are taken back.
    void defer_limit() { defer_limit_ = true; }
    bool over_limit() const { return events_ > max_events_; }
    [[noreturn]] void throw_over_limit() const {
        throw std::runtime_error(max_events_error(max_events_, replica_));
    }

    // --- an outside scheduler's run (FleetModel) ------------------------------
    /// A job submitted from outside (its events come from the heap only).
    void add_job() { job_version_.push_back(0); }
    /// The time of the next live event (inf: none); void entries are dropped.
    double peek() {
        while (!heap_.empty()) {
            if (live(heap_.top())) break;
            heap_.pop();
        }
        double t = heap_.empty() ? kNever : heap_.top().time;
        if (next_planned_ < planned_.size()) t = std::min(t, planned_[next_planned_]);
        return t;
    }
    /// The clock moves on to t with nothing happening (t >= now).
    void move_to(double t) {
        if (t > now_) now_ = t;
    }
    double horizon() const { return horizon_; }

    /// Whether job j's event at the time of `current` comes before it in
    /// the kernel's order at equal times (kJobBit): submissions, the fleet's
    /// events, the jobs' events by job index, planned events.
    static bool job_event_before(std::uint32_t j, const DueEvent& current) {
        if (current.planned) return true;
        if (current.node || current.arrival) return false;
        return j < current.id;
    }

private:
    /// The entry is its entity's latest (not superseded).
    bool live(const Event& e) const {
        const std::uint32_t id = e.entity & ~kJobBit;
        return e.version == ((e.entity & kJobBit) == 0 ? node_version_[id] : job_version_[id]);
    }
    void count_event() {
        ++delivered_;
        if (++events_ > max_events_ && !defer_limit_) throw_over_limit();
    }

    static constexpr double kNever = std::numeric_limits<double>::infinity();
    /// Heap entities: nodes are 0 .. n-1, jobs carry this bit. At equal
    /// times the fleet changes first (node events, by node index: failures,
    /// returns, acquisitions), then the jobs' events, by job index; a job's
    /// phase that ends at the instant one of its nodes fails is cut off.
    /// The order is a function of the times alone, never of the history
    /// that scheduled them, so simultaneous failures come up in the same
    /// order under every policy and in a replay.
    static constexpr std::uint32_t kJobBit = 0x80000000u;

    const JobTable& jobs_;
    const Arrivals& arrivals_;
    double horizon_;
    std::uint64_t max_events_;
    std::uint32_t replica_;
    bool checking_;
    bool defer_limit_ = false;
    EventHeap heap_;
    std::size_t next_arrival_ = 0;
    std::vector<double> planned_;
    std::size_t next_planned_ = 0;
    std::vector<std::uint32_t> job_version_;
    std::vector<std::uint32_t> node_version_;
    std::uint64_t events_ = 0;
    std::uint64_t delivered_ = 0;
    double now_ = -std::numeric_limits<double>::infinity();
};

}  // namespace acesim

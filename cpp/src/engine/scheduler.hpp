// The built-in scheduler: the queue (priority, then submission, then index)
// and the recovering jobs waiting for nodes, and the dispatch that hands
// free capacity out. It decides the order; the engine (its Host) places and
// starts jobs, so another scheduler can take its place without touching the
// lifecycle or the node pool.
#pragma once

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>
#include <tuple>
#include <vector>

#include "acesim/simulator.hpp"

namespace acesim {

class Scheduler {
public:
    Scheduler(const JobTable& jobs, Backfill backfill)
        : jobs_(jobs), where_(jobs.size(), kNowhere), easy_(backfill == Backfill::Easy) {}

    /// Job j joins the queue (first start, or again after REQUEUE / preemption).
    void enqueue(std::uint32_t j) {
        where_[j] = kQueue;
        queue_.insert(key(j));
    }
    /// Recovering job j waits for nodes.
    void wait(std::uint32_t j) {
        where_[j] = kWaiting;
        waiting_.insert(key(j));
    }
    /// Job j no longer waits (it was served another way).
    void stop_waiting(std::uint32_t j) {
        waiting_.erase(key(j));
        where_[j] = kNowhere;
    }
    /// Job j leaves the queue or the waiting set for good.
    void drop(std::uint32_t j) {
        if (where_[j] == kQueue) queue_.erase(key(j));
        if (where_[j] == kWaiting) waiting_.erase(key(j));
        where_[j] = kNowhere;
    }
    bool waiting(std::uint32_t j) const { return where_[j] == kWaiting; }
    /// A job submitted from outside (FleetModel).
    void add_job() { where_.push_back(kNowhere); }
    bool queued(std::uint32_t j) const { return where_[j] == kQueue; }
    /// The queued jobs in queue order (priority, then submission, then index).
    std::vector<std::uint32_t> queue() const {
        std::vector<std::uint32_t> out;
        out.reserve(queue_.size());
        for (const QueueKey& k : queue_) out.push_back(std::get<2>(k));
        return out;
    }

    /// Hands free capacity out: recovering jobs first (they hold idle nodes and
    /// may take hot spares), then the queue in priority order (from the spares
    /// only with lend_spares). A recovering job that does not fit holds back
    /// every queued job of lower priority.
    ///
    /// Greedy backfill: any queued job that fits starts, but a queued job that
    /// does not fit holds back every job of lower priority, so small
    /// low-priority jobs cannot starve a large high-priority one (they can
    /// within its priority level).
    ///
    /// EASY backfill: the first queued job that does not fit (the head) gets a
    /// reservation (see reservation.hpp); every later queued job, whatever its
    /// priority, starts only if it fits now and does not delay the head's
    /// reservation. Only the head is protected.
    ///
    /// Host: `reserved(j)` (nodes it waits for under WAIT_REPAIR),
    /// `acquiring(j)` (cold spares on their way to it: it holds nothing back),
    /// `place(j, recovering)` (takes the nodes j lacks, all or nothing),
    /// `start(j, t)`, `capacity_left()`; for EASY `reserve(head, t)`,
    /// `next_backfill()` (the next queued job behind the head that may start
    /// now, in queue order; -1: none), `backfilled(j)` (after place) and
    /// `unreserve()`. A start may dispatch again; that call is folded into
    /// this loop.
    template <class Host>
    void dispatch(double t, Host& host) {
        if (dispatching_) {
            dispatch_again_ = true;
            return;
        }
        dispatching_ = true;
        do {
            dispatch_again_ = false;
            std::int64_t blocked = std::numeric_limits<std::int64_t>::min();
            for (auto it = waiting_.begin(); it != waiting_.end();) {
                const std::uint32_t j = std::get<2>(*it);
                if (host.reserved(j) == 0 && host.place(j, true)) {
                    it = waiting_.erase(it);
                    where_[j] = kNowhere;
                    host.start(j, t);
                } else {
                    if (host.reserved(j) == 0 && host.acquiring(j) == 0)
                        blocked = std::max<std::int64_t>(blocked, jobs_[j].priority);
                    ++it;
                }
            }
            for (auto it = queue_.begin(); it != queue_.end();) {
                if (!host.capacity_left()) break;
                const std::uint32_t j = std::get<2>(*it);
                if (jobs_[j].priority < blocked) break;  // the queue is in priority order
                if (host.place(j, false)) {
                    it = queue_.erase(it);
                    where_[j] = kNowhere;
                    host.start(j, t);
                } else if (easy_) {
                    if (std::next(it) != queue_.end()) backfill(j, blocked, t, host);
                    break;
                } else {
                    blocked = std::max<std::int64_t>(blocked, jobs_[j].priority);
                    ++it;
                }
            }
        } while (dispatch_again_);
        dispatching_ = false;
    }

private:
    /// EASY behind `head`: the jobs that may start now without delaying its
    /// reservation start, in queue order (the host finds them: it skips the
    /// size classes that cannot).
    template <class Host>
    void backfill(std::uint32_t head, std::int64_t blocked, double t, Host& host) {
        host.reserve(head, t);
        while (host.capacity_left()) {
            const std::int64_t next = host.next_backfill();
            if (next < 0) break;
            const auto j = static_cast<std::uint32_t>(next);
            if (jobs_[j].priority < blocked) break;  // held back by a recovering job
            if (!host.place(j, false)) throw std::logic_error("invariant: a backfill found no nodes");
            queue_.erase(key(j));
            where_[j] = kNowhere;
            host.backfilled(j);
            host.start(j, t);
        }
        host.unreserve();
    }

    /// Queue order: priority (high first), then submission, then index.
    using QueueKey = std::tuple<std::int64_t, double, std::uint32_t>;
    enum : std::uint8_t { kNowhere, kQueue, kWaiting };

    QueueKey key(std::uint32_t j) const {
        return {-static_cast<std::int64_t>(jobs_[j].priority), jobs_[j].submit, j};
    }

    const JobTable& jobs_;
    std::vector<std::uint8_t> where_;
    std::set<QueueKey> queue_;
    std::set<QueueKey> waiting_;
    bool easy_;
    bool dispatching_ = false;
    bool dispatch_again_ = false;
};

}  // namespace acesim

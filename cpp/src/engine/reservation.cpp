#include "reservation.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"

namespace acesim {

Reservation::Reservation(bool enabled, const SimulationInput& in, std::uint32_t nodes, const Plans& plans)
    : enabled_(enabled),
      all_plans_(plans),
      plans_(plans.jobs),
      specs_(in.jobs),
      time_limits_(in.time_limits),
      gpn_(in.gpus_per_node) {
    if (!enabled) return;
    of_.resize(specs_.size());
    ends_.resize(specs_.size());
    late_ok_.assign(gpn_, 0);
    classes_.resize(gpn_ + nodes);
    freed_.assign(nodes, 0);
    flags_.assign(nodes, 0);
}

double Reservation::run_estimate(std::uint32_t j, const Lifecycle& life) const {
    // The time limit when there is one; else mean init + load, the work left
    // since the last checkpoint, and a mean write for each checkpoint still
    // ahead (the final one included).
    if (j < time_limits_.size() && std::isfinite(time_limits_[j])) return time_limits_[j];
    const JobProfile& profile = all_plans_.of(j);
    const double left = specs_[j].work - life.committed;
    return profile.restart + left + segment_count(left, life.interval) * profile.save_mean;
}

void Reservation::not_queued(std::uint32_t j) {
    throw std::logic_error("invariant: job " + std::to_string(j) +
                           "'s queue estimate was read while it was not queued");
}

void Reservation::push(std::vector<Entry>& heap, const Entry& e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
}

void Reservation::pop(std::vector<Entry>& heap) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
}

// --- estimated ends -----------------------------------------------------------

void Reservation::set_end(std::uint32_t j, double end) {
    if (active_) {
        pending_.emplace_back(end, j);  // the walk must not see it (see finish)
    } else {
        ends_.put(j, end);
    }
}

void Reservation::clear_end(std::uint32_t j) {
    if (active_) {
        pending_.emplace_back(kInf, j);
    } else {
        ends_.drop(j);
    }
}

// --- the queue ------------------------------------------------------------------

void Reservation::enqueued(std::uint32_t j, double estimate) {
    dequeued(j);
    if (arrived_.size() > 4096) {
        arrived_.erase(std::remove_if(arrived_.begin(), arrived_.end(),
                                      [&](const auto& a) { return !current(a.first, a.second); }),
                       arrived_.end());
    }
    PerJob& job = of_.add(j);
    job.estimate = estimate;
    job.queue_version = ++enqueues_;
    arrived_.emplace_back(j, job.queue_version);
}

void Reservation::dequeued(std::uint32_t j) {
    const PerJob* job = of_.find(j);
    if (job == nullptr) return;
    const bool registered = job->registered != 0;
    of_.remove(j);
    if (!registered) return;
    const std::uint32_t c = class_of(j);
    Class& cls = classes_[c];
    cls.jobs.erase(key(j));
    --cls.live;
    if (cls.jobs.empty()) present_.erase(std::lower_bound(present_.begin(), present_.end(), c));
}

void Reservation::register_arrivals() {
    for (const auto& [j, version] : arrived_) {
        if (!current(j, version)) continue;  // it left the queue unseen
        PerJob& job = *of_.find(j);
        job.registered = 1;
        const std::uint32_t c = class_of(j);
        Class& cls = classes_[c];
        if (cls.jobs.empty()) present_.insert(std::lower_bound(present_.begin(), present_.end(), c), c);
        cls.jobs.insert(key(j));
        ++cls.live;
        if (cls.least.size() > 2 * cls.live + 64) {
            cls.least.erase(std::remove_if(cls.least.begin(), cls.least.end(),
                                           [&](const Entry& e) { return !current(e.job, e.version); }),
                            cls.least.end());
            std::make_heap(cls.least.begin(), cls.least.end(), std::greater<>());
        }
        push(cls.least, Entry{job.estimate, j, version});
    }
    arrived_.clear();
}

double Reservation::least_estimate(Class& c) {
    while (!c.least.empty() && !current(c.least.front().job, c.least.front().version)) pop(c.least);
    return c.least.empty() ? kInf : c.least.front().key;
}

bool Reservation::fits(std::uint32_t c, const NodePool& pool) const {
    if (c < gpn_) return pool.peek_free_gpus(c) >= 0;
    const std::uint32_t spares = pool.lends_spares() ? pool.free_spares() : 0;
    return c - (gpn_ - 1) <= pool.free_whole_nodes() + spares;
}

std::int64_t Reservation::next(const NodePool& pool) {
    register_arrivals();
    // The first job, in queue order, behind after_ that allows() lets start:
    // in each class that fits, its first job behind after_, else (when it
    // may not start past the shadow time) its first one that ends by then.
    bool found = false;
    Key best{};
    for (std::uint32_t c : present_) {
        if (!fits(c, pool)) continue;
        Class& cls = classes_[c];
        auto it = cls.jobs.upper_bound(after_);
        if (it == cls.jobs.end() || (found && !(*it < best))) continue;
        const std::uint32_t j = std::get<2>(*it);
        if (allows(j, now_ + queued(j).estimate, pool)) {
            best = *it;
            found = true;
            continue;
        }
        // Refused: it ends after the shadow time (now known) and its class
        // may not; only a job of the class that ends by then may start.
        if (now_ + least_estimate(cls) > shadow_) continue;
        for (++it; it != cls.jobs.end() && (!found || *it < best); ++it) {
            if (now_ + queued(std::get<2>(*it)).estimate <= shadow_) {
                best = *it;
                found = true;
                break;
            }
        }
    }
    if (!found) return -1;
    after_ = best;
    return std::get<2>(best);
}

// --- one dispatch -----------------------------------------------------------------

void Reservation::begin(std::uint32_t head, double t, const NodePool& pool) {
    active_ = true;
    now_ = t;
    after_ = key(head);
    std::fill(late_ok_.begin(), late_ok_.end(), 0);
    if (kept_ && head == kept_head_ && pool.changes() == kept_pool_ && ends_.changes() == kept_ends_)
        return;  // the last dispatch's walk still holds (it reads no clock)
    kept_ = false;
    for (std::uint32_t m : touched_) {
        freed_[m] = 0;
        flags_[m] = 0;
    }
    touched_.clear();
    used_ = plans_[head].gpus_per_node;
    need_ = pool.missing(head);
    const bool lend = pool.lends_spares();
    avail_ = pool.free_nodes_with(used_) + (lend ? pool.free_spares() : 0);
    deficit_ = lend ? 0 : pool.spare_deficit();
    returns_ready_ = false;  // gathered when the walk first steps
    ends_.rewind();
    next_return_ = 0;
    shadow_ = kInf;
    state_ = Walk::Walking;
    if (avail_ >= need_) {
        shadow_ = -kInf;
        state_ = Walk::Found;
    }
    kept_head_ = head;
    kept_pool_ = pool.changes();
    kept_ends_ = ends_.changes();
}

double Reservation::next_time() {
    End end;
    const double e = ends_.peek(end) ? end.first : kInf;
    const double r = next_return_ < returns_.size() ? returns_[next_return_].first : kInf;
    return std::min(e, r);
}

void Reservation::release(std::uint32_t m, std::uint32_t gpus) {
    if ((flags_[m] & kTouched) == 0) {
        flags_[m] |= kTouched;
        touched_.push_back(m);
    }
    freed_[m] += gpus;
}

void Reservation::consider(std::uint32_t m, const NodePool& pool) {
    std::uint8_t& f = flags_[m];
    if ((f & (kCounted | kAbsorbed)) != 0) return;
    // A node reserved for a WAIT_REPAIR job is out of service and left out
    // of the returns.
    const NodeState& node = pool.node(m);
    if (!node.in_service && (f & kReturned) == 0) return;
    if (node.cold) return;  // a cold spare goes back to the cold reserve: never to the queue
    const std::uint32_t free = node.free_gpus + freed_[m];
    if (free == gpn_ && deficit_ > 0) {
        // It comes wholly free while the spare pool is short: it refills it.
        f |= kAbsorbed;
        --deficit_;
        return;
    }
    if (free >= used_) {
        f |= kCounted;
        ++avail_;
    }
}

void Reservation::step(const NodePool& pool) {
    End end;
    const double e = ends_.peek(end) ? end.first : kInf;
    const double r = next_return_ < returns_.size() ? returns_[next_return_].first : kInf;
    if (e <= r) {
        const std::uint32_t j = end.second;
        ends_.advance();
        const std::uint32_t gpus = plans_[j].gpus_per_node;
        for (std::uint32_t m : pool.nodes_of(j)) {
            release(m, gpus);
            consider(m, pool);
        }
    } else {
        const std::uint32_t m = returns_[next_return_++].second;
        release(m, 0);
        flags_[m] |= kReturned;
        consider(m, pool);
    }
}

void Reservation::walk_to(double limit, const NodePool& pool) {
    if (!returns_ready_) {
        returns_ready_ = true;
        returns_.clear();
        for (std::uint32_t n : pool.out_of_service()) {
            // A node a WAIT_REPAIR job waits for goes back to that job.
            if (!pool.node(n).reserved.empty() || pool.node(n).cold) continue;
            const double back = pool.next_event(n);
            if (back < kInf) returns_.emplace_back(back, n);
        }
        std::sort(returns_.begin(), returns_.end());
    }
    while (state_ == Walk::Walking) {
        const double e = next_time();
        if (e == kInf) {
            state_ = Walk::Exhausted;
            return;
        }
        if (e > limit) return;
        step(pool);
        if (avail_ >= need_) {
            shadow_ = e;
            while (next_time() == e) step(pool);  // every release at the shadow time
            state_ = Walk::Found;
        }
    }
}

bool Reservation::allows(std::uint32_t j, double end, const NodePool& pool) {
    if (state_ == Walk::Walking) walk_to(end, pool);
    if (state_ != Walk::Found || end <= shadow_) return pool.can_start(j);
    // It ends after the shadow time: it may take only nodes the head can spare.
    const std::uint32_t extra = avail_ - need_;
    const std::uint32_t gpus = plans_[j].gpus_per_node;
    if (gpus == gpn_) {
        // Whole free nodes (or lent spares), each of them one the head counts on.
        const std::uint32_t spares = pool.lends_spares() ? pool.free_spares() : 0;
        const std::uint32_t need = pool.missing(j);
        return need <= extra && need <= pool.free_whole_nodes() + spares;
    }
    // Smaller than a node: the node it would take (decided once per size
    // until the next start).
    std::uint8_t& late = late_ok_[gpus];
    if (late == 0) {
        const std::int64_t m = pool.peek_free_gpus(gpus);
        late = m >= 0 && (extra >= 1 || !spoils(static_cast<std::uint32_t>(m), gpus, pool)) ? 1 : 2;
    }
    return late == 1;
}

void Reservation::keep_only(std::uint32_t j, std::vector<std::uint32_t>& candidates,
                            const NodePool& pool) const {
    if (!active_ || state_ != Walk::Found || now_ + queued(j).estimate <= shadow_) return;
    const std::uint32_t gpus = plans_[j].gpus_per_node;
    if (gpus == gpn_ || avail_ - need_ >= 1) return;  // every choice is as good
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(),
                                    [&](std::uint32_t m) { return spoils(m, gpus, pool); }),
                     candidates.end());
}

void Reservation::started(std::uint32_t j, const NodePool& pool) {
    backfilled_ = true;
    const double end = now_ + queued(j).estimate;
    const std::uint32_t gpus = plans_[j].gpus_per_node;
    std::fill(late_ok_.begin(), late_ok_.end(), 0);
    if (state_ != Walk::Found || end <= shadow_) {
        // It is gone again by the time the walk has reached: its nodes are as before.
        for (std::uint32_t m : pool.nodes_of(j)) release(m, gpus);
        return;
    }
    for (std::uint32_t m : pool.nodes_of(j)) {
        const std::uint32_t after = pool.node(m).free_gpus + freed_[m];
        if (counts(m, after + gpus) && !counts(m, after)) --avail_;
    }
}

void Reservation::finish() {
    active_ = false;
    kept_ = !backfilled_ && pending_.empty();
    backfilled_ = false;
    for (const auto& [end, j] : pending_) {
        if (end == kInf) {
            ends_.drop(j);
        } else {
            ends_.put(j, end);
        }
    }
    pending_.clear();
}

void Reservation::check_invariants(const NodePool& pool) const {
    if (!enabled_) return;
    ends_.check([&](std::uint32_t j) { return !pool.nodes_of(j).empty(); });
    if (active_ || !pending_.empty())
        throw std::logic_error("invariant: a reservation outlived its dispatch");
}

}  // namespace acesim

// Binary min-heap of events keyed by (time, entity). Events at equal times
// run in the order of their entities' ids (the owner numbers them: the
// replica engine's nodes, then its jobs), never in the order they were
// scheduled: that order is the run's history, which differs between
// policies and between a run and its replay, so two policies would see
// simultaneous failures in different orders (and draw, say, a block's
// detection latency from different nodes' streams). Determinism never
// depends on pointer or hash order either.
#pragma once

#include <cstdint>
#include <vector>

namespace acesim {

/// One scheduled event; `version` lets an entity invalidate its older entries
/// (lazy deletion) instead of searching the heap. An entity has at most one
/// live entry, so (time, entity) orders the live events totally.
struct Event {
    double time;
    std::uint32_t entity;
    std::uint32_t version;
};

class EventHeap {
public:
    bool empty() const { return heap_.empty(); }
    std::size_t size() const { return heap_.size(); }
    const Event& top() const { return heap_.front(); }
    void clear() { heap_.clear(); }
    void reserve(std::size_t n) { heap_.reserve(n); }

    void push(double time, std::uint32_t entity, std::uint32_t version) {
        heap_.push_back({time, entity, version});
        sift_up(heap_.size() - 1);
    }

    Event pop() {
        const Event top = heap_.front();
        heap_.front() = heap_.back();
        heap_.pop_back();
        if (!heap_.empty()) sift_down(0);
        return top;
    }

private:
    static bool before(const Event& a, const Event& b) {
        return a.time < b.time || (a.time == b.time && a.entity < b.entity);
    }
    void sift_up(std::size_t i) {
        const Event e = heap_[i];
        while (i > 0) {
            const std::size_t parent = (i - 1) / 2;
            if (!before(e, heap_[parent])) break;
            heap_[i] = heap_[parent];
            i = parent;
        }
        heap_[i] = e;
    }
    void sift_down(std::size_t i) {
        const std::size_t n = heap_.size();
        const Event e = heap_[i];
        for (;;) {
            std::size_t child = 2 * i + 1;
            if (child >= n) break;
            if (child + 1 < n && before(heap_[child + 1], heap_[child])) ++child;
            if (!before(heap_[child], e)) break;
            heap_[i] = heap_[child];
            i = child;
        }
        heap_[i] = e;
    }

    std::vector<Event> heap_;
};

}  // namespace acesim

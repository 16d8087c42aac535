// The estimated ends of the jobs that hold nodes (EASY backfill): each
// running job's expected end, and the walk over them in time order that the
// reservation makes. Two tiers: a new end waits in a cheap heap (most jobs
// end before any walk needs them); the walk moves the ends it visits into an
// ordered set, where later walks find them in order.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <new>
#include <set>
#include <utility>
#include <vector>

#include "live_slots.hpp"

namespace acesim {

/// Freed nodes of one std::set, kept for its next inserts (a start then
/// costs no heap allocation).
class NodeRecycler {
public:
    NodeRecycler() = default;
    NodeRecycler(const NodeRecycler&) = delete;
    NodeRecycler& operator=(const NodeRecycler&) = delete;
    ~NodeRecycler() {
        for (void* p : free_) ::operator delete(p);
    }
    void* take(std::size_t size) {
        if (size == size_ && !free_.empty()) {
            void* p = free_.back();
            free_.pop_back();
            return p;
        }
        return ::operator new(size);
    }
    void give(void* p, std::size_t size) {
        if (size_ == 0) size_ = size;
        if (size == size_) {
            free_.push_back(p);
        } else {
            ::operator delete(p);
        }
    }

private:
    std::size_t size_ = 0;
    std::vector<void*> free_;
};

template <class T>
struct RecyclingAllocator {
    using value_type = T;
    NodeRecycler* recycler;
    explicit RecyclingAllocator(NodeRecycler* r) : recycler(r) {}
    template <class U>
    RecyclingAllocator(const RecyclingAllocator<U>& o) : recycler(o.recycler) {}
    T* allocate(std::size_t n) {
        return n == 1 ? static_cast<T*>(recycler->take(sizeof(T)))
                      : static_cast<T*>(::operator new(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) {
        if (n == 1) {
            recycler->give(p, sizeof(T));
        } else {
            ::operator delete(p);
        }
    }
    template <class U>
    bool operator==(const RecyclingAllocator<U>& o) const {
        return recycler == o.recycler;
    }
    template <class U>
    bool operator!=(const RecyclingAllocator<U>& o) const {
        return recycler != o.recycler;
    }
};

class EstimatedEnds {
public:
    /// An estimated end, ordered by time, then job.
    using End = std::pair<double, std::uint32_t>;

    EstimatedEnds() : settled_(RecyclingAllocator<End>(&recycler_)), cursor_(settled_.end()) {}
    void resize(std::size_t jobs) { of_.resize(jobs); }

    /// Job j holds nodes until about `end`.
    void put(std::uint32_t j, double end);
    /// Job j holds no node.
    void drop(std::uint32_t j);
    bool has(std::uint32_t j) const { return of_.find(j) != nullptr; }
    /// Counts every change (a walk over unchanged ends may be kept).
    std::uint64_t changes() const { return changes_; }

    // --- the walk, in time order --------------------------------------------
    void rewind() { cursor_ = settled_.begin(); }
    /// The walk's next end (false: none left); a fresh one is settled first,
    /// so the walk's next end is always the cursor's.
    bool peek(End& e);
    /// The walk passes its next end.
    void advance() { ++cursor_; }

    /// Throws std::logic_error when the two tiers disagree, or a job that
    /// holds nodes (`holds(j)`) has no end.
    void check(const std::function<bool(std::uint32_t)>& holds) const;

private:
    enum : std::uint8_t { kFresh, kSettled };
    using Ends = std::set<End, std::less<End>, RecyclingAllocator<End>>;
    struct Entry {  // of a min-heap; stale once its job's end is another (or none)
        double key;
        std::uint32_t job;
        std::uint32_t version;
        bool operator>(const Entry& o) const { return key > o.key || (key == o.key && job > o.job); }
    };
    /// The end of a job that holds nodes (a job that holds none has none).
    struct PerJob {
        double end = 0.0;
        /// The put that set it: puts are numbered across jobs, so an entry
        /// of an end dropped since is told from the end in force.
        std::uint32_t version = 0;
        std::uint8_t where = kFresh;  ///< kFresh or kSettled
    };
    /// Entry e is the end in force of its job.
    bool current(const Entry& e) const {
        const PerJob* p = of_.find(e.job);
        return p != nullptr && p->version == e.version;
    }

    NodeRecycler recycler_;  // before settled_: it outlives the set's nodes
    Ends settled_;
    Ends::const_iterator cursor_;
    std::vector<Entry> fresh_;
    std::size_t fresh_live_ = 0;
    LiveSlots<PerJob> of_;
    std::uint32_t puts_ = 0;  ///< puts so far (fewer than a replica's events, at most 2^30 by default)
    std::uint64_t changes_ = 0;
};

}  // namespace acesim

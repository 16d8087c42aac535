#include "estimated_ends.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace acesim {
namespace {
template <class Entry>
void push(std::vector<Entry>& heap, const Entry& e) {
    heap.push_back(e);
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
}
template <class Entry>
void pop(std::vector<Entry>& heap) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    heap.pop_back();
}
}  // namespace

void EstimatedEnds::drop(std::uint32_t j) {
    const PerJob* p = of_.find(j);
    if (p == nullptr) return;
    ++changes_;
    if (p->where == kSettled) settled_.erase(End{p->end, j});
    if (p->where == kFresh) --fresh_live_;
    of_.remove(j);
}

void EstimatedEnds::put(std::uint32_t j, double end) {
    drop(j);
    if (fresh_.size() > 2 * fresh_live_ + 64) {
        // Most entries are stale (their jobs ended unseen): drop them now and then.
        fresh_.erase(
            std::remove_if(fresh_.begin(), fresh_.end(), [&](const Entry& e) { return !current(e); }),
            fresh_.end());
        std::make_heap(fresh_.begin(), fresh_.end(), std::greater<>());
    }
    ++changes_;
    PerJob& p = of_.add(j);
    p.end = end;
    p.where = kFresh;
    p.version = ++puts_;
    ++fresh_live_;
    push(fresh_, Entry{end, j, p.version});
}

bool EstimatedEnds::peek(End& e) {
    while (!fresh_.empty() && !current(fresh_.front())) pop(fresh_);
    const bool settled = cursor_ != settled_.end();
    if (!fresh_.empty()) {
        const End fresh{fresh_.front().key, fresh_.front().job};
        if (!settled || fresh < *cursor_) {
            // Settle it: it goes in just before the walk's next settled end.
            pop(fresh_);
            --fresh_live_;
            of_.find(fresh.second)->where = kSettled;
            cursor_ = settled_.insert(cursor_, fresh);
            e = fresh;
            return true;
        }
    }
    if (!settled) return false;
    e = *cursor_;
    return true;
}

void EstimatedEnds::check(const std::function<bool(std::uint32_t)>& holds) const {
    std::size_t fresh = 0, settled = 0;
    for (std::uint32_t j = 0; j < of_.size(); ++j) {
        const PerJob* p = of_.find(j);
        if (holds(j) && p == nullptr)
            throw std::logic_error("invariant: job " + std::to_string(j) +
                                   " holds nodes without an estimated end");
        if (p == nullptr) continue;
        fresh += p->where == kFresh;
        settled += p->where == kSettled;
        if (p->where == kSettled && settled_.count(End{p->end, j}) != 1)
            throw std::logic_error("invariant: job " + std::to_string(j) + "'s estimated end is not listed");
    }
    std::size_t live = 0;
    for (const Entry& e : fresh_) live += current(e) ? 1 : 0;
    if (settled != settled_.size() || fresh != fresh_live_ || live != fresh_live_)
        throw std::logic_error("invariant: estimated ends bookkeeping");
}

}  // namespace acesim

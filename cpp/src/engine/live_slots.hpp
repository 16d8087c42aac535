// Per-job data that only some jobs have at a time (the few that hold nodes,
// or wait in the queue), kept in a small pool of slots reused as jobs leave:
// a job costs 4 bytes (its slot number) instead of the data itself.
#pragma once

#include <cstdint>
#include <vector>

namespace acesim {

template <class T>
class LiveSlots {
public:
    /// n jobs, none with data.
    void resize(std::size_t n) { slot_.resize(n, kNone); }
    std::size_t size() const { return slot_.size(); }

    /// Job j's data, or null when it has none.
    T* find(std::uint32_t j) { return slot_[j] == kNone ? nullptr : &data_[slot_[j]]; }
    const T* find(std::uint32_t j) const { return slot_[j] == kNone ? nullptr : &data_[slot_[j]]; }
    /// Job j's data, a fresh T when it had none.
    T& add(std::uint32_t j) {
        if (slot_[j] != kNone) return data_[slot_[j]];
        std::uint32_t s;
        if (!free_.empty()) {
            s = free_.back();
            free_.pop_back();
            data_[s] = T{};
        } else {
            s = static_cast<std::uint32_t>(data_.size());
            data_.emplace_back();
        }
        slot_[j] = s;
        return data_[s];
    }
    /// Job j has no data any more.
    void remove(std::uint32_t j) {
        if (slot_[j] == kNone) return;
        free_.push_back(slot_[j]);
        slot_[j] = kNone;
    }

private:
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;
    std::vector<std::uint32_t> slot_;  ///< per job: its slot, or kNone
    std::vector<T> data_;
    std::vector<std::uint32_t> free_;
};

}  // namespace acesim

// Shared checkpoint storage (Fleet(storage_bandwidth=B)): the checkpoint
// transfers in flight (durable writes, persists and loads of jobs with
// checkpoint_bytes) share B bytes per second equally (processor sharing), so
// a transfer takes longer when many jobs write at once. The per-event save,
// persist and load laws are the fixed part; the transfer follows it.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace acesim {

class StorageChannel {
public:
    explicit StorageChannel(double bandwidth) : bandwidth_(bandwidth) {}

    bool enabled() const { return bandwidth_ > 0.0; }
    bool empty() const { return active_.empty(); }

    /// Job j's transfer of `bytes` begins at t.
    void add(std::uint32_t j, double bytes, double t) {
        advance(t);
        active_.push_back({j, bytes, bytes / bandwidth_, t});
    }

    /// Job j's transfer ends (or is cut off) at t. Returns the seconds it
    /// took beyond its time alone on the storage (contention; 0 when cut off).
    double remove(std::uint32_t j, double t, bool finished) {
        advance(t);
        for (std::size_t k = 0; k < active_.size(); ++k) {
            if (active_[k].job != j) continue;
            const Transfer done = active_[k];
            active_[k] = active_.back();
            active_.pop_back();
            if (!finished) return 0.0;
            const double extra = (t - done.start) - done.solo;
            return extra > 0.0 ? extra : 0.0;
        }
        return 0.0;
    }

    /// The wall time job k's transfer ends if no transfer starts or ends before.
    double finish(std::size_t k) const {
        const double share = bandwidth_ / static_cast<double>(active_.size());
        return last_ + active_[k].remaining / share;
    }
    std::size_t size() const { return active_.size(); }
    std::uint32_t job(std::size_t k) const { return active_[k].job; }

private:
    struct Transfer {
        std::uint32_t job;
        double remaining;  ///< bytes left
        double solo;       ///< seconds it takes alone
        double start;
    };

    /// Every transfer in flight moved its share of the bandwidth since the last change.
    void advance(double t) {
        if (!active_.empty() && t > last_) {
            const double moved = (t - last_) * bandwidth_ / static_cast<double>(active_.size());
            for (Transfer& x : active_) x.remaining = x.remaining > moved ? x.remaining - moved : 0.0;
        }
        last_ = t;
    }

    double bandwidth_;
    double last_ = 0.0;
    std::vector<Transfer> active_;
};

}  // namespace acesim

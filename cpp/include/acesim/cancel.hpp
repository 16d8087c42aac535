// Stopping a long computation early: the caller (the bindings, when Python
// asks to stop: Ctrl-C) sets the flag; the workers poll it between
// replicas, every few hundred events and between blocks of draws, and the
// call then ends with Cancelled. The results of a cancelled call are not
// returned.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

namespace acesim {

/// The flag a long call polls. A call that runs on its caller's thread (too
/// short, by its size, to be worth a watcher thread; but a run whose jobs
/// fail without end is short by size and long in time) may also be given a
/// watch: a check that the polls made on that thread run at most once a
/// period (the bindings': let Python run its signal handlers). The watch
/// sets the flag when it asks to stop. The polls of other threads read
/// only the flag.
class CancelFlag {
public:
    using Watch = bool (*)(void*);

    explicit CancelFlag(bool set = false) : set_(set) {}
    CancelFlag(const CancelFlag&) = delete;
    CancelFlag& operator=(const CancelFlag&) = delete;

    bool load(std::memory_order order = std::memory_order_seq_cst) const { return set_.load(order); }
    void store(bool set, std::memory_order order = std::memory_order_seq_cst) { set_.store(set, order); }

    /// From now on, polls on this thread run `watch(data)` every `period`
    /// (the first after a period): true from it cancels.
    void watch_here(Watch watch, void* data, std::chrono::steady_clock::duration period) {
        owner_ = std::this_thread::get_id();
        period_ = period;
        next_ = std::chrono::steady_clock::now() + period;
        data_ = data;
        watch_ = watch;
    }

    /// Whether the call should stop (the flag, or the watch on its thread).
    bool poll() const {
        if (set_.load(std::memory_order_relaxed)) return true;
        if (watch_ == nullptr || std::this_thread::get_id() != owner_) return false;
        const auto now = std::chrono::steady_clock::now();
        if (now < next_) return false;
        next_ = now + period_;
        if (!watch_(data_)) return false;
        set_.store(true, std::memory_order_relaxed);
        return true;
    }

private:
    mutable std::atomic<bool> set_;
    Watch watch_ = nullptr;
    void* data_ = nullptr;
    std::thread::id owner_{};
    std::chrono::steady_clock::duration period_{};
    mutable std::chrono::steady_clock::time_point next_{};
};

struct Cancelled : std::runtime_error {
    Cancelled() : std::runtime_error("acesim: the computation was cancelled") {}
};

inline bool cancel_requested(const CancelFlag* flag) { return flag != nullptr && flag->poll(); }

inline void throw_if_cancelled(const CancelFlag* flag) {
    if (cancel_requested(flag)) throw Cancelled();
}

/// Frees `buffers` on a detached thread. A cancelled call holds rows it will
/// not return (gigabytes for millions of replicas, about 100 ms to unmap):
/// handing them to a thread lets the call return as soon as it stops.
template <class... Buffers>
void release_in_background(Buffers&&... buffers) {
    try {
        std::thread([](std::decay_t<Buffers>...) {}, std::move(buffers)...).detach();
    } catch (const std::system_error&) {
        // No thread to be had: the buffers are freed here, when they go out of scope.
    }
}

/// Throws Cancelled if cancellation was requested, first handing `buffers`
/// to release_in_background.
template <class... Buffers>
void throw_if_cancelled_releasing(const CancelFlag* flag, Buffers&... buffers) {
    if (!cancel_requested(flag)) return;
    release_in_background(std::move(buffers)...);
    throw Cancelled();
}

/// Polls every this many jobs in per-job set-up loops (about a millisecond).
constexpr std::size_t kPollJobs = std::size_t{1} << 14;

/// Resizes `rows` to `n` value-initialised elements a chunk at a time,
/// polling `flag` between chunks: a fleet of 1.7M jobs zeroes about a
/// gigabyte of rows and job state before its first event (the kernel's page
/// clearing), which Ctrl-C would otherwise wait out.
template <class Rows>
void resize_interruptibly(Rows& rows, std::size_t n, const CancelFlag* flag) {
    constexpr std::size_t kChunk = std::size_t{1} << 16;
    rows.reserve(n);
    while (rows.size() < n) {
        rows.resize(std::min(n, rows.size() + kChunk));
        throw_if_cancelled(flag);
    }
}

}  // namespace acesim

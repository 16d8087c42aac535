// Stopping a long computation early: the caller (the bindings, when Python
// asks to stop: Ctrl-C) sets the flag; the workers poll it between
// replicas, every few hundred events and between blocks of draws, and the
// call then ends with Cancelled. The results of a cancelled call are not
// returned.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

namespace acesim {

using CancelFlag = std::atomic<bool>;

struct Cancelled : std::runtime_error {
    Cancelled() : std::runtime_error("acesim: the computation was cancelled") {}
};

inline bool cancel_requested(const CancelFlag* flag) {
    return flag != nullptr && flag->load(std::memory_order_relaxed);
}

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

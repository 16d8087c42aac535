// Stopping a long computation early: the caller (the bindings, when Python
// asks to stop: Ctrl-C) sets the flag; the workers poll it between
// replicas, every few hundred events and between blocks of draws, and the
// call then ends with Cancelled. The results of a cancelled call are not
// returned.
#pragma once

#include <atomic>
#include <stdexcept>

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

}  // namespace acesim

// Long calls that Ctrl-C can stop. The work runs on a worker thread without
// the GIL while the calling thread waits, taking the GIL every 20 ms to let
// Python run its signal handlers (PyErr_CheckSignals). When a handler
// raises (KeyboardInterrupt for Ctrl-C), the cancel flag is set, the work
// stops at its next poll (acesim/cancel.hpp) and the handler's exception is
// raised here: the interpreter and acesim stay usable.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <utility>

#include "acesim/cancel.hpp"
#include "pybind.hpp"

namespace acesim::bindings {

/// Work below this many units (draws, replica x job rows, node-replicas)
/// runs on the calling thread, without a worker thread: it usually ends
/// within milliseconds, and a worker thread would cost more than the work.
constexpr std::uint64_t kInterruptibleFrom = 1u << 16;

/// A CancelFlag watch (on the calling thread, without the GIL): runs
/// Python's signal handlers; true, and `*interrupted` set, when one raised.
inline bool run_signal_handlers(void* interrupted) {
    py::gil_scoped_acquire acquire;
    if (PyErr_CheckSignals() == 0) return false;
    *static_cast<bool*>(interrupted) = true;
    return true;
}

/// Runs work() (which touches no Python object, or takes the GIL itself) so
/// that a signal stops it; returns what it returns. `units` sizes the work
/// (below kInterruptibleFrom it runs inline, GIL released, its polls
/// watching for signals: CancelFlag::watch_here).
template <class Work>
auto run_interruptible(CancelFlag& cancel, std::uint64_t units, Work&& work) -> decltype(work()) {
    using Result = decltype(work());
    Result result{};
    if (units < kInterruptibleFrom) {
        // Short by its size, but maybe long in time (jobs that fail without
        // end): the work's polls on this thread let the signal handlers run
        // every 20 ms, which costs nothing to a call that ends sooner.
        bool interrupted = false;
        cancel.watch_here(&run_signal_handlers, &interrupted, std::chrono::milliseconds(20));
        try {
            py::gil_scoped_release release;
            result = work();
        } catch (const Cancelled&) {
            if (!interrupted) throw;
        }
        if (interrupted) throw py::error_already_set();  // the handler's exception, still set
        return result;
    }
    std::exception_ptr error;
    bool done = false;
    bool interrupted = false;
    std::mutex m;
    std::condition_variable cv;
    {
        py::gil_scoped_release release;
        std::thread worker([&] {
            try {
                result = work();
            } catch (...) {
                error = std::current_exception();
            }
            {
                std::lock_guard<std::mutex> lock(m);
                done = true;
            }
            cv.notify_one();
        });
        std::unique_lock<std::mutex> lock(m);
        while (!cv.wait_for(lock, std::chrono::milliseconds(20), [&] { return done; })) {
            if (interrupted) continue;  // wait for the work to notice
            lock.unlock();
            {
                py::gil_scoped_acquire acquire;
                if (PyErr_CheckSignals() != 0) {
                    interrupted = true;
                    cancel.store(true, std::memory_order_relaxed);
                }
            }
            lock.lock();
        }
        lock.unlock();
        worker.join();
    }
    if (interrupted) throw py::error_already_set();  // the handler's exception, still set
    if (error) std::rethrow_exception(error);
    return result;
}

}  // namespace acesim::bindings

// Python callbacks that start simulations of their own (a look-ahead): each
// simulation started from a callback runs one level deeper on the C stack,
// and a chain of them would overflow it long before Python's recursion
// limit. The depth travels with the callback: a simulation (or FleetModel)
// started on a thread where a callback of a simulation at depth d runs is at
// depth d + 1, and past kMaxNesting it is refused with ReentrantCall
// (Python: acesim.ReentrantCallError).
#pragma once

#include <stdexcept>
#include <string>

namespace acesim::bindings {

/// The deepest a simulation may be started: the outermost is at depth 1.
constexpr int kMaxNesting = 8;

/// A simulation started too deep (Python: ReentrantCallError).
struct ReentrantCall : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// The depth of the simulation whose Python callback runs on this thread (0: none).
inline thread_local int callback_depth = 0;

/// The depth of a simulation (`what`: simulate, batch_simulate, FleetModel)
/// started now on this thread; throws ReentrantCall past kMaxNesting.
inline int nesting_depth(const char* what) {
    const int depth = callback_depth + 1;
    if (depth > kMaxNesting)
        throw ReentrantCall(std::string(what) + " called from a policy callback nested " +
                            std::to_string(depth) +
                            " deep: a callback may start simulations (a "
                            "look-ahead) up to " +
                            std::to_string(kMaxNesting) +
                            " deep, the outermost "
                            "counting as 1");
    return depth;
}

/// While a callback of a simulation at `depth` runs on this thread.
class CallbackDepth {
public:
    explicit CallbackDepth(int depth) : saved_(callback_depth) { callback_depth = depth; }
    ~CallbackDepth() { callback_depth = saved_; }
    CallbackDepth(const CallbackDepth&) = delete;
    CallbackDepth& operator=(const CallbackDepth&) = delete;

private:
    int saved_;
};

}  // namespace acesim::bindings

// The result tables of a run (rows: records.hpp) and the one helper that
// walks the tables a replica appends rows to.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "acesim/records.hpp"

namespace acesim {

/// An allocator that leaves elements default-initialized on resize: result
/// rows are written in full by the simulator, so zeroing them first would
/// only touch hundreds of megabytes twice.
template <class T>
struct uninitialized_allocator : std::allocator<T> {
    template <class U>
    struct rebind {
        using other = uninitialized_allocator<U>;
    };
    uninitialized_allocator() = default;
    template <class U>
    uninitialized_allocator(const uninitialized_allocator<U>&) noexcept {}
    template <class U, class... Args>
    void construct(U* p, Args&&... args) {
        if constexpr (sizeof...(Args) == 0) {
            ::new (static_cast<void*>(p)) U;
        } else {
            ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
        }
    }
};

/// Results of all replicas, rows ordered by replica then job (trace and
/// events by replica then time).
struct SimulationOutput {
    std::vector<JobRecord, uninitialized_allocator<JobRecord>> jobs;
    std::vector<FleetRecord> fleet;
    std::vector<TraceRecord> trace;
    std::vector<EventRecord> events;
    std::vector<PlacementRecord> placements;   ///< with record_events: the nodes of every start
    std::vector<NodeEventRecord> node_events;  ///< with record_events: nodes leaving and returning to service
};

// Every table but `jobs` is walked by for_each_table: one added here is added there.
static_assert(sizeof(SimulationOutput) ==
                  sizeof(SimulationOutput::jobs) + 5 * sizeof(std::vector<FleetRecord>),
              "SimulationOutput: a new table must be added to for_each_table");

/// Calls `f(name, table)` for each table a replica appends rows to (every
/// table but `jobs`, whose rows are written in place), in declaration
/// order: `name` is the table's name in Python, `table` a pointer to the
/// member, so that one call walks the same table of several outputs.
template <class F>
void for_each_table(F&& f) {
    f("fleet", &SimulationOutput::fleet);
    f("trace", &SimulationOutput::trace);
    f("events", &SimulationOutput::events);
    f("placements", &SimulationOutput::placements);
    f("node_events", &SimulationOutput::node_events);
}

/// Bytes the rows of `out`'s appended tables take.
inline std::size_t table_bytes(const SimulationOutput& out) {
    std::size_t bytes = 0;
    for_each_table([&](const char*, auto table) {
        const auto& rows = out.*table;
        bytes += rows.size() * sizeof(typename std::decay_t<decltype(rows)>::value_type);
    });
    return bytes;
}

/// Appends the rows of `from`'s appended tables to `to`'s.
inline void append_tables(SimulationOutput& to, const SimulationOutput& from) {
    for_each_table([&](const char*, auto table) {
        auto& rows = to.*table;
        rows.insert(rows.end(), (from.*table).begin(), (from.*table).end());
    });
}

/// Moves `from`'s appended tables into `to` (replacing what `to` held).
inline void move_tables(SimulationOutput& to, SimulationOutput&& from) {
    for_each_table([&](const char*, auto table) { to.*table = std::move(from.*table); });
}

}  // namespace acesim

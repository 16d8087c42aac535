// What one replica writes: the failure trace, the optional event log, and
// at the end each job's row closed at the horizon and the fleet rollup.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "acesim/single_job.hpp"
#include "job_states.hpp"
#include "node_pool.hpp"
#include "plans.hpp"

namespace acesim {

/// Adds a closed job row to its replica's fleet rollup (sums in job order;
/// the makespan is the latest end of a row that ran: never past the horizon).
void roll_up(FleetRecord& fleet, const JobRecord& row);
/// The rollup's fleet ETTR, once every row is in.
void finish_rollup(FleetRecord& fleet);

/// Failures one replica may record before the run is declared hopeless
/// (the trace's bound; about 48 bytes a row): the single-job kernel's.
constexpr std::size_t kMaxFailuresPerReplica = kSingleJobMaxFailures;

class Ledger {
public:
    Ledger(SimulationOutput& out, std::uint32_t replica, bool record_events)
        : out_(out), replica_(replica), record_events_(record_events), trace_begin_(out.trace.size()) {}

    /// A new failure event's number (rows of one event share it).
    std::uint32_t next_failure_event() { return next_event_++; }
    /// One trace row: `job` -1 when no running job was hit.
    void trace(std::uint32_t event, std::int32_t job, std::int32_t node, std::int32_t origin,
               std::int32_t cause, std::uint32_t source, double t, double drawn) {
        out_.trace.push_back({replica_, event, job, node, origin, cause, source, 0u, t, drawn});
    }
    /// Throws once the replica recorded more failures than a run can make progress with.
    void check_trace_bound() const;

    void log(std::uint32_t j, EventKind kind, double t, double progress, std::int32_t other = -1) {
        if (!record_events_) return;
        out_.events.push_back({replica_, j, static_cast<std::uint32_t>(kind), other, t, progress});
    }
    /// Job j's event at t, at its progress now.
    void log(std::uint32_t j, EventKind kind, double t, const JobState& job) {
        log(j, kind, t, job.life.committed);
    }
    bool recording() const { return record_events_; }
    /// With the event log: `nodes` leave service (kind 0 after failure event
    /// `event`, 2 for maintenance), come back (1), or are quarantined until
    /// `until` (3) or for good (4) at t (a NodeEventKind).
    void node_event(std::uint32_t node, std::uint32_t kind, double t, std::uint32_t event, std::int32_t cause,
                    double until = std::numeric_limits<double>::quiet_NaN()) {
        if (record_events_) out_.node_events.push_back({replica_, node, kind, event, cause, 0u, t, until});
    }
    /// With the event log: job j's start at t runs on these nodes.
    template <class Nodes>
    void placed(std::uint32_t j, double t, const Nodes& nodes) {
        if (!record_events_) return;
        for (std::uint32_t n : nodes) out_.placements.push_back({replica_, j, n, 0u, t});
    }

    /// Closes every job's row at the horizon and appends the fleet rollup.
    /// Unfinished rows close at `rows_end` (the horizon; a FleetModel's clock).
    void close(const SimulationInput& in, const Plans& plans, JobStates& jobs,
               const std::vector<Levels>& levels, const NodeTotals& nodes, std::uint64_t events,
               std::uint64_t heap_events, bool checking, double rows_end);

private:
    SimulationOutput& out_;
    std::uint32_t replica_;
    bool record_events_;
    std::size_t trace_begin_;
    std::uint32_t next_event_ = 0;
};

}  // namespace acesim

// The engine's state of one job in one replica: its lifecycle (shared with
// the batch path), its job-level failure clock, and what recovery and
// preemption need to remember between events.
#pragma once

#include <cstdint>
#include <limits>

#include "acesim/checkpoint_levels.hpp"
#include "acesim/lifecycle.hpp"
#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "draws.hpp"

namespace acesim {

/// A job's routine transitions (its checkpoints' begins and ends) applied
/// ahead of the clock (JobTransitions::run_ahead): what they change, as it
/// was when the stretch began, so that the job can be brought back to any
/// moment of it (JobTransitions::catch_up).
struct RunAhead {
    Lifecycle life;
    Levels levels;  ///< with checkpoint levels (their draws' counters included)
    double productive = 0.0;
    double ckpt_stall = 0.0;
    double detection = 0.0;  ///< (a slow failure's compute charges it)
    double drain_by = 0.0;   ///< (a drain checkpoint planned at a compute's begin sets it)
    std::uint32_t checkpoints = 0;
    std::uint32_t saves = 0;   ///< the save draws' counter
    std::uint32_t events = 0;  ///< transitions applied ahead (each counts as an event)
    /// The look-ahead bound of the current stretch, in transitions: it
    /// doubles from one stretch to the next while nothing stops the job
    /// (JobTransitions::kFirstLookAhead, kLastLookAhead).
    std::uint16_t look_ahead = 0;
    bool active = false;   ///< some of them may lie ahead of the clock
    bool resumes = false;  ///< its heap entry continues the stretch (the bound was reached): not an event
};

struct JobState {
    // Largest fields first: the state of 1.7M jobs is kept without padding holes.
    Lifecycle life;
    FailureClock clock;
    double fail_draw = std::numeric_limits<double>::infinity();  ///< the inter-failure draw in force
    double fault_time = 0.0;
    double lost_work = 0.0;  ///< rolled back by the last failure
    double run_start = 0.0;  ///< when the current run (start) began
    /// A drain checkpoint is due: its write should end by this maintenance start.
    double drain_by = std::numeric_limits<double>::infinity();
    JobRecord* rec = nullptr;       ///< the job's output row, filled in place
    std::int32_t cause = -1;        ///< cause of the last failure
    std::int32_t churn_owner = -1;  ///< job whose recovery preempted this one
    std::int32_t preempt_for = -1;  ///< CHECKPOINT_AWARE: preempt for this job at the next checkpoint
    std::uint32_t pledged = 0;      ///< nodes deferred victims will give this job at their checkpoints
    Replacement decision{};         ///< the re-placement chosen at its last failure
    StallCount stall{};             ///< failures in a row without a new durable checkpoint
    RunAhead ahead{};
    DrawCounters draws = {};
    bool started = false;
    bool planned_stop = false;  ///< recovering from a planned stop, not a fault
    bool replaced = false;      ///< took a new node since its last start: a re-placement delay is due
    bool replacing = false;     ///< waiting out that delay (phase Waiting, all its nodes held)
    bool slow = false;          ///< in a slow failure: running at a reduced rate until its detection
    bool narrow = false;        ///< elastic: running on fewer nodes than it needs (waits for the rest)
    bool grow_pending = false;  ///< elastic: its nodes are back; it reconfigures before its next compute
    /// Its row while it is live (`rec` points here; JobStates writes it to
    /// the output when the job ends), unless the run keeps rows in the output.
    JobRecord row{};

    Phase phase() const { return life.phase; }
    bool running() const { return holds_hardware(life.phase); }
    /// It waits for nodes (after a failure, or running narrow, elastic):
    /// a node back from repair or a cold spare that arrives resumes it.
    bool waiting_for_nodes() const { return life.phase == Phase::Waiting || narrow; }
    /// A failure can interrupt it: it holds hardware and is not failing already.
    bool interruptible() const { return running() && !slow; }
};

}  // namespace acesim

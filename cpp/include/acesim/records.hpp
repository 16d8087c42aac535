// Result rows: plain structs handed to numpy as structured arrays without a
// copy. Field names are the public column names.
#pragma once

#include <cstdint>
#include <type_traits>

namespace acesim {

/// Where a job stands at the end of the run (the row's `status`).
enum class JobStatus : std::uint32_t {
    Done = 0,          ///< finished
    Running = 1,       ///< holds its nodes at the horizon (starting, computing, writing or in detection)
    Queued = 2,        ///< waiting at the horizon: queued, or waiting for nodes after a failure
    NotSubmitted = 3,  ///< submitted after the horizon
    Unplaceable = 4,   ///< retirement left too few nodes for it ever to start again; closed then
};

/// One row per replica x job. The buckets productive + wasted + ckpt_stall +
/// overhead + detection + queue_wait + recovery_wait + narrow add up to wall.
struct JobRecord {
    std::uint32_t replica;
    std::uint32_t job;
    std::uint32_t gpus;
    std::uint32_t failures;
    std::uint32_t preemptions;
    std::uint32_t checkpoints;
    std::uint32_t restarts;  ///< starts after the first
    std::int32_t priority;
    double submit;
    double end;  ///< completion time, or the horizon
    double wall;
    double productive;
    double wasted;
    double ckpt_stall;
    double overhead;
    double detection;
    double queue_wait;
    double recovery_wait;
    double ettr;                 ///< productive / wall (NaN when wall == 0)
    double gpu_hours_lost;       ///< gpus * (wall - productive) / 3600
    double churn_gpu_hours;      ///< other jobs' losses this job's recovery caused
    double progress;             ///< committed progress at the end (work when completed)
    double checkpoint_interval;  ///< the interval used (after resolving a rule)
    double mtbf;                 ///< the failure model's mean for this job's size
    double young_interval;       ///< sqrt(2 C M), C the mean save latency
    double daly_interval;        ///< Daly's higher-order optimum
    double expected_ettr;        ///< closed form under exponential failures of mean mtbf
    double expected_waste;       ///< 1 - expected_ettr for the interval used
    bool completed;
    std::uint8_t status;                  ///< JobStatus (packed beside completed)
    std::uint32_t planned_interruptions;  ///< stops for planned maintenance (not in failures)
    std::uint32_t timeouts;  ///< runs stopped at the job's time limit (requeued from the last checkpoint)
    std::uint32_t lost_checkpoints;  ///< snapshots whose persist a failure or stop cut off
    std::uint32_t tier_restores;     ///< restarts that loaded a checkpoint tier (not the durable)
    /// An elastic job's compute time lost to running on fewer nodes (a
    /// stretch of e seconds at width rate w loses (1 - w) e): a bucket.
    double narrow;
    /// Seconds its checkpoint transfers took beyond their time alone on the
    /// shared storage (inside ckpt_stall / overhead; not a bucket).
    double contention;
    /// overhead split by what the starts did (init + load + reconfigure ==
    /// overhead up to rounding; not buckets): each start's time goes to its
    /// init draw first, then to its reconfiguration, and the rest (the
    /// checkpoint load, with any storage contention) to load; an elastic
    /// job's reconfiguration pauses are reconfigure.
    double init;
    double load;
    double reconfigure;
};

/// One row per replica: the fleet rollup.
struct FleetRecord {
    std::uint32_t replica;
    std::uint32_t jobs;
    std::uint32_t jobs_completed;
    std::uint32_t failures;       ///< job interruptions (a failure that hit a running job)
    std::uint32_t node_failures;  ///< node failure events, busy and idle nodes alike
    std::uint32_t preemptions;
    std::uint32_t checkpoints;
    std::uint32_t quarantines;        ///< times a node was put in quarantine
    std::uint32_t quarantined_nodes;  ///< distinct nodes ever quarantined
    std::uint32_t spare_uses;         ///< hot spares taken by recovering jobs
    std::uint64_t events;             ///< events processed
    double makespan;                  ///< last job end (or the horizon)
    double ettr;                      ///< GPU-hour-weighted: productive GPU-h / GPU-h
    double gpu_hours;
    double productive_gpu_hours;
    double wasted_gpu_hours;
    double ckpt_stall_gpu_hours;
    double overhead_gpu_hours;
    double detection_gpu_hours;
    double queue_wait_gpu_hours;
    double recovery_wait_gpu_hours;
    double gpu_hours_lost;
    double churn_gpu_hours;
    double quarantined_node_hours;        ///< capacity given up to quarantine
    double down_node_hours;               ///< capacity under repair
    std::uint32_t planned_interruptions;  ///< job stops for planned maintenance
    double maintenance_node_hours;        ///< capacity in planned maintenance
    std::uint32_t retired_nodes;          ///< nodes retired for good (a quarantine of infinite duration)
    double spare_idle_node_hours;         ///< node-hours in the hot-spare pool
    std::uint32_t cold_spare_uses;  ///< cold spares acquired by recovering jobs (acquisitions completed)
    std::uint32_t timeouts;         ///< runs stopped at their job's time limit
    double narrow_gpu_hours;        ///< elastic jobs' throughput lost to running narrow
    double
        contention_gpu_hours;  ///< GPU-hours of checkpoint transfers beyond their time alone on the storage
    double init_gpu_hours;     ///< overhead_gpu_hours split as the job rows' init, load, reconfigure
    double load_gpu_hours;
    double reconfigure_gpu_hours;
    /// Events the event kernel delivered (heap pops and submissions); the
    /// rest of `events` were applied without it (a fleet job's routine
    /// checkpoints run ahead of the clock), and none without a fleet (the
    /// single-job kernel). A measure of the work done, not of the model:
    /// options that change the path (the event log, invariant checks) change it.
    std::uint64_t heap_events;
};

/// One row per job (or idle node) hit by a failure event.
struct TraceRecord {
    std::uint32_t replica;
    std::uint32_t event;   ///< failure event number within the replica (rows of one event share it)
    std::int32_t job;      ///< -1 when the node was idle
    std::int32_t node;     ///< affected node (job-local index when fleet is None)
    std::int32_t origin;   ///< node whose failure process fired; -1 for job-level failures
    std::int32_t cause;    ///< index into the cause list; -1 when none was given
    std::uint32_t source;  ///< 0: job-level failure law, 1: node-level failure process
    std::uint32_t pad_;
    double time;           ///< wall-clock time of the fault
    double inter_failure;  ///< the draw that produced it (held seconds for job-level; for
                           ///< node-level, seconds of the node's clock since its process
                           ///< (re)started: wall seconds unless node_clock / rate_windows)
};

/// What happened, for the optional event log.
enum class EventKind : std::uint32_t {
    Submit = 0,
    StartBegin = 1,
    ComputeBegin = 2,
    CheckpointBegin = 3,
    CheckpointEnd = 4,
    Failure = 5,
    Detected = 6,
    Done = 7,
    Horizon = 8,
    Preempted = 9,
    Waiting = 10,
    Maintenance = 11,        ///< stopped for planned maintenance
    Unplaceable = 12,        ///< the job can never start again (its row closes)
    TimeLimit = 13,          ///< a run stopped at the job's time limit (the job is queued again)
    CheckpointDurable = 14,  ///< an asynchronous checkpoint's persist ended
    Shrink = 15,             ///< an elastic job restarts on fewer nodes (no replacement at hand)
    Grow = 16,               ///< an elastic job takes its missing nodes back (reconfigures)
};

/// One row per event when record_events is on.
struct EventRecord {
    std::uint32_t replica;
    std::uint32_t job;
    std::uint32_t kind;  ///< EventKind
    std::int32_t other;  ///< Preempted: the job whose recovery took its nodes (-1: none, or another kind)
    double time;
    double progress;  ///< committed progress at the event
};

/// With the event log: one row per node a start runs on, in the job's node
/// order (the order job-level failures are blamed in), so an outside
/// scheduler can replay the built-in scheduler's placements.
struct PlacementRecord {
    std::uint32_t replica;
    std::uint32_t job;
    std::uint32_t node;
    std::uint32_t pad_;
    double time;  ///< the start's time (its StartBegin event)
};

static_assert(std::is_trivially_copyable_v<JobRecord>);
static_assert(std::is_trivially_copyable_v<FleetRecord>);
static_assert(std::is_trivially_copyable_v<TraceRecord>);
/// The `kind` of a node event: every change of a node's state the engine decides.
enum NodeEventKind : std::uint32_t {
    kNodeDown = 0,         ///< out of service after a failure (repair, quarantine or both)
    kNodeUp = 1,           ///< back in service
    kNodeMaintenance = 2,  ///< drained for planned maintenance
    kNodeQuarantined = 3,  ///< quarantined (after its kNodeDown row of the same failure event)
    kNodeRetired = 4,      ///< quarantined for good: never back
};

/// With the event log: one row per node leaving or returning to service,
/// and one per quarantine and retirement.
struct NodeEventRecord {
    std::uint32_t replica;
    std::uint32_t node;
    std::uint32_t kind;   ///< a NodeEventKind
    std::uint32_t event;  ///< kinds 0, 3, 4: the failure event (res.trace's `event`); else 0xFFFFFFFF
    std::int32_t cause;   ///< kinds 0, 3, 4: the failure's cause (-1: none)
    std::uint32_t pad_;
    double time;
    double until;  ///< kind 3: when the quarantine ends; kind 4: inf; else NaN
};

static_assert(std::is_trivially_copyable_v<EventRecord>);
static_assert(std::is_trivially_copyable_v<NodeEventRecord>);
static_assert(std::is_trivially_copyable_v<PlacementRecord>);

}  // namespace acesim

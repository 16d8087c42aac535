// The event-heap simulator of the job lifecycle (DESIGN section 4) on an
// optional fleet of nodes with recovery policies (section 6).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "acesim/cancel.hpp"
#include "acesim/distribution_table.hpp"
#include "acesim/errors.hpp"
#include "acesim/job_table.hpp"
#include "acesim/policy_abi.h"
#include "acesim/records.hpp"

namespace acesim {

constexpr std::uint32_t kNoDistribution = std::numeric_limits<std::uint32_t>::max();

/// A job's lifecycle options beyond the synchronous, fixed-width model
/// (SimulationInput::job_options; the defaults are none of them). Kept apart
/// from JobSpec so that a workload of millions of plain jobs stays small.
struct JobOptions {
    /// Asynchronous checkpoints: the background persist law (save is then the
    /// blocking snapshot); none: synchronous writes.
    std::uint32_t persist = kNoDistribution;
    std::uint32_t tier_first = 0;  ///< the job's tiers: SimulationInput::tiers[tier_first, + tier_count)
    std::uint32_t tier_count = 0;
    /// Elastic: after losing nodes with no replacement at hand, the job goes
    /// on with what it holds while that is at least this many GPUs (0: not
    /// elastic), at progress rate (GPUs held / gpus) ** scaling.
    std::uint32_t min_gpus = 0;
    std::uint32_t reconfigure = kNoDistribution;  ///< elastic: the cost of each shrink and grow (none: 0)
    double scaling = 1.0;
    /// Bytes of one durable checkpoint: with FleetSpec::storage_bandwidth,
    /// every durable write (or persist) and load from the durable moves them
    /// through the shared storage after its fixed part (0: none).
    double checkpoint_bytes = 0.0;
};

/// A fast checkpoint tier beside the durable checkpoint (in-memory, node-local).
struct CheckpointTierSpec {
    double interval = 0.0;          ///< seconds of progress between its checkpoints
    std::uint32_t save = 0;         ///< its write latency law (a stall)
    std::uint32_t load = 0;         ///< its load latency law (a restart from it)
    std::uint32_t replication = 1;  ///< survives a failure taking fewer than this many of the job's nodes
};

/// A failure cause (a row of a taxonomy such as Llama 3's Table 5).
struct CauseSpec {
    double share = 1.0;                      ///< relative frequency
    std::uint32_t detect = kNoDistribution;  ///< detection latency law; none: seen at once
    bool node_down = true;                   ///< the node goes to repair
    std::uint32_t nodes = 1;                 ///< nodes one event takes (aligned block: a switch, a rack)
    /// The failure takes the job's nodes (node scope) or only its processes
    /// (process scope: every checkpoint tier survives it).
    bool node_scope = true;
    /// A slow (gray) failure: from the fault to its detection the job runs at
    /// this progress rate, in [0, 1); 0: no progress (fail-stop).
    double slowdown = 0.0;
};

/// Re-placement after a failure (values match the C ABI's ACESIM_*).
enum class Replacement : std::uint32_t { Spares = 0, WaitRepair = 1, PreemptLower = 2, Requeue = 3 };

/// How PREEMPT_LOWER picks and takes its victims.
enum class Preemption : std::uint32_t {
    Immediate = 0,        ///< lowest priority first, most recently started first
    CheckpointAware = 1,  ///< least lost work first; waits for a victim's checkpoint within the grace
};

/// What drives a node's failure process: wall-clock time, or only the time
/// it runs a job (at least one job placed on it).
enum class NodeClock : std::uint32_t { Wall = 0, Busy = 1 };

/// Every node's failure rate is multiplied by `factor` on wall-clock
/// [start, end) (end may be inf); overlapping windows multiply.
struct RateWindow {
    double start = 0.0;
    double end = 0.0;
    double factor = 1.0;
};

/// Planned maintenance: `nodes` leave service at `start` for `duration`.
struct MaintenanceWindow {
    double start = 0.0;
    double duration = 0.0;
    std::vector<std::uint32_t> nodes;
};

/// One stage of a repair pipeline (automatic remediation, manual repair,
/// vendor RMA, ...).
struct RepairStageSpec {
    std::uint32_t duration = kNoDistribution;  ///< the stage's duration law
    double escalate = 0.0;                     ///< probability of going on to the next stage (0 for the last)
    double fix = 0.0;  ///< probability a node leaving after this stage returns healthy (a lemon cured)
};

/// The nodes, their failure processes and repair.
struct FleetSpec {
    bool enabled = false;  ///< false: replacements always available
    std::uint32_t nodes = 0;
    std::uint32_t spares = 0;                       ///< hot spares held back for re-placement
    std::uint32_t repair = kNoDistribution;         ///< repair time law
    std::uint32_t node_failures = kNoDistribution;  ///< per-node wall-clock inter-failure law
    std::vector<std::uint32_t> node_failure_laws;   ///< optional per-node laws (overrides node_failures)
    double lemon_fraction = 0.0;                    ///< share of nodes with a higher failure rate
    double lemon_factor = 1.0;                      ///< their rate multiplier
    /// Node processes start in their stationary state: the first gap is drawn
    /// from the forward-recurrence law of the node's inter-failure law (a
    /// fleet is not brand new at t = 0). False: fresh at t = 0. Per-node
    /// laws (a replayed trace) always start as recorded.
    bool stationary_start = true;
    /// The per-node laws hold recorded failure times (a replayed trace): a
    /// node fails at exactly those times, skipping any that fall while it is
    /// out of service, and reports the draws of node_failure_reported.
    /// False: they are draws, each counted from the moment the node's
    /// process restarts.
    bool node_failure_times = false;
    std::vector<std::uint32_t> node_failure_reported;  ///< per node, with node_failure_times
    NodeClock node_clock = NodeClock::Wall;            ///< what drives the node failure processes
    std::vector<RateWindow> rate_windows;              ///< time-varying failure intensity
    std::vector<MaintenanceWindow> maintenance;        ///< planned drains
    std::vector<RepairStageSpec> repair_stages;  ///< a repair pipeline (replaces `repair` when not empty)
    double misdiagnosis = 0.0;  ///< probability another node of the failed job goes to repair

    /// Cold spares: the `cold_spares` nodes before the hot spares, reachable
    /// only after an acquisition delay drawn from `cold_spare_delay`.
    std::uint32_t cold_spares = 0;
    std::uint32_t cold_spare_delay = kNoDistribution;
    /// A start from the queue may take hot spares when the free nodes alone do not suffice.
    bool lend_spares = false;
    /// Shared checkpoint storage, bytes per second, split equally among the
    /// transfers in flight (0: none; see JobSpec::checkpoint_bytes).
    double storage_bandwidth = 0.0;
};

/// Quarantine: a node with `failures` failures within `window` leaves
/// service for `duration` (infinite: retired for good).
struct QuarantineSpec {
    bool enabled = false;
    std::uint32_t failures = 3;
    double window = 0.0;
    double duration = 0.0;
};

/// A custom failure decision: returns an ACESIM_* value (-1: built-in).
using FailureDecision = std::function<std::int32_t(const acesim_failure_view&)>;

/// What an outside scheduler sees when a job is about to start: from the
/// queue, or again after a failure (a re-placement).
struct PlacementView {
    double time;
    std::uint32_t replica;
    std::uint32_t job;
    std::uint32_t gpus;
    std::int32_t priority;
    std::uint32_t nodes_needed;   ///< nodes to choose
    std::uint32_t gpus_per_node;  ///< GPUs the job uses on each of them
    bool recovering;              ///< a re-placement after a failure (hot spares are candidates)
};

/// The nodes a start may use, ascending, with what has been observed of each
/// (never the hidden lemon flag): failures seen on it, and the seconds since
/// the last one (infinity: none yet).
struct PlacementCandidates {
    std::vector<std::uint32_t> nodes;
    std::vector<std::uint32_t> failures;
    std::vector<double> since_failure;
};

/// Chooses the nodes for a start: fills `chosen` with `nodes_needed` ids from
/// the candidates and returns true, or returns false to let the built-in
/// scheduler choose.
using PlacementDecision = std::function<bool(const PlacementView&, const PlacementCandidates& candidates,
                                             std::vector<std::uint32_t>& chosen)>;

/// How the queue is backfilled behind a job that does not fit.
enum class Backfill : std::uint32_t {
    Easy = 0,    ///< the blocked head gets a reservation; later jobs start only if they do not delay it
    Greedy = 1,  ///< any job that fits starts (within the blocked job's priority level)
};

struct PolicySpec {
    Replacement replacement = Replacement::Spares;
    Preemption preemption = Preemption::Immediate;
    double preemption_grace = 0.0;  ///< CHECKPOINT_AWARE: wait this long for a victim's checkpoint
    QuarantineSpec quarantine;
    FailureDecision on_failure;                   ///< optional; may call back into an interpreter
    PlacementDecision place;                      ///< optional: an outside scheduler chooses the nodes
    acesim_failure_policy_fn compiled = nullptr;  ///< optional compiled decision (no GIL)
    void* compiled_user_data = nullptr;
    /// A host-selection / rescheduling delay paid once per re-placement
    /// (a recovery that takes a node the job did not hold); none: no delay.
    std::uint32_t replacement_delay = kNoDistribution;
    Backfill backfill = Backfill::Easy;
};

/// Failures in a row without a new durable checkpoint after which a job is
/// declared unable to progress (SimulationInput::max_stalled_failures).
constexpr std::uint64_t kDefaultMaxStalledFailures = 10'000;

/// Everything one simulate() call needs.
struct SimulationInput {
    std::vector<Distribution> distributions;
    JobTable jobs;
    std::uint32_t job_failures = kNoDistribution;  ///< job-level inter-failure law, or none
    std::vector<std::uint32_t> job_failure_laws;   ///< optional per-job laws (override job_failures)
    std::vector<CauseSpec> causes;                 ///< empty: no taxonomy (cause -1)
    FleetSpec fleet;
    PolicySpec policy;
    std::uint32_t gpus_per_node = 8;
    std::uint32_t replicas = 1;
    std::uint32_t first_replica = 0;  ///< replica ids first_replica + r
    std::uint64_t seed = 0;
    double horizon = std::numeric_limits<double>::infinity();
    bool record_events = false;
    bool check_invariants = false;  ///< verify the fleet's bookkeeping after every event
    unsigned threads = 1;           ///< 0: one per hardware core
    std::uint64_t max_events = 0;   ///< per replica; 0: kDefaultMaxEvents
    /// A job interrupted this many times in a row without a new durable
    /// checkpoint stops the run with NoProgress (acesim/errors.hpp).
    std::uint64_t max_stalled_failures = kDefaultMaxStalledFailures;
    const CancelFlag* cancel = nullptr;  ///< polled by the workers (acesim/cancel.hpp); null: never
    /// Per job (or empty: none): the wall-clock limit of one run, from its
    /// start (init + load included); the run is stopped there and the job is
    /// queued again to restart from its last checkpoint. Also the run's
    /// estimate for EASY backfill. inf: no limit for that job.
    std::vector<double> time_limits;
    std::vector<CheckpointTierSpec> tiers;  ///< every job's checkpoint tiers (JobOptions::tier_first)
    std::vector<JobOptions> job_options;    ///< per job, or empty: no job has any

    /// Job j's options (the defaults when no job has any).
    const JobOptions& options(std::size_t j) const {
        static const JobOptions none{};
        return job_options.empty() ? none : job_options[j];
    }
};

/// A run that processes more events than this in one replica stops with an
/// error instead of hanging (a job that can never finish needs a horizon).
constexpr std::uint64_t kDefaultMaxEvents = 1ull << 30;
/// The error of a run whose clock passed kLatestTime (lifecycle.hpp);
/// `where` says which replica and which jobs were left, and what the fleet
/// looked like then.
inline std::string past_latest_time(const std::string& where) {
    return "the simulated clock passed 1e13 s (about 317,000 years) in " + where +
           ". Under this model they cannot finish (quarantines or repairs that outlast them, a fleet too "
           "small for them, failures faster than their progress): set a finite horizon to measure a window "
           "of the run";
}

/// The error of a replica that processed more than `max_events` events.
inline std::string max_events_error(std::uint64_t max_events, std::uint32_t replica) {
    return "simulation exceeded max_events=" + std::to_string(max_events) + " in replica " +
           std::to_string(replica) + "; a job may never finish under this failure model: set a horizon";
}

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

/// Validates `input` (throws std::invalid_argument naming the field) and
/// runs every replica. Replicas are independent, so they spread over threads
/// and the result is identical for any thread count. An exception thrown by
/// a callback propagates unchanged (from the lowest failing replica).
SimulationOutput simulate(const SimulationInput& input);

/// Batch Monte Carlo of the single-job model: every job of `input` (fleet
/// disabled, no policy) is a grid point simulated alone (its streams are
/// those of job 0), for every replica, without an event heap, on CPU
/// threads (or, with `cuda`, one CUDA thread per run: same code, same streams;
/// float results within the ulp bound of the device's math). Rows are
/// ordered by job then replica and equal, bit for bit,
/// the rows simulate() gives for that job alone with the same seed.
SimulationOutput simulate_batch(const SimulationInput& input, bool cuda = false);

/// The job-level inter-failure law of job j (kNoDistribution: none).
inline std::uint32_t job_failure_law(const SimulationInput& in, std::size_t j) {
    return in.job_failure_laws.empty() ? in.job_failures : in.job_failure_laws[j];
}

/// Job j's mean time to failure under the input's failure models.
double job_mtbf(const SimulationInput& input, std::size_t j);

}  // namespace acesim

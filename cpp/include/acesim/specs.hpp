// The specs of a run's model and options: the failure causes, the fleet,
// the recovery policy and how a run is carried out (DESIGN sections 4 and 6).
// Plain values with named fields; SimulationInput (simulation_input.hpp)
// holds them with the jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "acesim/policy_abi.h"

namespace acesim {

/// A law index that names no law (none).
constexpr std::uint32_t kNoDistribution = std::numeric_limits<std::uint32_t>::max();

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
/// declared unable to progress (RunOptions::max_stalled_failures).
constexpr std::uint64_t kDefaultMaxStalledFailures = 10'000;

/// A run that processes more events than this in one replica stops with an
/// error instead of hanging (a job that can never finish needs a horizon).
constexpr std::uint64_t kDefaultMaxEvents = 1ull << 30;

/// How a run is carried out: which replicas, up to when, with which limits,
/// and what it records beside its result rows.
struct RunOptions {
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

    /// The events one replica may process: max_events, or kDefaultMaxEvents for 0.
    std::uint64_t event_limit() const { return max_events == 0 ? kDefaultMaxEvents : max_events; }
};

}  // namespace acesim

// The model driven step by step by an outside scheduler (FleetModel): the
// scheduler submits, places, preempts and re-places jobs; the model runs the
// node pool, the failure processes, the lifecycle and the accounting, and
// reports what needs a decision. Its numbers are the event-heap engine's:
// replaying the built-in scheduler's decisions gives the same rows.
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "acesim/records.hpp"
#include "acesim/simulator.hpp"

namespace acesim {

/// What a node is, for the outside scheduler (FleetModelCore::node_states).
enum class NodeCondition : std::uint8_t {
    Free = 0,         ///< in service, holding no job (outside the hot-spare pool)
    Busy = 1,         ///< in service, holding a job (or some of its GPUs)
    Down = 2,         ///< out of service: repair or maintenance
    Quarantined = 3,  ///< out of service: quarantined (it returns)
    Spare = 4,        ///< in service, free, in the hot-spare pool
    Retired = 5,      ///< quarantined for good: never returns
};

/// What the model reports to the outside scheduler.
struct ModelEvent {
    enum Kind : std::uint32_t { NodeDown = 0, NodeUp = 1, JobFailed = 2, JobDone = 3, Checkpoint = 4 };
    double time;
    double fault_time;  ///< JobFailed: when the fault struck (time: its detection)
    Kind kind;
    std::int32_t job;                  ///< -1: none (NodeDown: the job a job-level failure was blamed on)
    std::int32_t cause;                ///< -1: none (or a planned stop)
    /// NodeDown / NodeUp: the nodes; JobFailed: the nodes the job lost;
    /// JobDone: the nodes it held when it finished (released now)
    std::vector<std::uint32_t> nodes;
    double progress = 0.0;  ///< Checkpoint: the progress it keeps; JobFailed: the progress rolled back to
    bool durable = false;   ///< Checkpoint: durable (else a tier's, lost with its nodes)
    /// JobDone / JobFailed: every node the job held at that moment, in its
    /// order (JobFailed: the lost ones included, before they were taken from it)
    std::vector<std::uint32_t> held;
};

class ReplicaEngine;
struct Plans;

class FleetModelCore {
public:
    /// `setup`: the distributions, fleet, causes, job-level failure law,
    /// quarantine (policy), gpus_per_node, seed, first_replica (the replica
    /// id), horizon, max_events and check_invariants; no jobs. Throws
    /// std::invalid_argument naming a bad field.
    FleetModelCore(SimulationInput setup, bool report_checkpoints);
    ~FleetModelCore();
    FleetModelCore(const FleetModelCore&) = delete;
    FleetModelCore& operator=(const FleetModelCore&) = delete;

    /// A distribution for later jobs; returns its index.
    std::uint32_t add_distribution(Distribution d);
    /// Submits a job now (its submit time is the model's clock); returns its id.
    std::uint32_t submit(JobSpec spec, JobOptions options, const std::vector<CheckpointTierSpec>& tiers);
    void start(std::uint32_t job, const std::vector<std::uint32_t>& nodes);
    /// Whether start(job, nodes) would be accepted now (false: a node is busy or
    /// out of service); throws what start throws for a request that never can be.
    bool can_start(std::uint32_t job, const std::vector<std::uint32_t>& nodes) const;
    void stop(std::uint32_t job, std::int32_t for_job);
    void resize(std::uint32_t job, const std::vector<std::uint32_t>& nodes);
    /// Runs to `until` or to the first instant at which something is
    /// reported, and returns every event of that instant (whole_instant),
    /// or only what the first reporting event reported.
    std::vector<ModelEvent> advance(double until, bool whole_instant = true);
    double now() const;
    double peek();
    std::uint32_t jobs() const;
    std::uint32_t nodes() const;
    std::vector<std::uint32_t> free_nodes() const;
    /// The free nodes the fleet's hot-spare pool holds now (its statistics count those).
    std::vector<std::uint32_t> spare_nodes() const;
    /// The nodes job j holds; once it is done, the nodes it held when it finished.
    std::vector<std::uint32_t> nodes_of(std::uint32_t job) const;
    /// What each node is now (NodeCondition codes), one byte per node: O(nodes).
    std::vector<std::uint8_t> node_states() const;
    /// The nodes out of service now (repair, maintenance, quarantine,
    /// retired), ascending: O(answer).
    std::vector<std::uint32_t> down_nodes() const;
    /// Jobs started and running now (starting, computing, writing, failing,
    /// reconfiguring), ascending: O(started jobs not done).
    std::vector<std::uint32_t> running() const;
    /// Jobs waiting for start() or stop() after a failure, ascending.
    std::vector<std::uint32_t> waiting() const;
    /// Queued jobs in queue order (priority, then submission, then id): O(answer).
    std::vector<std::uint32_t> queued() const;
    /// The nodes job j runs on (its width in nodes).
    std::uint32_t job_nodes(std::uint32_t job) const;
    /// Where job j stands: 0 queued, 1 starting, 2 computing, 3 writing a
    /// checkpoint, 4 failing (its fault not detected yet, or running slow
    /// until then), 5 waiting after a failure, 6 done, 7 reconfiguring.
    std::uint32_t state(std::uint32_t job) const;
    /// Rows in the event log so far.
    std::size_t logged() const { return out_.events.size(); }
    /// The event log's rows from `first` on (a copy).
    std::vector<EventRecord> events_since(std::size_t first) const {
        return first < out_.events.size()
                   ? std::vector<EventRecord>(out_.events.begin() + static_cast<std::ptrdiff_t>(first),
                                              out_.events.end())
                   : std::vector<EventRecord>{};
    }
    /// Closes every row at the current time (the horizon when it is finite
    /// and reached) and returns the results; the model cannot go on after.
    SimulationOutput close();

private:
    void require_job(std::uint32_t job, const char* what) const;
    /// Takes note of what advance reported (jobs done: their last nodes).
    void note(const std::vector<ModelEvent>& events);

    SimulationInput in_;
    std::unique_ptr<Plans> plans_;
    std::vector<DistributionView> views_;
    std::vector<JobRecord> rows_;
    SimulationOutput out_;
    std::unique_ptr<ReplicaEngine> engine_;
    bool closed_ = false;
    std::set<std::uint32_t> started_;  ///< jobs started, not done, not queued again
    std::unordered_map<std::uint32_t, std::vector<std::uint32_t>> last_nodes_;  ///< done jobs' last nodes
};

}  // namespace acesim

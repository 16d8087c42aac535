// The engine of one replica: it pops events from the kernel and routes them
// to its parts (JobTransitions: a job's lifecycle; FailureRouting: failures,
// node returns, maintenance; RecoveryActions: the recovery policy carried
// out, placement and the scheduler's host; CheckpointWrites: writes,
// persists and storage transfers; ElasticResize: elastic jobs' shrinks and
// grows), then checks the invariants.
// Only the engine runs the loop and schedules the kernel (serving the parts'
// KernelRequests); each part is given the state it reads, never another
// part. A part returns what it leaves for others as an outcome (Strike,
// NodeBack, Recovery, WriteOutcome, Resize) that the engine carries out;
// only what FailureRouting and RecoveryActions raise in the middle of a
// transition (an interrupt, a start, a requeue, a preemptor's retry, a grow)
// goes through the engine's few methods below, served at once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/simulator.hpp"
#include "checkpoint_writes.hpp"
#include "elastic_resize.hpp"
#include "failure_routing.hpp"
#include "job_transitions.hpp"
#include "recovery_actions.hpp"
#include "replica_state.hpp"

namespace acesim {

class ReplicaEngine : private ReplicaState {
public:
    ReplicaEngine(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views,
                  std::uint32_t replica, std::uint64_t max_events, JobRecord* rows, SimulationOutput& out);
    ReplicaEngine(const ReplicaEngine&) = delete;
    ReplicaEngine& operator=(const ReplicaEngine&) = delete;

    /// Runs the replica to the horizon (or until every job is done) and writes its rows.
    void run();

    // --- an outside scheduler's run (FleetModel) -------------------------------
    /// Decisions come from outside from now on (no job yet; the fleet starts).
    void drive_from_outside(bool report_checkpoints);
    /// The rows moved (the caller grew their storage).
    void rebind_rows(JobRecord* rows);
    /// The job whose spec, plan and row the caller appended is submitted now: queued. Returns its id.
    std::uint32_t submit_job();
    /// Runs every event up to `until` (included), stopping after the first one
    /// that reports something; the clock then stands at that event, else at `until`.
    std::vector<ModelEvent> advance(double until, bool whole_instant);
    /// Closes every row at `end` (a run's horizon or end) and appends the fleet row.
    void close(double end);
    double now() const { return kernel_.now(); }
    double peek() { return kernel_.peek(); }
    const NodePool& pool() const { return pool_; }
    /// The queued jobs, in queue order.
    std::vector<std::uint32_t> queued() const { return scheduler_.queue(); }
    const JobState& job(std::uint32_t j) const { return jobs_[j]; }
    /// The outside scheduler starts job j (queued, or waiting after a failure) on `nodes`.
    void start_job(std::uint32_t j, const std::vector<std::uint32_t>& nodes);
    /// Whether start_job(j, nodes) would be accepted now: false when a node is
    /// busy or out of service; throws what start_job throws for a request that
    /// never can be (the job not startable, the wrong count, a missing or repeated node).
    bool can_start(std::uint32_t j, const std::vector<std::uint32_t>& nodes) const;
    /// The outside scheduler stops job j (a preemption when it runs; churn to `for_job` >= 0).
    void stop_job(std::uint32_t j, std::int32_t for_job);
    /// The outside scheduler runs elastic job j (computing, or waiting after
    /// a failure) on `nodes`, as many as it needs or fewer (down to min_gpus).
    void resize_job(std::uint32_t j, const std::vector<std::uint32_t>& nodes);

    // --- what a part raises in the middle of its own transition -----------------
    // Served at once, where it is raised (the order of transitions is kept,
    // and with it every recorded result); everything else a part leaves to
    // the engine it returns as an outcome (Strike, NodeBack, Recovery,
    // WriteOutcome, Resize) and the engine carries out.
    /// Job j's run stops at t (a failure, a preemption, a planned stop or
    /// its time limit): its storage transfer is cut off, its phase ended
    /// early (JobTransitions::interrupt), its narrow run ended. Returns the
    /// compute rolled back.
    double interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes = kAllNodes);
    // JobTransitions: a job's lifecycle (the scheduler's pass starts and requeues jobs)
    void begin_start(std::uint32_t j, double t) { lifecycle_.begin_start(j, t); }
    void enqueue(std::uint32_t j, double t) { lifecycle_.enqueue(j, t); }
    // RecoveryActions: a preemptor whose deferred victim failed looks again
    void retry_preemption(std::int32_t by, double t) { recovery_.retry_preemption(by, t); }
    // JobTransitions: a job about to fail slowly is caught up first (its rate changes)
    void catch_up(std::uint32_t j) { lifecycle_.catch_up(j); }
    // ElasticResize: an elastic job running narrow resumes whole
    void grow(std::uint32_t j, double t) { elastic_.grow(j, t); }

private:
    /// The end of job j's phase is due at t (or its fault is seen at once).
    void phase_end(std::uint32_t j, double t);
    void check_invariants() const;
    /// Serves what the parts asked of the kernel while an event was handled.
    void serve_requests();
    /// With run_ahead_: the event bound, judged on what happened by now.
    void check_event_limit();
    /// The outside scheduler's nodes for job j: they exist, are distinct, in
    /// service and free (or held by j already).
    void check_nodes(const char* what, std::uint32_t j, const std::vector<std::uint32_t>& nodes) const;
    /// Why `nodes` cannot be job j's now (one is busy or out of service; empty
    /// when they can be); throws for nodes that never can be (missing, repeated).
    std::string unavailable_nodes(const char* what, std::uint32_t j,
                                  const std::vector<std::uint32_t>& nodes) const;
    /// start_job's checks of the job and the node count.
    void check_start(std::uint32_t j, const std::vector<std::uint32_t>& nodes) const;
    void begin();
    void open_job(std::uint32_t j);
    void handle(const DueEvent& e);
    /// Node n's event is due: its failure, its return to service or a cold
    /// spare's arrival.
    void handle_node(std::uint32_t n, double t);
    /// Carries out what a failure event at t left to do: the outside
    /// scheduler hears of the nodes it took; a retirement may strand jobs;
    /// waiting jobs that lost a spare or a delay look for nodes again.
    void after_strike(const Strike& struck, double t);
    /// Job j's event is due: a job-level failure, a persist's end, a slow
    /// failure's detection, its time limit or the end of its phase.
    void handle_job(std::uint32_t j);
    /// Job j computes from t (an elastic job whose nodes came back first takes them).
    void compute(std::uint32_t j, double t);
    /// Carries out what the end of j's write or persist at t left to do.
    void after_write(std::uint32_t j, double t, WriteOutcome outcome);
    /// Carries out what j's recovery at t decided.
    void after_recovery(std::uint32_t j, double t, Recovery decided);
    /// Job j's final checkpoint is durable at t: it is done.
    void finish(std::uint32_t j, double t);

    JobTransitions lifecycle_;
    FailureRouting failures_;
    RecoveryActions recovery_;
    CheckpointWrites checkpoints_;
    ElasticResize elastic_;
};

}  // namespace acesim

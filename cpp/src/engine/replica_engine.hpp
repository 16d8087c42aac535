// The engine of one replica: it pops events from the kernel and routes them
// to its parts (JobTransitions: a job's lifecycle; FailureRouting: failures,
// node returns, maintenance; RecoveryActions: the recovery policy carried
// out, placement and the scheduler's host; CheckpointWrites: writes,
// persists and storage transfers; ElasticResize: elastic jobs' shrinks and
// grows), then checks the invariants.
// Only the engine runs the loop and schedules the kernel (serving the parts'
// KernelRequests); each part is given the state it reads and the engine,
// never another part: what one raises for another, the engine routes.
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
    std::vector<ModelEvent> advance(double until);
    /// Closes every row at `end` (a run's horizon or end) and appends the fleet row.
    void close(double end);
    double now() const { return kernel_.now(); }
    double peek() { return kernel_.peek(); }
    const NodePool& pool() const { return pool_; }
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

    // --- what a part raises, routed by the engine to the part that does it ------
    // Served at once, where it is raised (the order of transitions is kept,
    // and with it every recorded result).
    /// The end of job j's phase is due at t (or its fault is seen at once).
    void phase_end(std::uint32_t j, double t);
    // JobTransitions: a job's lifecycle
    void begin_start(std::uint32_t j, double t) { lifecycle_.begin_start(j, t); }
    double interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes = kAllNodes) {
        return lifecycle_.interrupt(j, t, lost_nodes);
    }
    void enqueue(std::uint32_t j, double t) { lifecycle_.enqueue(j, t); }
    // RecoveryActions: recovery, placement, preemption and the scheduler's pass
    void dispatch(double t) { recovery_.dispatch(t); }
    void resume(std::uint32_t j, double t) { recovery_.resume(j, t); }
    void preempt(std::uint32_t v, std::uint32_t by, double t) { recovery_.preempt(v, by, t); }
    void retry_preemption(std::int32_t by, double t) { recovery_.retry_preemption(by, t); }
    void cancel_replacement_delay(std::uint32_t j) { recovery_.cancel_replacement_delay(j); }
    bool give_up_if_unplaceable(std::uint32_t j, double t) { return recovery_.give_up_if_unplaceable(j, t); }
    void give_up_unplaceable(double t) { recovery_.give_up_unplaceable(t); }
    // CheckpointWrites: storage transfers
    void end_transfer(std::uint32_t j, double t, bool finished) { checkpoints_.end_transfer(j, t, finished); }
    // JobTransitions: a running job's state at the current event (its checkpoints applied ahead taken back)
    void catch_up(std::uint32_t j) { lifecycle_.catch_up(j); }
    // ElasticResize: elastic jobs' grows and narrow runs
    void grow(std::uint32_t j, double t) { elastic_.grow(j, t); }
    void end_narrow(std::uint32_t j, bool keep_claims) { elastic_.end_narrow(j, keep_claims); }

private:
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
    /// Job j holds exactly `nodes` (in that order for those it did not hold).
    void place_on(std::uint32_t j, const std::vector<std::uint32_t>& nodes);
    void begin();
    void open_job(std::uint32_t j);
    void handle(const DueEvent& e);
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

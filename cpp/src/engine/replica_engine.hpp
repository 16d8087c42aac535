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
    // Served at once, where it is raised (the parts' order of transitions is
    // kept, and with it every recorded result).
    // JobTransitions: a job's lifecycle
    void begin_start(std::uint32_t j, double t, double reconfigure = 0.0) {
        lifecycle_.begin_start(j, t, reconfigure);
    }
    void begin_compute(std::uint32_t j, double t) { lifecycle_.begin_compute(j, t); }
    void complete(std::uint32_t j, double t) { lifecycle_.complete(j, t); }
    double interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes = kAllNodes) {
        return lifecycle_.interrupt(j, t, lost_nodes);
    }
    void on_phase_end(std::uint32_t j, double t) { lifecycle_.on_phase_end(j, t); }
    void enqueue(std::uint32_t j, double t) { lifecycle_.enqueue(j, t); }
    void wait_for_nodes(std::uint32_t j, double t) { lifecycle_.wait_for_nodes(j, t); }
    // RecoveryActions: recovery, placement, preemption and the scheduler's pass
    void dispatch(double t) { recovery_.dispatch(t); }
    void recover(std::uint32_t j, double t) { recovery_.recover(j, t); }
    void resume(std::uint32_t j, double t) { recovery_.resume(j, t); }
    void preempt(std::uint32_t v, std::uint32_t by, double t) { recovery_.preempt(v, by, t); }
    void retry_preemption(std::int32_t by, double t) { recovery_.retry_preemption(by, t); }
    void cancel_replacement_delay(std::uint32_t j) { recovery_.cancel_replacement_delay(j); }
    bool give_up_if_unplaceable(std::uint32_t j, double t) { return recovery_.give_up_if_unplaceable(j, t); }
    void give_up_unplaceable(double t) { recovery_.give_up_unplaceable(t); }
    // CheckpointWrites: writes, persists and storage transfers
    void end_checkpoint(std::uint32_t j, double t) { checkpoints_.end_checkpoint(j, t); }
    void reach_leveled_boundary(std::uint32_t j, double t) { checkpoints_.reach_leveled_boundary(j, t); }
    bool phase_transfer_begins(std::uint32_t j, double t) { return checkpoints_.phase_transfer_begins(j, t); }
    void end_transfer(std::uint32_t j, double t, bool finished) { checkpoints_.end_transfer(j, t, finished); }
    // ElasticResize: elastic jobs' shrinks and grows
    bool can_shrink(std::uint32_t j, std::size_t failing) const { return elastic_.can_shrink(j, failing); }
    void shrink(std::uint32_t j, double t, bool lost_nodes) { elastic_.shrink(j, t, lost_nodes); }
    void grow(std::uint32_t j, double t) { elastic_.grow(j, t); }
    void take_nodes_back(std::uint32_t j, double t) { elastic_.take_nodes_back(j, t); }
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

    JobTransitions lifecycle_;
    FailureRouting failures_;
    RecoveryActions recovery_;
    CheckpointWrites checkpoints_;
    ElasticResize elastic_;
};

}  // namespace acesim

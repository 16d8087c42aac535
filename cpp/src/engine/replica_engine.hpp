// The engine of one replica: it pops events from the kernel and routes them
// (arrivals, phase ends, job-level and node-level failures, node returns),
// drives each job's lifecycle, asks the recovery policy what to do after a
// failure, and lets the scheduler hand capacity out. Only the engine calls
// the components; they exchange ids and value types.
#pragma once

#include <cstdint>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/simulator.hpp"
#include "draws.hpp"
#include "job_state.hpp"
#include "kernel.hpp"
#include "ledger.hpp"
#include "node_pool.hpp"
#include "plans.hpp"
#include "recovery_policy.hpp"
#include "scheduler.hpp"

namespace acesim {

class ReplicaEngine {
public:
    ReplicaEngine(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views,
                  std::uint32_t replica, std::uint64_t max_events, JobRecord* rows, SimulationOutput& out);

    /// Runs the replica to the horizon (or until every job is done) and writes its rows.
    void run();

    // --- the scheduler's host (see Scheduler::dispatch) ----------------------
    std::uint32_t reserved(std::uint32_t j) const { return pool_.reserved(j); }
    std::uint32_t acquiring(std::uint32_t j) const { return pool_.acquiring(j); }
    bool place(std::uint32_t j, bool recovering);
    /// A recovering job that has its nodes resumes (after its re-placement
    /// delay); a job from the queue starts.
    void start(std::uint32_t j, double t) {
        if (jobs_[j].phase() == Phase::Waiting) {
            resume(j, t);
        } else {
            begin_start(j, t);
        }
    }
    bool capacity_left() const { return !pool_.enabled() || pool_.capacity_left(); }

private:
    // lifecycle
    void handle_job(std::uint32_t j);
    void on_phase_end(std::uint32_t j, double t);
    void end_checkpoint(std::uint32_t j, double t);
    void begin_start(std::uint32_t j, double t);
    void begin_compute(std::uint32_t j, double t);
    void plan_drain_checkpoint(std::uint32_t j, double t);
    void complete(std::uint32_t j, double t);
    double interrupt(std::uint32_t j, double t);
    void charge_restart_churn(std::uint32_t j, double overhead);
    void schedule_job(std::uint32_t j);
    void enqueue(std::uint32_t j, double t);
    void wait_for_nodes(std::uint32_t j, double t);
    void log(std::uint32_t j, EventKind kind, double t) { ledger_.log(j, kind, t, jobs_[j].life.committed); }
    void renew_failure_clock(std::uint32_t j);
    double draw_job(std::uint32_t j, Purpose purpose, std::uint32_t dist);
    // failures
    void job_level_failure(std::uint32_t j, double t);
    void handle_node(std::uint32_t n, double t);
    void strike(std::uint32_t event, std::uint32_t node, std::int32_t origin, std::int32_t cause,
                std::uint32_t source, double t, double drawn, double detect, std::int32_t blamed_job);
    void fault(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level);
    void return_to_service(std::uint32_t n, double t);
    /// Job j, waiting, held node m, now out of service; true when that
    /// cancelled its re-placement delay (it waits for nodes again).
    bool lose_held_node(std::uint32_t j, std::uint32_t m, double t);
    // planned maintenance
    void begin_maintenance(std::uint32_t k, double t);
    void planned_stop(std::uint32_t j, double t);
    void reschedule_touched_nodes();
    // recovery
    void recover(std::uint32_t j, double t);
    std::int32_t cancel_deferred_preemption(std::uint32_t v);
    void retry_preemption(std::int32_t by, double t);
    void preempt_lower(std::uint32_t j, double t);
    void preempt(std::uint32_t v, std::uint32_t by, double t);
    /// The place callback's choice: 1 placed, 0 declined (built-in choice),
    /// -1 not enough nodes available now.
    int place_outside(std::uint32_t j, bool recovering);
    bool take_for_recovery(std::uint32_t j);
    void resume(std::uint32_t j, double t);
    void cancel_replacement_delay(std::uint32_t j);
    void finish_acquisition(std::uint32_t n, double t);
    bool ready(std::uint32_t j) const {
        return pool_.reserved(j) == 0 && pool_.acquiring(j) == 0 && pool_.missing(j) == 0;
    }
    // unplaceable jobs (retirement left too few nodes)
    bool give_up_if_unplaceable(std::uint32_t j, double t);
    void give_up_unplaceable(double t);
    void abandon(std::uint32_t j, double t);
    void dispatch(double t) { scheduler_.dispatch(t, *this); }
    void check_invariants() const;

    const SimulationInput& in_;
    const Plans& plans_;
    std::uint32_t replica_;
    JobRecord* rows_;
    const bool checking_;  ///< check the bookkeeping after every event
    ReplicaDraws draws_;
    EventKernel kernel_;
    NodePool pool_;
    Scheduler scheduler_;
    RecoveryPolicy policy_;
    Ledger ledger_;
    std::vector<JobState> jobs_;
    std::vector<std::uint32_t> hit_;
    PlacementCandidates candidates_;
    std::size_t jobs_done_ = 0;  ///< done, or closed as unplaceable
    std::uint32_t widest_ = 0;   ///< the most nodes any job needs
};

}  // namespace acesim

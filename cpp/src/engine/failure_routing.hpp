// Where failures and node returns go: job-level failures (blamed on a node
// of the job), node failure events (a block of nodes for multi-node causes,
// misdiagnosis), the faults they cause in jobs, nodes coming back from
// repair, quarantine or maintenance, planned maintenance starts, and cold
// spares arriving.
#pragma once

#include <cstdint>
#include <vector>

#include "replica_state.hpp"

namespace acesim {

/// What one failure event did, for the engine to act on: the jobs it
/// interrupted and the nodes it took out of service (to repair, quarantine
/// or retirement), in the order it took them.
struct Strike {
    std::vector<std::uint32_t> interrupted;     ///< jobs the event interrupted
    std::vector<std::uint32_t> out_of_service;  ///< nodes it took out of service
    std::int32_t blamed_job = -1;               ///< a job-level failure's job (else -1)
    std::int32_t cause = -1;
    /// Without a fleet: the job whose fault is seen at once (the engine ends
    /// its detection now); else -1.
    std::int32_t detected_now = -1;
    bool retired = false;  ///< a node was retired: some job may never be placed again
    /// A waiting job lost a cold spare on its way, or its re-placement delay:
    /// it looks for nodes again.
    bool lost_waits = false;
    void clear() {
        interrupted.clear();
        out_of_service.clear();
        blamed_job = -1;
        cause = -1;
        detected_now = -1;
        retired = false;
        lost_waits = false;
    }
};

/// What a WAIT_REPAIR job's node back in service leaves for the engine to do.
enum class NodeBack : std::uint8_t {
    Nothing,    ///< it was not waiting for nodes, or waits for its other nodes under repair
    Resume,     ///< it has all its nodes again: it resumes
    WaitAgain,  ///< it still lacks nodes and waits for any (unless it can never be placed)
};

class FailureRouting {
public:
    /// The state it reads, and the engine that sequences it.
    FailureRouting(const SimulationInput& in, const Plans& plans, std::uint32_t replica,
                   const ReplicaDraws& draws, NodePool& pool, Scheduler& scheduler, Ledger& ledger,
                   JobStates& jobs, Reservation& reservation, std::vector<Levels>& levels,
                   OutsideScheduler& outside, JobDraws& job_draws, const JobDue& due,
                   KernelRequests& requests, ReplicaEngine& engine)
        : in_(in),
          plans_(plans),
          replica_(replica),
          draws_(draws),
          pool_(pool),
          scheduler_(scheduler),
          ledger_(ledger),
          jobs_(jobs),
          reservation_(reservation),
          levels_(levels),
          outside_(outside),
          job_draws_(job_draws),
          due_(due),
          requests_(requests),
          engine_(engine) {}

    /// Job j's own failure at t (blamed on one of its nodes with a fleet):
    /// what it struck (nothing to act on without a fleet).
    const Strike& job_level_failure(std::uint32_t j, double t);
    /// Node n's failure at its due time t: what it struck (the engine then
    /// renews n's failure process).
    const Strike& node_failure(std::uint32_t n, double t);
    /// One failure event on `node` (and its block for multi-node causes):
    /// every running job on the struck nodes faults; nodes go to repair.
    const Strike& strike(std::uint32_t event, std::uint32_t node, std::int32_t origin, std::int32_t cause,
                         std::uint32_t source, double t, double drawn, double detect,
                         std::int32_t blamed_job);
    /// A job's hardware faulted at t: progress rolls back now; it notices
    /// after `detect` seconds.
    void fault(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level,
               std::uint32_t lost_nodes);
    /// A slow failure of j, faulted earlier, is detected at t: handled as a
    /// failure now (the engine interrupted it, rolling back `lost`; then
    /// recovery). True when it is seen at once (no fleet): the engine ends
    /// its detection now.
    [[nodiscard]] bool detect_slow_failure(std::uint32_t j, double t, double lost);
    /// A failure interrupted job j: throws NoProgress when it is the
    /// max_stalled_failures-th in a row without a new durable checkpoint.
    void count_stall(std::uint32_t j);
    /// Node n is back in service at t: the WAIT_REPAIR jobs that get it back
    /// first (the engine gives it to each, in order: node_back).
    [[nodiscard]] std::vector<std::uint32_t> return_to_service(std::uint32_t n, double t);
    /// Job j, which waited for node n under repair, holds it again.
    [[nodiscard]] NodeBack node_back(std::uint32_t j, std::uint32_t n);
    /// Job j, waiting, held node m, now out of service; true when that
    /// cancelled its re-placement delay (it waits for nodes again).
    bool lose_held_node(std::uint32_t j, std::uint32_t m, double t);
    /// Planned maintenance window k begins at t; true when a waiting job
    /// lost a cold spare on its way or its re-placement delay (the engine
    /// dispatches).
    [[nodiscard]] bool begin_maintenance(std::uint32_t k, double t);
    void planned_stop(std::uint32_t j, double t);
    /// Cold spare n arrives at t: the job it completes (which then resumes),
    /// or -1 when its job still lacks a node (the engine dispatches).
    [[nodiscard]] std::int32_t finish_acquisition(std::uint32_t n, double t);

private:
    /// j's nodes in [first, last) that a failure of `cause` takes (0 for a process-scope cause).
    std::uint32_t nodes_taken(std::uint32_t j, std::int32_t cause, std::uint32_t first,
                              std::uint32_t last) const;
    /// A slow failure begins: j runs at the cause's rate until t + detect.
    void begin_slow_failure(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level,
                            std::uint32_t lost_nodes);
    /// Job j's failure is detected now: true when its recovery is now (no
    /// fleet: the engine's), else it is j's next event.
    bool detected_at(std::uint32_t j);
    /// j's re-placement delay is cancelled: a node it holds went down during
    /// the delay; it waits for nodes again and pays a fresh delay once it has them.
    void cancel_replacement_delay(std::uint32_t j);
    Strike struck_;                           ///< what the last failure event did
    std::vector<std::uint32_t> downed_;       ///< the nodes one maintenance start took out
    std::vector<std::uint32_t> quarantined_;  ///< the nodes one event quarantined (or retired)
    const SimulationInput& in_;
    const Plans& plans_;
    std::uint32_t replica_;
    const ReplicaDraws& draws_;
    NodePool& pool_;
    Scheduler& scheduler_;
    Ledger& ledger_;
    JobStates& jobs_;
    Reservation& reservation_;
    std::vector<Levels>& levels_;
    OutsideScheduler& outside_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
    ReplicaEngine& engine_;
};

}  // namespace acesim

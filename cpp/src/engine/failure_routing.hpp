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

    void job_level_failure(std::uint32_t j, double t);
    void handle_node(std::uint32_t n, double t);
    /// One failure event on `node` (and its block for multi-node causes):
    /// every running job on the struck nodes faults; nodes go to repair.
    void strike(std::uint32_t event, std::uint32_t node, std::int32_t origin, std::int32_t cause,
                std::uint32_t source, double t, double drawn, double detect, std::int32_t blamed_job);
    /// A job's hardware faulted at t: progress rolls back now; it notices
    /// after `detect` seconds.
    void fault(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level,
               std::uint32_t lost_nodes);
    /// A slow failure of j, faulted earlier, is detected at t: handled as a
    /// failure now (rolled back, then recovery).
    void detect_slow_failure(std::uint32_t j, double t);
    /// A failure interrupted job j: throws NoProgress when it is the
    /// max_stalled_failures-th in a row without a new durable checkpoint.
    void count_stall(std::uint32_t j);
    void return_to_service(std::uint32_t n, double t);
    /// Job j, waiting, held node m, now out of service; true when that
    /// cancelled its re-placement delay (it waits for nodes again).
    bool lose_held_node(std::uint32_t j, std::uint32_t m, double t);
    void begin_maintenance(std::uint32_t k, double t);
    void planned_stop(std::uint32_t j, double t);
    void finish_acquisition(std::uint32_t n, double t);

private:
    /// j's nodes in [first, last) that a failure of `cause` takes (0 for a process-scope cause).
    std::uint32_t nodes_taken(std::uint32_t j, std::int32_t cause, std::uint32_t first,
                              std::uint32_t last) const;
    /// A slow failure begins: j runs at the cause's rate until t + detect.
    void begin_slow_failure(std::uint32_t j, double t, double detect, std::int32_t cause, bool job_level,
                            std::uint32_t lost_nodes);
    /// Detection of j's failure ends at t: recovery now (or as j's next event with a fleet).
    void detected_at(std::uint32_t j, double t);
    std::vector<std::uint32_t> hit_;     ///< jobs one event has interrupted
    std::vector<std::uint32_t> downed_;  ///< an outside scheduler's run: the nodes one event took out
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

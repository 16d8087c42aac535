// Elastic jobs (Job(min_gpus=, reconfigure=, scaling=)): a recovering job
// with no replacement at hand goes on with the nodes it holds (a shrink: it
// restarts on them at a reduced rate and waits, running, for the rest) and
// takes its nodes back when they are all at hand (a grow: a reconfiguration,
// then full rate). The rate arithmetic is checkpoint_levels.hpp's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "replica_state.hpp"

namespace acesim {

/// What a resize leaves for the engine to do: the nodes the job gave back
/// (free again), and whether it restarts on the nodes it holds now (the
/// engine starts it, adding the reconfiguration to its start).
struct Resize {
    std::vector<std::uint32_t> given_back;  ///< nodes it held and gave back, in its order
    bool restart = false;                   ///< it restarts on the nodes it holds
    double reconfigure = 0.0;               ///< restart: the reconfiguration its start adds
};

class ElasticResize {
public:
    /// The state it reads.
    ElasticResize(const SimulationInput& in, const Plans& plans, NodePool& pool, Scheduler& scheduler,
                  Ledger& ledger, JobStates& jobs, std::vector<Levels>& levels, JobDraws& job_draws,
                  const JobDue& due, KernelRequests& requests)
        : in_(in),
          plans_(plans),
          pool_(pool),
          scheduler_(scheduler),
          ledger_(ledger),
          jobs_(jobs),
          levels_(levels),
          job_draws_(job_draws),
          due_(due),
          requests_(requests) {}

    /// Elastic job j goes on with the nodes it holds (it restarts on them,
    /// reconfiguring when it `lost_nodes` since it last ran; a narrow job
    /// that a fault restarts on the same nodes keeps their layout). Its
    /// restart, for the engine to start (it gives back no node: the failed
    /// ones left it in its recovery).
    [[nodiscard]] const Resize& shrink(std::uint32_t j, double t, bool lost_nodes);
    /// An outside scheduler runs elastic job j (computing, or waiting after a
    /// failure: `waiting`) on `nodes` from t: it gives back those it holds
    /// and is not given, takes the others, and runs at their width (a
    /// reconfiguration while it computes; a restart after a failure).
    [[nodiscard]] const Resize& resize(std::uint32_t j, const std::vector<std::uint32_t>& nodes, double t,
                                       bool waiting);
    /// Elastic job j, running narrow, has all its nodes again: it takes them
    /// now if it is computing, else before its next compute.
    void grow(std::uint32_t j, double t);
    /// j, computing, pauses at t to reconfigure onto all its nodes.
    void take_nodes_back(std::uint32_t j, double t);
    /// j stops running narrow (it failed, stopped or finished): it waits no
    /// more for its missing nodes; a stop (`keep_claims` false) also drops
    /// its claims on nodes under repair and cold spares on their way.
    void end_narrow(std::uint32_t j, bool keep_claims);

private:
    Resize resized_;  ///< the last resize's outcome
    const SimulationInput& in_;
    const Plans& plans_;
    NodePool& pool_;
    Scheduler& scheduler_;
    Ledger& ledger_;
    JobStates& jobs_;
    std::vector<Levels>& levels_;
    JobDraws& job_draws_;
    const JobDue& due_;
    KernelRequests& requests_;
};

}  // namespace acesim

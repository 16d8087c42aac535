// The built-in placement rules: which nodes a start takes (free nodes for a
// start from the queue, best fit for a job smaller than a node; hot spares,
// free nodes, then cold spares for a recovering job, each time the node
// healthy longest), the cold spares' acquisitions, and the candidates an
// outside placement callback chooses among. An outside scheduler replaces
// these rules; the node pool's bookkeeping stays.
#pragma once

#include <cstdint>
#include <vector>

#include "acesim/simulator.hpp"
#include "draws.hpp"

namespace acesim {

class NodePool;

class PlacementRules {
public:
    explicit PlacementRules(NodePool& pool) : p_(pool) {}

    /// Takes the nodes a recovering job lacks, all or nothing: hot spares
    /// first, then free nodes (best fit for a job smaller than a node), then
    /// cold spares, each time the node healthy longest (earliest last
    /// failure, then the lowest id): never the one just back from repair
    /// when another will do. A cold spare is acquired after a draw of the
    /// cold-spare delay from its own stream (the job waits for it). Then
    /// trades acquisitions still in flight for nodes available now,
    /// cancelling the acquisitions that would end last. True when the job
    /// holds every node it needs. Nodes whose next event changed
    /// (acquisitions begun or cancelled) join the pool's touched().
    bool take_for_recovery(std::uint32_t j, const ReplicaDraws& draws);
    /// The built-in choice among free nodes for a start from the queue: best
    /// fit for a job smaller than a node, whole free nodes otherwise; all or
    /// nothing. Hot spares only with lend_spares, and only for what the free
    /// nodes alone cannot give.
    bool take_free(std::uint32_t j);
    /// The nodes a start of job j may use (the free nodes that fit, and the
    /// hot spares when it is recovering, or with lend_spares when the free
    /// nodes alone do not suffice), ascending, with their history at t.
    void candidates(std::uint32_t j, bool recovering, double t, PlacementCandidates& out) const;
    /// Cold spare n's acquisition ends: it joins the job it was acquired
    /// for, which is returned.
    std::uint32_t finish_acquisition(std::uint32_t n);
    /// Cancels the acquisitions in flight for job j (its cold spares go back
    /// to the cold reserve).
    void cancel_acquisitions(std::uint32_t j);
    /// Ends cold spare n's acquisition without its job.
    void drop_acquisition(std::uint32_t n);

private:
    /// Job j acquires cold spare n now (at once for a zero delay).
    void acquire(std::uint32_t j, std::uint32_t n, const ReplicaDraws& draws);
    /// The node job j would take at once (best fit, then a hot spare, then a
    /// whole free node, each the healthiest of its pool), or -1.
    std::int64_t available_now(std::uint32_t j) const;
    /// The node of a pool healthy longest (earliest last failure, then lowest id).
    std::uint32_t healthiest(std::uint32_t p) const;

    NodePool& p_;
};

}  // namespace acesim

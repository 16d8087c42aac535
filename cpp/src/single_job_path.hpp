// The single-job kernel path (no event heap): simulate()'s fleet-less runs,
// a replica at a time, and simulate_batch()'s grid of jobs alone.
#pragma once

#include <cstdint>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/philox.hpp"
#include "acesim/simulation_input.hpp"
#include "acesim/simulation_output.hpp"
#include "acesim/single_job.hpp"
#include "engine/plans.hpp"

namespace acesim {

/// simulate() without a fleet runs its jobs on the single-job kernel (no
/// event heap: the batch path's rate) unless something needs the heap:
/// the event log, invariant checks, time limits, slow failures or a
/// re-placement delay. Jobs without a fleet share nothing, so each job's
/// lifecycle runs alone; the rows are the heap's, bit for bit.
bool runs_on_single_job_kernel(const SimulationInput& in);

/// The single-job kernel's inputs, made once per call and shared by every
/// replica: one spec per job, the cause table and the streams' key.
class SingleJobPath {
public:
    SingleJobPath(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views);

    /// One replica of a fleet-less simulate(): each job's row into `rows`,
    /// the failure trace (in the heap's order: time, then job index) and
    /// the replica's rollup appended to `out`. false: a job hit a limit or a
    /// law ran out, and `out` is as it was; the caller reruns the replica on
    /// the event heap, which raises the error naming it. A job alone in its
    /// replica raises the heap's error here.
    bool run_replica(std::uint32_t replica, std::uint64_t max_events, JobRecord* rows,
                     SimulationOutput& out) const;

    /// simulate_batch(): every job alone (its streams those of job 0), for
    /// every replica, rows by job then replica; on CUDA with `cuda`.
    SimulationOutput run_batch(std::uint64_t max_events, bool cuda) const;

private:
    CauseTable causes() const {
        return {shares_.data(), detect_.data(), width_.data(), static_cast<std::uint32_t>(shares_.size()),
                total_};
    }

    const SimulationInput& in_;
    const std::vector<DistributionView>& views_;
    std::vector<SingleJobSpec> specs_;
    std::vector<double> shares_;
    std::vector<std::uint32_t> detect_;
    std::vector<std::uint32_t> width_;
    double total_ = 0.0;
    Key key_;
};

}  // namespace acesim

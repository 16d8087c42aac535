// The engine's input: the jobs, their options and laws, and the specs of
// the model and the run (specs.hpp), as one simulate() call takes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "acesim/cancel.hpp"
#include "acesim/distribution_table.hpp"
#include "acesim/job_table.hpp"
#include "acesim/specs.hpp"

namespace acesim {

/// A job's lifecycle options beyond the synchronous, fixed-width model
/// (SimulationInput::job_options; the defaults are none of them). Kept apart
/// from JobSpec so that a workload of millions of plain jobs stays small.
struct JobOptions {
    /// Asynchronous checkpoints: the background persist law (save is then the
    /// blocking snapshot); none: synchronous writes.
    std::uint32_t persist = kNoDistribution;
    std::uint32_t tier_first = 0;  ///< the job's tiers: SimulationInput::tiers[tier_first, + tier_count)
    std::uint32_t tier_count = 0;
    /// Elastic: after losing nodes with no replacement at hand, the job goes
    /// on with what it holds while that is at least this many GPUs (0: not
    /// elastic), at progress rate (GPUs held / gpus) ** scaling.
    std::uint32_t min_gpus = 0;
    std::uint32_t reconfigure = kNoDistribution;  ///< elastic: the cost of each shrink and grow (none: 0)
    double scaling = 1.0;
    /// Bytes of one durable checkpoint: with FleetSpec::storage_bandwidth,
    /// every durable write (or persist) and load from the durable moves them
    /// through the shared storage after its fixed part (0: none).
    double checkpoint_bytes = 0.0;
};

/// A fast checkpoint tier beside the durable checkpoint (in-memory, node-local).
struct CheckpointTierSpec {
    double interval = 0.0;          ///< seconds of progress between its checkpoints
    std::uint32_t save = 0;         ///< its write latency law (a stall)
    std::uint32_t load = 0;         ///< its load latency law (a restart from it)
    std::uint32_t replication = 1;  ///< survives a failure taking fewer than this many of the job's nodes
};

/// Everything one simulate() call needs: the laws, the jobs, the model's
/// specs and (as its base) the run's options.
struct SimulationInput : RunOptions {
    std::vector<Distribution> distributions;
    JobTable jobs;
    std::uint32_t job_failures = kNoDistribution;  ///< job-level inter-failure law, or none
    std::vector<std::uint32_t> job_failure_laws;   ///< optional per-job laws (override job_failures)
    std::vector<CauseSpec> causes;                 ///< empty: no taxonomy (cause -1)
    FleetSpec fleet;
    PolicySpec policy;
    std::uint32_t gpus_per_node = 8;
    const CancelFlag* cancel = nullptr;  ///< polled by the workers (acesim/cancel.hpp); null: never
    /// Per job (or empty: none): the wall-clock limit of one run, from its
    /// start (init + load included); the run is stopped there and the job is
    /// queued again to restart from its last checkpoint. Also the run's
    /// estimate for EASY backfill. inf: no limit for that job.
    std::vector<double> time_limits;
    std::vector<CheckpointTierSpec> tiers;  ///< every job's checkpoint tiers (JobOptions::tier_first)
    std::vector<JobOptions> job_options;    ///< per job, or empty: no job has any

    /// Job j's options (the defaults when no job has any).
    const JobOptions& options(std::size_t j) const {
        static const JobOptions none{};
        return job_options.empty() ? none : job_options[j];
    }
};

/// The job-level inter-failure law of job j (kNoDistribution: none).
inline std::uint32_t job_failure_law(const SimulationInput& in, std::size_t j) {
    return in.job_failure_laws.empty() ? in.job_failures : in.job_failure_laws[j];
}

}  // namespace acesim

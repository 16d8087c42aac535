// The core's errors that a caller must be able to tell apart from a bad
// input or a fault: the bindings translate each into its class of
// acesim.errors (the core itself knows nothing of Python).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace acesim {

/// A run that cannot make progress: a job interrupted `count` times in a row
/// without a new durable checkpoint (max_stalled_failures), or a replica
/// that reached the failure cap (`job` -1 then). Python: NoProgressError.
struct NoProgress : std::runtime_error {
    NoProgress(const std::string& what, std::int64_t job_, std::uint64_t count_, std::uint32_t replica_)
        : std::runtime_error(what), job(job_), count(count_), replica(replica_) {}
    std::int64_t job;     ///< the job's index (-1: the replica's failure cap)
    std::uint64_t count;  ///< the interruptions in a row, or the cap
    std::uint32_t replica;
};

/// The error of job `job`, interrupted `count` (= max_stalled_failures)
/// times in a row without a new durable checkpoint in `replica`.
inline NoProgress stalled_job_error(std::uint32_t job, std::uint64_t count, std::uint32_t replica) {
    return NoProgress("job " + std::to_string(job) + " was interrupted " + std::to_string(count) +
                          " times in a row without a new durable checkpoint in replica " +
                          std::to_string(replica) + " (max_stalled_failures=" + std::to_string(count) +
                          "): it cannot make progress under this failure model (failures come faster "
                          "than a checkpoint interval plus its start and write); give it a shorter "
                          "checkpoint_interval, fewer failures or faster repairs, or raise "
                          "max_stalled_failures",
                      job, count, replica);
}

/// The error of a replica that recorded more than `bound` failures.
inline NoProgress too_many_failures_error(std::uint64_t bound, std::uint32_t replica) {
    return NoProgress("simulation recorded more than " + std::to_string(bound) + " failures in replica " +
                          std::to_string(replica) +
                          "; the failure law's draws are too short for jobs to make progress",
                      -1, bound, replica);
}

/// The error of a run whose clock passed kLatestTime (lifecycle.hpp);
/// `where` says which replica and which jobs were left, and what the fleet
/// looked like then.
inline std::string past_latest_time(const std::string& where) {
    return "the simulated clock passed 1e13 s (about 317,000 years) in " + where +
           ". Under this model they cannot finish (quarantines or repairs that outlast them, a fleet too "
           "small for them, failures faster than their progress): set a finite horizon to measure a window "
           "of the run";
}

/// The error of a replica that processed more than `max_events` events.
inline std::string max_events_error(std::uint64_t max_events, std::uint32_t replica) {
    return "simulation exceeded max_events=" + std::to_string(max_events) + " in replica " +
           std::to_string(replica) + "; a job may never finish under this failure model: set a horizon";
}

}  // namespace acesim

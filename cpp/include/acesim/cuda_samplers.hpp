// Host interface of the optional CUDA samplers. Built from cpp/cuda/*.cu when
// a CUDA compiler is found, from cpp/src/cuda_stub.cpp otherwise; callers
// never need to know which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "acesim/distribution_table.hpp"
#include "acesim/sampler.hpp"
#include "acesim/single_job.hpp"

namespace acesim {

/// Whether this build contains the CUDA samplers.
bool cuda_built();
/// Whether a CUDA device can be used now (false without a driver or device).
bool cuda_available();
/// Same draws as sample_cpu, computed on the device into host memory `out`.
/// Returns an empty string on success, else the reason.
std::string sample_cuda(const Distribution& dist, const SampleRequest& request, double* out,
                        std::uint64_t count);

/// Everything the batch Monte Carlo of the single-job model needs on the device.
struct BatchRequest {
    const std::vector<Distribution>* distributions;
    const std::vector<SingleJobSpec>* specs;
    const std::vector<double>* cause_shares;
    const std::vector<std::uint32_t>* cause_detect;
    const std::vector<std::uint32_t>* cause_width;
    double cause_total;
    std::uint64_t seed;
    std::uint32_t first_replica;
    std::uint32_t replicas;
    double horizon;
    std::uint64_t max_events;
};

/// run_single_job for every (spec, replica), one device thread each, rows
/// ordered by spec then replica into host memory `rows` (and `status`).
/// Returns an empty string on success, else the reason.
std::string batch_cuda(const BatchRequest& request, JobRecord* rows, std::uint32_t* status);

}  // namespace acesim

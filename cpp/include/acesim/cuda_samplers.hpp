// Host interface of the optional CUDA samplers. Built from cpp/cuda/*.cu when
// a CUDA compiler is found, from cpp/src/cuda_stub.cpp otherwise; callers
// never need to know which.
#pragma once

#include <cstdint>
#include <string>

#include "acesim/distribution_table.hpp"
#include "acesim/sampler.hpp"

namespace acesim {

/// Whether this build contains the CUDA samplers.
bool cuda_built();
/// Whether a CUDA device can be used now (false without a driver or device).
bool cuda_available();
/// Same draws as sample_cpu, computed on the device into host memory `out`.
/// Returns an empty string on success, else the reason.
std::string sample_cuda(const Distribution& dist, const SampleRequest& request, double* out,
                        std::uint64_t count);

}  // namespace acesim

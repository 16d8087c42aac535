// CPU-only build: the CUDA entry points exist and say there is no device.
#include "acesim/cuda_samplers.hpp"

namespace acesim {

bool cuda_built() { return false; }
bool cuda_available() { return false; }
std::string sample_cuda(const Distribution&, const SampleRequest&, double*, std::uint64_t) {
    return "acesim was built without CUDA (install with a CUDA compiler on PATH, ACESIM_CUDA=ON)";
}
std::string batch_cuda(const BatchRequest&, JobRecord*, std::uint32_t*) {
    return "acesim was built without CUDA (install with a CUDA compiler on PATH, ACESIM_CUDA=ON)";
}

}  // namespace acesim

// CUDA batch samplers: the same Philox streams and distribution code as the
// CPU path (acesim/distributions.hpp), one draw per thread.
#include <cuda_runtime.h>

#include <string>

#include "acesim/cuda_samplers.hpp"
#include "acesim/distributions.hpp"

namespace acesim {
namespace {

__global__ void sample_kernel(DistributionView dist, Stream stream, std::uint32_t first, double gpus,
                              double* out, std::uint64_t count) {
    const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t k = i; k < count; k += step)
        out[k] = draw(dist, stream, static_cast<std::uint32_t>(first + k), gpus);
}

template <class T>
struct DeviceBuffer {
    T* ptr = nullptr;
    ~DeviceBuffer() {
        if (ptr) cudaFree(ptr);
    }
    cudaError_t alloc(std::size_t n) { return cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T) + 1); }
};

std::string describe(cudaError_t e, const char* what) {
    return std::string("CUDA ") + what + ": " + cudaGetErrorString(e);
}

}  // namespace

bool cuda_built() { return true; }

bool cuda_available() {
    int count = 0;
    // Without a driver this returns cudaErrorInsufficientDriver at once.
    if (cudaGetDeviceCount(&count) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky error
        return false;
    }
    return count > 0;
}

std::string sample_cuda(const Distribution& dist, const SampleRequest& request, double* out,
                        std::uint64_t count) {
    if (!cuda_available()) return "no CUDA device is available";
    if (count == 0) return {};
    DeviceBuffer<DistNode> nodes;
    DeviceBuffer<double> data;
    DeviceBuffer<std::uint32_t> links;
    DeviceBuffer<double> result;
    cudaError_t e;
    if ((e = nodes.alloc(dist.nodes().size())) != cudaSuccess) return describe(e, "malloc");
    if ((e = data.alloc(dist.data().size())) != cudaSuccess) return describe(e, "malloc");
    if ((e = links.alloc(dist.links().size())) != cudaSuccess) return describe(e, "malloc");
    if ((e = result.alloc(count)) != cudaSuccess) return describe(e, "malloc");
    cudaMemcpy(nodes.ptr, dist.nodes().data(), dist.nodes().size() * sizeof(DistNode),
               cudaMemcpyHostToDevice);
    cudaMemcpy(data.ptr, dist.data().data(), dist.data().size() * sizeof(double), cudaMemcpyHostToDevice);
    cudaMemcpy(links.ptr, dist.links().data(), dist.links().size() * sizeof(std::uint32_t),
               cudaMemcpyHostToDevice);
    const DistributionView view{nodes.ptr, data.ptr, links.ptr, dist.root()};
    const Stream stream{key_from_seed(request.seed), request.stream, request.replica};
    const int threads = 256;
    const std::uint64_t wanted = (count + threads - 1) / threads;
    const int blocks = static_cast<int>(wanted < 65535 * 16 ? wanted : 65535 * 16);
    sample_kernel<<<blocks, threads>>>(view, stream, request.first, request.gpus, result.ptr, count);
    if ((e = cudaGetLastError()) != cudaSuccess) return describe(e, "launch");
    if ((e = cudaMemcpy(out, result.ptr, count * sizeof(double), cudaMemcpyDeviceToHost)) != cudaSuccess)
        return describe(e, "copy");
    return {};
}

}  // namespace acesim

// CUDA batch samplers: the same Philox streams and distribution code as the
// CPU path (acesim/distributions.hpp), one draw per thread.
#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "acesim/cuda_samplers.hpp"
#include "acesim/distributions.hpp"
#include "acesim/single_job.hpp"

namespace acesim {
namespace {

__global__ void sample_kernel(DistributionView dist, Stream stream, std::uint32_t first, double gpus,
                              double* out, std::uint64_t count) {
    const std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t k = i; k < count; k += step)
        out[k] = draw(dist, stream, static_cast<std::uint32_t>(first + k), gpus);
}

__global__ void batch_kernel(const SingleJobSpec* specs, std::uint32_t points, const DistributionView* dists,
                             CauseTable causes, Key key, std::uint32_t first_replica, std::uint32_t replicas,
                             double horizon, std::uint64_t max_events, JobRecord* rows,
                             std::uint32_t* status) {
    const std::uint64_t count = static_cast<std::uint64_t>(points) * replicas;
    const std::uint64_t step = static_cast<std::uint64_t>(gridDim.x) * blockDim.x;
    for (std::uint64_t i = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += step) {
        const std::uint64_t p = i / replicas;
        const std::uint32_t replica = first_replica + static_cast<std::uint32_t>(i % replicas);
        std::uint64_t events = 0;
        status[i] =
            run_single_job(specs[p], dists, causes, key, replica, 0u, horizon, max_events, rows[i], events);
        rows[i].job = static_cast<std::uint32_t>(p);
    }
}

template <class T>
struct DeviceBuffer {
    T* ptr = nullptr;
    ~DeviceBuffer() {
        if (ptr) cudaFree(ptr);
    }
    DeviceBuffer() = default;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr(o.ptr) { o.ptr = nullptr; }
    cudaError_t alloc(std::size_t n) { return cudaMalloc(reinterpret_cast<void**>(&ptr), n * sizeof(T) + 1); }
    cudaError_t upload(const T* host, std::size_t n) {
        cudaError_t e = alloc(n);
        if (e != cudaSuccess || n == 0) return e;
        return cudaMemcpy(ptr, host, n * sizeof(T), cudaMemcpyHostToDevice);
    }
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

namespace acesim {

std::string batch_cuda(const BatchRequest& request, JobRecord* rows, std::uint32_t* status) {
    if (!cuda_available()) return "no CUDA device is available";
    const std::uint64_t count = static_cast<std::uint64_t>(request.specs->size()) * request.replicas;
    if (count == 0) return {};
    cudaError_t e;
    // Every distribution's table, then the views that point at them.
    const auto& dists = *request.distributions;
    std::vector<DeviceBuffer<DistNode>> nodes(dists.size());
    std::vector<DeviceBuffer<double>> data(dists.size());
    std::vector<DeviceBuffer<std::uint32_t>> links(dists.size());
    std::vector<DistributionView> views(dists.size());
    for (std::size_t d = 0; d < dists.size(); ++d) {
        if ((e = nodes[d].upload(dists[d].nodes().data(), dists[d].nodes().size())) != cudaSuccess)
            return describe(e, "copy");
        if ((e = data[d].upload(dists[d].data().data(), dists[d].data().size())) != cudaSuccess)
            return describe(e, "copy");
        if ((e = links[d].upload(dists[d].links().data(), dists[d].links().size())) != cudaSuccess)
            return describe(e, "copy");
        views[d] = DistributionView{nodes[d].ptr, data[d].ptr, links[d].ptr, dists[d].root()};
    }
    DeviceBuffer<DistributionView> d_views;
    DeviceBuffer<SingleJobSpec> d_specs;
    DeviceBuffer<double> d_shares;
    DeviceBuffer<std::uint32_t> d_detect;
    DeviceBuffer<std::uint32_t> d_width;
    DeviceBuffer<JobRecord> d_rows;
    DeviceBuffer<std::uint32_t> d_status;
    if ((e = d_views.upload(views.data(), views.size())) != cudaSuccess) return describe(e, "copy");
    if ((e = d_specs.upload(request.specs->data(), request.specs->size())) != cudaSuccess)
        return describe(e, "copy");
    if ((e = d_shares.upload(request.cause_shares->data(), request.cause_shares->size())) != cudaSuccess)
        return describe(e, "copy");
    if ((e = d_detect.upload(request.cause_detect->data(), request.cause_detect->size())) != cudaSuccess)
        return describe(e, "copy");
    if ((e = d_width.upload(request.cause_width->data(), request.cause_width->size())) != cudaSuccess)
        return describe(e, "copy");
    if ((e = d_rows.alloc(count)) != cudaSuccess) return describe(e, "malloc");
    if ((e = d_status.alloc(count)) != cudaSuccess) return describe(e, "malloc");
    const CauseTable causes{d_shares.ptr, d_detect.ptr, d_width.ptr,
                            static_cast<std::uint32_t>(request.cause_shares->size()), request.cause_total};
    const int threads = 128;
    const std::uint64_t wanted = (count + threads - 1) / threads;
    const int blocks = static_cast<int>(wanted < 65535 * 16 ? wanted : 65535 * 16);
    batch_kernel<<<blocks, threads>>>(d_specs.ptr, static_cast<std::uint32_t>(request.specs->size()),
                                      d_views.ptr, causes, key_from_seed(request.seed), request.first_replica,
                                      request.replicas, request.horizon, request.max_events, d_rows.ptr,
                                      d_status.ptr);
    if ((e = cudaGetLastError()) != cudaSuccess) return describe(e, "launch");
    if ((e = cudaMemcpy(rows, d_rows.ptr, count * sizeof(JobRecord), cudaMemcpyDeviceToHost)) != cudaSuccess)
        return describe(e, "copy");
    if ((e = cudaMemcpy(status, d_status.ptr, count * sizeof(std::uint32_t), cudaMemcpyDeviceToHost)) !=
        cudaSuccess)
        return describe(e, "copy");
    return {};
}

}  // namespace acesim

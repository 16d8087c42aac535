#include "acesim/sampler.hpp"

#include <algorithm>
#include <thread>

namespace acesim {

unsigned resolve_threads(unsigned threads, std::uint64_t work_items, std::uint64_t min_items_per_thread) {
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    const std::uint64_t useful =
        std::max<std::uint64_t>(1, work_items / std::max<std::uint64_t>(1, min_items_per_thread));
    return static_cast<unsigned>(std::min<std::uint64_t>(threads, useful));
}

void sample_cpu(const Distribution& dist, const SampleRequest& request, double* out, std::uint64_t count,
                unsigned threads) {
    const DistributionView view = dist.view();
    const Stream stream{key_from_seed(request.seed), request.stream, request.replica};
    // Below this many draws a thread costs more than it saves.
    constexpr std::uint64_t kMinDrawsPerThread = 4096;
    parallel_for(count, threads, kMinDrawsPerThread, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t i = begin; i < end; ++i)
            out[i] = draw(view, stream, static_cast<std::uint32_t>(request.first + i), request.gpus);
    });
}

void philox_blocks(std::uint64_t seed, std::uint32_t replica, std::uint32_t stream, std::uint32_t first,
                   std::uint32_t* out, std::uint64_t count) {
    const Stream s{key_from_seed(seed), stream, replica};
    for (std::uint64_t i = 0; i < count; ++i) {
        const Block b = s.block(static_cast<std::uint32_t>(first + i), 0);
        for (int w = 0; w < 4; ++w) out[4 * i + w] = b.v[w];
    }
}

}  // namespace acesim

// Batch sampling on CPU threads: out[i] is draw (first + i) of the stream, so
// the numbers never depend on the thread count or on how a batch is split.
#pragma once

#include <cstdint>

#include "acesim/cancel.hpp"
#include "acesim/distribution_table.hpp"

namespace acesim {

/// Where a batch of draws comes from.
struct SampleRequest {
    std::uint64_t seed = 0;
    std::uint32_t replica = 0;
    std::uint32_t stream = 0;  ///< full stream id (see stream_id)
    std::uint32_t first = 0;   ///< index of the first draw
    double gpus = 1.0;         ///< job size, read by ScaleAware
};

/// Fills out[0, count) with draws first, first+1, ... of the stream: out[i]
/// is bit for bit draw(dist, stream, first + i, gpus), the number the
/// simulator and the CUDA kernels compute. Leaf laws (Constant, Exponential,
/// Weibull, LogNormal, Empirical, and ScaleAware chains over them) take a
/// vectorized batch path (AVX-512 or AVX2 where the CPU has them); the others
/// call draw() per element. The environment variable ACESIM_CPU_SAMPLER
/// ("draw", "portable", "avx2", "avx512"; read once per process) caps that
/// choice for tests and measurements. `threads` == 0 means one thread per
/// hardware core.
void sample_cpu(const Distribution& dist, const SampleRequest& request, double* out, std::uint64_t count,
                unsigned threads, const CancelFlag* cancel = nullptr);

/// out[i] = draw(dist, stream, first + i, gpus) for i < count (the index wraps
/// at 2^32 like draw()'s), on the calling thread, through the same batch
/// kernels as sample_cpu: bit for bit draw()'s numbers, several times faster
/// for leaf laws. For callers that consume a stream in order and can buffer
/// draws ahead (a draw is a pure function of its index).
void draw_range(const DistributionView& dist, const Stream& stream, std::uint32_t first, std::uint64_t count,
                double gpus, double* out);

/// Raw Philox blocks for counters (0, first + i, stream, replica): for
/// known-answer and parity tests. out holds 4 * count words.
void philox_blocks(std::uint64_t seed, std::uint32_t replica, std::uint32_t stream, std::uint32_t first,
                   std::uint32_t* out, std::uint64_t count);

/// Runs body(begin, end) over contiguous chunks of [0, count), on up to
/// `threads` threads (the caller's among them; at least
/// `min_items_per_thread` items per thread), each taking the next chunk when
/// it finishes one. Items must not depend on which thread or chunk runs them.
/// Once `cancel` is set no further chunk starts (the body polls within one).
template <class Body>
void parallel_for(std::uint64_t count, unsigned threads, std::uint64_t min_items_per_thread, Body body,
                  const CancelFlag* cancel = nullptr);

/// Threads to use: 0 means one per hardware core; never more than useful.
unsigned resolve_threads(unsigned threads, std::uint64_t work_items, std::uint64_t min_items_per_thread);

}  // namespace acesim

#include <atomic>
#include <thread>
#include <vector>

namespace acesim {
template <class Body>
void parallel_for(std::uint64_t count, unsigned threads, std::uint64_t min_items_per_thread, Body body,
                  const CancelFlag* cancel) {
    threads = resolve_threads(threads, count, min_items_per_thread);
    if (threads <= 1) {
        body(std::uint64_t{0}, count);
        return;
    }
    // Threads take chunks as they finish the last (about 32 each), so items
    // of unequal cost (grid points, a job that fails a lot) leave no core
    // idle while another works through a long static share.
    const std::uint64_t per_thread_chunks = 32;
    std::uint64_t chunk = count / (static_cast<std::uint64_t>(threads) * per_thread_chunks);
    if (chunk < min_items_per_thread / 4) chunk = min_items_per_thread / 4;
    if (chunk == 0) chunk = 1;
    std::atomic<std::uint64_t> next{0};
    auto work = [&] {
        for (;;) {
            if (cancel_requested(cancel)) return;
            const std::uint64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
            if (begin >= count) return;
            body(begin, count - begin < chunk ? count : begin + chunk);
        }
    };
    std::vector<std::thread> pool;
    pool.reserve(threads - 1);
    for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
    work();  // the calling thread takes chunks too
    for (auto& th : pool) th.join();
}
}  // namespace acesim

#include "replica_chunks.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <utility>

#include "acesim/cancel.hpp"
#include "acesim/sampler.hpp"

namespace acesim {

SimulationOutput run_replicas(const SimulationInput& in, const ReplicaRun& run) {
    SimulationOutput out;
    resize_interruptibly(out.jobs, in.jobs.size() * static_cast<std::size_t>(in.replicas), in.cancel);
    // One output per chunk of replicas (the ledger appends a replica's rows
    // after the last one's), joined in replica order: millions of replicas
    // do not each hold an output of empty tables.
    struct Chunk {
        SimulationOutput out;
        std::exception_ptr error;  // the first replica of the chunk that failed
    };
    std::mutex chunks_mutex;
    std::map<std::uint64_t, Chunk> chunks;  // by first replica
    parallel_for(
        in.replicas, in.threads, 1,
        [&](std::uint64_t begin, std::uint64_t end) {
            // A chunk's tables are cut into segments of about kSegmentBytes:
            // a table that grows copies what it holds, which Ctrl-C would
            // wait out (a 5M-replica run's trace reaches gigabytes). The
            // segments are joined in replica order.
            constexpr std::size_t kSegmentBytes = std::size_t{64} << 20;
            // The failure trace's rows so far in this range: a segment's
            // trace is reserved for what the rest of the range will likely
            // need, so it does not grow by doubling (each growth copies it
            // and touches fresh memory).
            std::uint64_t seen_replicas = 0;
            std::uint64_t seen_rows = 0;
            // The first segment is sized after its first replica (a run of a
            // few long replicas, AIReSim's 60 of 11,000 failures each, would
            // otherwise grow it by doubling: each growth copies it and
            // touches fresh pages), and again once these tell the rate better.
            constexpr std::uint64_t kSizingReplicas = 64;
            const auto reserve_trace = [&](Chunk& chunk, std::uint64_t next) {
                if (seen_replicas == 0) return;
                constexpr double kSlack = 1.05;
                const double likely = static_cast<double>(chunk.out.trace.size()) +
                                      static_cast<double>(seen_rows) / static_cast<double>(seen_replicas) *
                                          static_cast<double>(end - next) * kSlack;
                // At most a segment's, with room for the replica that crosses it.
                const double most = static_cast<double>(kSegmentBytes / sizeof(TraceRecord) + (1u << 16));
                const auto rows = static_cast<std::size_t>(std::min(likely, most));
                if (rows > chunk.out.trace.capacity()) chunk.out.trace.reserve(rows);
            };
            const auto open = [&](Chunk& chunk, std::uint64_t from) {
                // One rollup a replica.
                chunk.out.fleet.reserve(
                    std::min<std::uint64_t>(end - from, kSegmentBytes / sizeof(FleetRecord)));
                reserve_trace(chunk, from);
            };
            const auto store = [&](std::uint64_t from, Chunk&& chunk) {
                const std::lock_guard<std::mutex> lock(chunks_mutex);
                chunks.emplace(from, std::move(chunk));
            };
            Chunk chunk;
            std::uint64_t from = begin;
            open(chunk, from);
            for (std::uint64_t r = begin; r < end; ++r) {
                if (r > from && table_bytes(chunk.out) >= kSegmentBytes) {
                    store(from, std::move(chunk));
                    chunk = Chunk{};
                    from = r;
                    open(chunk, from);
                }
                try {
                    throw_if_cancelled(in.cancel);
                    const std::uint32_t replica = in.first_replica + static_cast<std::uint32_t>(r);
                    JobRecord* rows = out.jobs.data() + r * in.jobs.size();
                    const std::size_t rows_before = chunk.out.trace.size();
                    run(replica, rows, chunk.out);
                    seen_rows += chunk.out.trace.size() - rows_before;
                    ++seen_replicas;
                    if (seen_replicas == 1 || seen_replicas == kSizingReplicas) reserve_trace(chunk, r + 1);
                } catch (...) {
                    chunk.error = std::current_exception();
                    break;  // later replicas of this chunk are not needed
                }
            }
            store(from, std::move(chunk));
        },
        in.cancel);
    // Before any error a cancelled replica left:
    throw_if_cancelled_releasing(in.cancel, out, chunks);
    for (const auto& [begin, chunk] : chunks)
        if (chunk.error) std::rethrow_exception(chunk.error);

    if (chunks.size() == 1) {  // one segment: its tables are the result's
        move_tables(out, std::move(chunks.begin()->second.out));
        return out;
    }
    for_each_table([&](const char*, auto table) {
        std::size_t rows = 0;
        for (const auto& [begin, chunk] : chunks) rows += (chunk.out.*table).size();
        (out.*table).reserve(rows);
    });
    for (auto& [begin, chunk] : chunks) {
        throw_if_cancelled_releasing(in.cancel, out, chunks);  // a segment's copy is milliseconds
        append_tables(out, chunk.out);
        chunk.out = SimulationOutput{};
    }
    return out;
}

}  // namespace acesim

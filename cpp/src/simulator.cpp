#include "acesim/simulator.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <mutex>
#include <optional>

#include "acesim/sampler.hpp"
#include "engine/plans.hpp"
#include "engine/replica_engine.hpp"
#include "input_validation.hpp"
#include "single_job_path.hpp"

namespace acesim {

namespace {

std::vector<DistributionView> make_views(const SimulationInput& in) {
    std::vector<DistributionView> views;
    views.reserve(in.distributions.size());
    for (const Distribution& d : in.distributions) views.push_back(d.view());
    return views;
}

}  // namespace

SimulationOutput simulate(const SimulationInput& in) {
    validate(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    std::optional<SingleJobPath> kernel;
    if (runs_on_single_job_kernel(in)) kernel.emplace(in, plans, views);

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
            const auto bytes = [](const SimulationOutput& o) {
                return o.fleet.size() * sizeof(FleetRecord) + o.trace.size() * sizeof(TraceRecord) +
                       o.events.size() * sizeof(EventRecord) + o.placements.size() * sizeof(PlacementRecord) +
                       o.node_events.size() * sizeof(NodeEventRecord);
            };
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
                if (r > from && bytes(chunk.out) >= kSegmentBytes) {
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
                    if (!kernel || !kernel->run_replica(replica, max_events, rows, chunk.out)) {
                        ReplicaEngine run(in, plans, views, replica, max_events, rows, chunk.out);
                        run.run();
                    }
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
        SimulationOutput& o = chunks.begin()->second.out;
        out.fleet = std::move(o.fleet);
        out.trace = std::move(o.trace);
        out.events = std::move(o.events);
        out.placements = std::move(o.placements);
        out.node_events = std::move(o.node_events);
        return out;
    }
    std::size_t nf = 0, nt = 0, ne = 0, np = 0, nn = 0;
    for (const auto& [begin, chunk] : chunks) {
        nf += chunk.out.fleet.size();
        nt += chunk.out.trace.size();
        ne += chunk.out.events.size();
        np += chunk.out.placements.size();
        nn += chunk.out.node_events.size();
    }
    out.fleet.reserve(nf);
    out.trace.reserve(nt);
    out.events.reserve(ne);
    out.placements.reserve(np);
    out.node_events.reserve(nn);
    for (auto& [begin, chunk] : chunks) {
        throw_if_cancelled_releasing(in.cancel, out, chunks);  // a segment's copy is milliseconds
        SimulationOutput& o = chunk.out;
        out.fleet.insert(out.fleet.end(), o.fleet.begin(), o.fleet.end());
        out.trace.insert(out.trace.end(), o.trace.begin(), o.trace.end());
        out.events.insert(out.events.end(), o.events.begin(), o.events.end());
        out.placements.insert(out.placements.end(), o.placements.begin(), o.placements.end());
        out.node_events.insert(out.node_events.end(), o.node_events.begin(), o.node_events.end());
        o = SimulationOutput{};
    }
    return out;
}

SimulationOutput simulate_batch(const SimulationInput& in, bool cuda) {
    validate(in);
    validate_batch(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    return SingleJobPath(in, plans, views).run_batch(max_events, cuda);
}

}  // namespace acesim
#include "acesim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"
#include "acesim/cuda_samplers.hpp"
#include "acesim/sampler.hpp"
#include "acesim/single_job.hpp"
#include "engine/ledger.hpp"
#include "engine/plans.hpp"
#include "engine/replica_engine.hpp"
#include "engine/require.hpp"
#include "input_validation.hpp"

namespace acesim {

using detail::require;

namespace {

std::vector<DistributionView> make_views(const SimulationInput& in) {
    std::vector<DistributionView> views;
    views.reserve(in.distributions.size());
    for (const Distribution& d : in.distributions) views.push_back(d.view());
    return views;
}

SingleJobSpec single_job_spec(const SimulationInput& in, const Plans& plans, std::size_t j) {
    const JobSpec& s = in.jobs[j];
    const JobProfile& profile = plans.of(j);
    const double interval = starting_interval(s, profile);
    const std::uint32_t law = job_failure_law(in, j);
    SingleJobSpec spec{};
    spec.work = s.work;
    spec.submit = s.submit;
    spec.interval = interval;
    spec.mtbf = profile.mtbf;
    spec.young = profile.young;
    spec.daly = profile.daly;
    spec.expected_ettr =
        expected_ettr_exponential(profile.mtbf, s.work, interval, profile.save_mean, profile.restart);
    spec.save_mean = profile.save_mean;
    spec.max_stalled_failures = in.max_stalled_failures;
    spec.gpus = s.gpus;
    spec.priority = s.priority;
    spec.rule = static_cast<std::uint32_t>(s.rule);
    spec.nodes = plans.jobs[j].nodes;
    spec.init = s.init;
    spec.save = s.save;
    spec.load = s.load;
    spec.failures = law == kNoDistribution ? kNoLaw : law;
    if (!plans.levels.empty()) {
        spec.leveled = 1u;
        spec.levels = plans.levels[j];
    }
    return spec;
}

/// The single-job kernel's inputs: one spec per job, the cause table and
/// the streams' key.
struct SingleJobTables {
    std::vector<SingleJobSpec> specs;
    std::vector<double> shares;
    std::vector<std::uint32_t> detect;
    std::vector<std::uint32_t> width;
    double total = 0.0;
    Key key;

    SingleJobTables(const SimulationInput& in, const Plans& plans)
        : specs(in.jobs.size()), key(key_from_seed(in.seed)) {
        for (std::size_t j = 0; j < in.jobs.size(); ++j) specs[j] = single_job_spec(in, plans, j);
        for (const CauseSpec& c : in.causes) {
            shares.push_back(c.share);
            detect.push_back(c.detect == kNoDistribution ? kNoLaw : c.detect);
            width.push_back(c.node_scope ? c.nodes : 0u);
            total += c.share;
        }
    }
    CauseTable causes() const {
        return {shares.data(), detect.data(), width.data(), static_cast<std::uint32_t>(shares.size()), total};
    }
};

/// simulate() without a fleet runs its jobs on the single-job kernel (no
/// event heap: the batch path's rate) unless something needs the heap:
/// the event log, invariant checks, time limits, slow failures or a
/// re-placement delay. Jobs without a fleet share nothing, so each job's
/// lifecycle runs alone; the rows are the heap's, bit for bit.
bool runs_on_single_job_kernel(const SimulationInput& in) {
    if (in.fleet.enabled || in.record_events || in.check_invariants) return false;
    if (in.policy.replacement_delay != kNoDistribution || in.policy.on_failure || in.policy.place ||
        in.policy.compiled != nullptr)
        return false;
    for (double limit : in.time_limits)
        if (std::isfinite(limit)) return false;
    for (const CauseSpec& c : in.causes)
        if (c.slowdown != 0.0) return false;
    return true;
}

/// The single-job kernel polls the cancel flag every this many failures of
/// one replica (a replica of a job that cannot progress runs its failures
/// until max_stalled_failures or the failure cap).
constexpr std::uint32_t kPollFailures = 1u << 12;

/// A job's failures as trace rows, as the event heap writes them: the blamed
/// node (job-local) drawn from the job's blame stream at each failure. The
/// event numbers are given once the replica's jobs are merged.
struct FailureRows {
    std::vector<TraceRecord>* rows;
    Stream blame;
    std::uint32_t nodes;  ///< the job's nodes (at least 1)
    std::uint32_t replica;
    std::int32_t job;
    const CancelFlag* cancel;
    std::uint32_t draws = 0;

    void operator()(double t, std::int32_t cause, double drawn) {
        // A job that fails without end stays in its replica: polled here too.
        if ((draws & (kPollFailures - 1)) == kPollFailures - 1) throw_if_cancelled(cancel);
        const auto node = static_cast<std::int32_t>(bounded_index(lo64(blame.block(draws++, 0)), nodes));
        rows->push_back({replica, 0u, job, node, -1, cause, 0u, 0u, t, drawn});
    }
};

/// The batch path's failure trace: none, but the cancel flag polled as
/// FailureRows polls it.
struct PollingTrace {
    const CancelFlag* cancel;
    std::uint32_t failures = 0;

    void operator()(double, std::int32_t, double) {
        if ((++failures & (kPollFailures - 1)) == 0) throw_if_cancelled(cancel);
    }
};

/// One replica of a fleet-less run on the single-job kernel: each job's
/// row, the failure trace in the heap's order (time, then job index: jobs'
/// events at equal times) and the replica's rollup. false: a job hit a
/// limit or a law ran out; the caller reruns the replica on the event heap,
/// which raises the error naming it.
bool run_replica_on_kernel(const SimulationInput& in, const SingleJobTables& tables,
                           const std::vector<DistributionView>& views, std::uint32_t replica,
                           std::uint64_t max_events, JobRecord* rows, SimulationOutput& out,
                           std::vector<TraceRecord>& failures) {
    const Key key = tables.key;
    const CauseTable causes = tables.causes();
    failures.clear();
    FleetRecord fleet{};
    fleet.replica = replica;
    fleet.jobs = static_cast<std::uint32_t>(in.jobs.size());
    std::uint64_t events = 0;
    for (std::uint32_t j = 0; j < in.jobs.size(); ++j) {
        const SingleJobSpec& spec = tables.specs[j];
        const FailureRows trace{&failures,
                                Stream{key, stream_id(EntityKind::Job, j, Purpose::Blame), replica},
                                spec.nodes > 1 ? spec.nodes : 1u,
                                replica,
                                static_cast<std::int32_t>(j),
                                in.cancel};
        std::uint64_t job_events = 0;
        const std::uint32_t status = run_single_job(spec, views.data(), causes, key, replica, j, in.horizon,
                                                    max_events, rows[j], job_events, trace);
        if (status != kSingleJobOk) {
            // A job alone in its replica hits its limits in the heap's order:
            // the heap's error, without running the hopeless replica again.
            if (in.jobs.size() == 1 && status == kSingleJobMaxEvents)
                throw std::runtime_error(max_events_error(max_events, replica));
            if (in.jobs.size() == 1 && status == kSingleJobTooManyFailures)
                throw too_many_failures_error(kSingleJobMaxFailures, replica);
            if (in.jobs.size() == 1 && status == kSingleJobNoProgress)
                throw stalled_job_error(0, in.max_stalled_failures, replica);
            return false;
        }
        events += job_events;
        if (events > max_events || failures.size() > kMaxFailuresPerReplica) return false;
        roll_up(fleet, rows[j]);
    }
    if (in.jobs.size() > 1)
        std::stable_sort(failures.begin(), failures.end(), [](const TraceRecord& a, const TraceRecord& b) {
            return a.time < b.time || (a.time == b.time && a.job < b.job);
        });
    for (std::size_t k = 0; k < failures.size(); ++k) failures[k].event = static_cast<std::uint32_t>(k);
    out.trace.insert(out.trace.end(), failures.begin(), failures.end());
    fleet.events = events;
    finish_rollup(fleet);
    out.fleet.push_back(fleet);
    return true;
}

}  // namespace

SimulationOutput simulate(const SimulationInput& in) {
    validate(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    const bool on_kernel = runs_on_single_job_kernel(in);
    std::optional<SingleJobTables> tables;
    if (on_kernel) tables.emplace(in, plans);

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
            std::vector<TraceRecord> failures;  // one replica's, on the single-job kernel
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
                    if (!on_kernel || !run_replica_on_kernel(in, *tables, views, replica, max_events, rows,
                                                             chunk.out, failures)) {
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

}  // namespace acesim

namespace acesim {

SimulationOutput simulate_batch(const SimulationInput& in, bool cuda) {
    validate(in);
    validate_batch(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    const SingleJobTables tables(in, plans);
    const std::vector<SingleJobSpec>& specs = tables.specs;
    const CauseTable causes = tables.causes();
    const Key key = tables.key;
    const std::uint64_t count = static_cast<std::uint64_t>(in.jobs.size()) * in.replicas;
    SimulationOutput out;
    resize_interruptibly(out.jobs, count, in.cancel);
    std::vector<std::uint32_t> status(count, kSingleJobOk);
    if (cuda) {
        const BatchRequest request{&in.distributions, &specs,       &tables.shares, &tables.detect,
                                   &tables.width,     tables.total, in.seed,        in.first_replica,
                                   in.replicas,       in.horizon,   max_events};
        const std::string error = batch_cuda(request, out.jobs.data(), status.data());
        if (!error.empty()) throw std::runtime_error(error);
    } else {
        // A replica of a small job takes about a microsecond: hand out chunks.
        constexpr std::uint64_t kMinRunsPerThread = 256;
        parallel_for(
            count, in.threads, kMinRunsPerThread,
            [&](std::uint64_t begin, std::uint64_t end) {
                for (std::uint64_t i = begin; i < end; ++i) {
                    if ((i & 63u) == 0 && cancel_requested(in.cancel)) return;
                    const std::uint64_t j = i / in.replicas;
                    const std::uint32_t replica =
                        in.first_replica + static_cast<std::uint32_t>(i % in.replicas);
                    std::uint64_t events = 0;
                    try {
                        status[i] =
                            run_single_job(specs[j], views.data(), causes, key, replica, 0u, in.horizon,
                                           max_events, out.jobs[i], events, PollingTrace{in.cancel});
                    } catch (const Cancelled&) {
                        return;  // (thrown below, once every thread stopped)
                    }
                    out.jobs[i].job = static_cast<std::uint32_t>(j);
                }
            },
            in.cancel);
        throw_if_cancelled_releasing(in.cancel, out, status);
    }
    for (std::uint64_t i = 0; i < count; ++i) {
        if (status[i] == kSingleJobMaxEvents)
            throw std::runtime_error(max_events_error(max_events, out.jobs[i].replica));
        if (status[i] == kSingleJobNoDraw) {
            // The event-heap engine makes the same draws and names the law,
            // its job and the draw that is missing: run the replica there.
            const std::uint64_t job = i / in.replicas;
            const std::uint32_t replica = in.first_replica + static_cast<std::uint32_t>(i % in.replicas);
            SimulationInput again = in;
            again.first_replica = replica;
            again.replicas = 1;
            again.threads = 1;
            again.cancel = nullptr;
            simulate(again);
            throw std::invalid_argument("a duration law of job " + std::to_string(job) +
                                        " ran out of draws in replica " + std::to_string(replica) +
                                        " (a Replay of its values ran out: give it more values, or resample "
                                        "them with Empirical)");
        }
        if (status[i] == kSingleJobPastLatestTime)
            throw std::runtime_error(past_latest_time(
                "replica " + std::to_string(in.first_replica + static_cast<std::uint32_t>(i % in.replicas)) +
                " with job " + std::to_string(i / in.replicas) + " unfinished"));
        if (status[i] == kSingleJobTooManyFailures)
            throw too_many_failures_error(kSingleJobMaxFailures, out.jobs[i].replica);
        if (status[i] == kSingleJobNoProgress)
            throw stalled_job_error(static_cast<std::uint32_t>(i / in.replicas), in.max_stalled_failures,
                                    out.jobs[i].replica);
    }
    return out;
}

}  // namespace acesim
#include "single_job_path.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"
#include "acesim/cancel.hpp"
#include "acesim/cuda_samplers.hpp"
#include "acesim/errors.hpp"
#include "acesim/sampler.hpp"
#include "acesim/simulator.hpp"
#include "engine/ledger.hpp"

namespace acesim {

namespace {

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

}  // namespace

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

SingleJobPath::SingleJobPath(const SimulationInput& in, const Plans& plans,
                             const std::vector<DistributionView>& views)
    : in_(in), views_(views), specs_(in.jobs.size()), key_(key_from_seed(in.seed)) {
    for (std::size_t j = 0; j < in.jobs.size(); ++j) specs_[j] = single_job_spec(in, plans, j);
    for (const CauseSpec& c : in.causes) {
        shares_.push_back(c.share);
        detect_.push_back(c.detect == kNoDistribution ? kNoLaw : c.detect);
        width_.push_back(c.node_scope ? c.nodes : 0u);
        total_ += c.share;
    }
}

bool SingleJobPath::run_replica(std::uint32_t replica, std::uint64_t max_events, JobRecord* rows,
                                SimulationOutput& out) const {
    const CauseTable causes = this->causes();
    // The replica's failures are appended to the trace, then put in the
    // heap's order; a replica handed back to the heap leaves none.
    const std::size_t first = out.trace.size();
    const auto hand_back = [&] {
        out.trace.resize(first);
        return false;
    };
    FleetRecord fleet{};
    fleet.replica = replica;
    fleet.jobs = static_cast<std::uint32_t>(in_.jobs.size());
    std::uint64_t events = 0;
    for (std::uint32_t j = 0; j < in_.jobs.size(); ++j) {
        const SingleJobSpec& spec = specs_[j];
        const FailureRows trace{&out.trace,
                                Stream{key_, stream_id(EntityKind::Job, j, Purpose::Blame), replica},
                                spec.nodes > 1 ? spec.nodes : 1u,
                                replica,
                                static_cast<std::int32_t>(j),
                                in_.cancel};
        std::uint64_t job_events = 0;
        const std::uint32_t status = run_single_job(spec, views_.data(), causes, key_, replica, j,
                                                    in_.horizon, max_events, rows[j], job_events, trace);
        if (status != kSingleJobOk) {
            // A job alone in its replica hits its limits in the heap's order:
            // the heap's error, without running the hopeless replica again.
            if (in_.jobs.size() == 1 && status == kSingleJobMaxEvents)
                throw std::runtime_error(max_events_error(max_events, replica));
            if (in_.jobs.size() == 1 && status == kSingleJobTooManyFailures)
                throw too_many_failures_error(kSingleJobMaxFailures, replica);
            if (in_.jobs.size() == 1 && status == kSingleJobNoProgress)
                throw stalled_job_error(0, in_.max_stalled_failures, replica);
            return hand_back();
        }
        events += job_events;
        if (events > max_events || out.trace.size() - first > kMaxFailuresPerReplica) return hand_back();
        roll_up(fleet, rows[j]);
    }
    const auto failures = out.trace.begin() + static_cast<std::ptrdiff_t>(first);
    if (in_.jobs.size() > 1)
        std::stable_sort(failures, out.trace.end(), [](const TraceRecord& a, const TraceRecord& b) {
            return a.time < b.time || (a.time == b.time && a.job < b.job);
        });
    for (std::size_t k = first; k < out.trace.size(); ++k)
        out.trace[k].event = static_cast<std::uint32_t>(k - first);
    fleet.events = events;
    finish_rollup(fleet);
    out.fleet.push_back(fleet);
    return true;
}

SimulationOutput SingleJobPath::run_batch(std::uint64_t max_events, bool cuda) const {
    const SimulationInput& in = in_;
    const CauseTable causes = this->causes();
    const std::uint64_t count = static_cast<std::uint64_t>(in.jobs.size()) * in.replicas;
    SimulationOutput out;
    resize_interruptibly(out.jobs, count, in.cancel);
    std::vector<std::uint32_t> status(count, kSingleJobOk);
    if (cuda) {
        const BatchRequest request{&in.distributions, &specs_,    &shares_,  &detect_,
                                   &width_,           total_,     in.seed,   in.first_replica,
                                   in.replicas,       in.horizon, max_events};
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
                            run_single_job(specs_[j], views_.data(), causes, key_, replica, 0u, in.horizon,
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

#include "acesim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"
#include "acesim/event_heap.hpp"
#include "acesim/philox.hpp"
#include "acesim/sampler.hpp"

namespace acesim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerHour = 3600.0;
/// Bounds the failure trace (about 32 bytes a row) of a run whose failure
/// law strikes faster than jobs can make progress.
constexpr std::size_t kMaxFailuresPerReplica = std::size_t{1} << 25;

void require(bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
}

std::string job_field(std::size_t j, const char* field) { return "jobs[" + std::to_string(j) + "]." + field; }

enum class Phase : std::uint8_t {
    Pending,    // not yet submitted
    Queued,     // submitted, waiting for its first start
    Starting,   // init + load (holds hardware)
    Computing,  // holds hardware, progress advances
    Saving,     // checkpoint write (holds hardware)
    Detecting,  // a fault happened; nodes held, no progress, failure clock stopped
    Waiting,    // waiting for nodes after a failure
    Done,
};

constexpr std::size_t kPurposes = 8;

/// Per-job quantities that do not change between replicas.
struct JobPlan {
    double interval;
    std::uint32_t segments;
    std::uint32_t nodes;
    double mtbf;
    double young;
    double daly;
    double expected_ettr;
};

struct JobState {
    Phase phase = Phase::Pending;
    double phase_start = 0.0;
    double phase_end = 0.0;
    std::uint32_t segments_done = 0;
    double segment_compute = 0.0;  // compute of the segment whose checkpoint is being written
    bool holding = false;          // the failure clock runs
    double fail_at = kInf;         // wall time of the next failure while holding
    double fail_left = kInf;       // held seconds to the next failure while not holding
    double fail_draw = kInf;       // the inter-failure draw in force
    std::uint32_t version = 0;
    bool started = false;
    std::uint32_t draws[kPurposes] = {};
    JobRecord rec{};
};

class ReplicaRun {
public:
    ReplicaRun(const SimulationInput& in, const std::vector<JobPlan>& plans,
               const std::vector<DistributionView>& views, std::uint32_t replica, std::uint64_t max_events,
               SimulationOutput& out)
        : in_(in),
          plans_(plans),
          views_(views),
          replica_(replica),
          key_(key_from_seed(in.seed)),
          max_events_(max_events),
          out_(out) {}

    void run() {
        trace_begin_ = out_.trace.size();
        const std::size_t n = in_.jobs.size();
        jobs_.resize(n);
        heap_.reserve(n);
        for (std::uint32_t j = 0; j < n; ++j) {
            const JobSpec& spec = in_.jobs[j];
            JobState& job = jobs_[j];
            job.rec.replica = replica_;
            job.rec.job = j;
            job.rec.gpus = spec.gpus;
            job.rec.priority = spec.priority;
            job.rec.submit = spec.submit;
            job.phase_end = spec.submit;
            renew_failure_clock(j);
            schedule(j);
        }
        while (!heap_.empty()) {
            const Event e = heap_.top();
            if (e.time > in_.horizon || e.time == kInf) break;  // nothing happens at infinity
            heap_.pop();
            if (e.version != jobs_[e.entity].version) continue;  // superseded
            if (++events_ > max_events_) {
                throw std::runtime_error("simulation exceeded max_events=" + std::to_string(max_events_) +
                                         " in replica " + std::to_string(replica_) +
                                         "; a job may never finish under this failure model: set a horizon");
            }
            handle(e.entity);
            if (out_.trace.size() - trace_begin_ > kMaxFailuresPerReplica) {
                throw std::runtime_error("simulation recorded more than " +
                                         std::to_string(kMaxFailuresPerReplica) + " failures in replica " +
                                         std::to_string(replica_) +
                                         "; the failure law's draws are too short for jobs to make progress");
            }
        }
        finish();
    }

private:
    // --- random draws -----------------------------------------------------
    double draw_duration(std::uint32_t j, Purpose purpose, std::uint32_t dist) {
        const Stream s{key_, stream_id(EntityKind::Job, j, purpose), replica_};
        return draw(views_[dist], s, jobs_[j].draws[static_cast<std::size_t>(purpose)]++,
                    static_cast<double>(in_.jobs[j].gpus));
    }

    std::uint32_t draw_index(std::uint32_t j, Purpose purpose, std::uint32_t n) {
        const Stream s{key_, stream_id(EntityKind::Job, j, purpose), replica_};
        const Block b = s.block(jobs_[j].draws[static_cast<std::size_t>(purpose)]++, 0);
        return static_cast<std::uint32_t>(bounded_index(lo64(b), n));
    }

    void renew_failure_clock(std::uint32_t j) {
        JobState& job = jobs_[j];
        job.fail_draw =
            in_.job_failures == kNoDistribution ? kInf : draw_duration(j, Purpose::Failure, in_.job_failures);
        job.fail_left = job.fail_draw;
    }

    // --- scheduling -------------------------------------------------------
    void schedule(std::uint32_t j) {
        JobState& job = jobs_[j];
        ++job.version;
        const double next = job.holding ? std::min(job.phase_end, job.fail_at) : job.phase_end;
        heap_.push(next, j, job.version);
    }

    void log(std::uint32_t j, EventKind kind, double t) {
        if (!in_.record_events) return;
        const JobState& job = jobs_[j];
        out_.events.push_back(
            {replica_, j, static_cast<std::uint32_t>(kind), 0u, t, committed_progress(j, job.segments_done)});
    }

    double committed_progress(std::uint32_t j, std::uint32_t segments) const {
        const JobPlan& plan = plans_[j];
        if (segments >= plan.segments) return in_.jobs[j].work;
        return segments * plan.interval;
    }

    void hold(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (!job.holding) {
            job.holding = true;
            job.fail_at = t + job.fail_left;
        }
    }

    void release(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (job.holding) {
            job.fail_left = job.fail_at - t;
            job.holding = false;
        }
    }

    // --- lifecycle --------------------------------------------------------
    void handle(std::uint32_t j) {
        JobState& job = jobs_[j];
        if (job.holding && job.fail_at < job.phase_end) {
            on_failure(j, job.fail_at);
        } else {
            on_phase_end(j, job.phase_end);
        }
    }

    void on_phase_end(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        switch (job.phase) {
            case Phase::Pending:
                job.phase = Phase::Queued;
                job.phase_start = t;
                log(j, EventKind::Submit, t);
                begin_start(j, t);  // replacements are always available without a fleet
                break;
            case Phase::Starting:
                job.rec.overhead += t - job.phase_start;
                begin_compute(j, t);
                break;
            case Phase::Computing:
                job.segment_compute = t - job.phase_start;
                job.phase = Phase::Saving;
                job.phase_start = t;
                job.phase_end = t + draw_duration(j, Purpose::Save, in_.jobs[j].save);
                log(j, EventKind::CheckpointBegin, t);
                schedule(j);
                break;
            case Phase::Saving:
                job.rec.productive += job.segment_compute;
                job.rec.ckpt_stall += t - job.phase_start;
                job.segment_compute = 0.0;
                ++job.rec.checkpoints;
                ++job.segments_done;
                log(j, EventKind::CheckpointEnd, t);
                if (job.segments_done >= plans_[j].segments) {
                    complete(j, t);
                } else {
                    begin_compute(j, t);
                }
                break;
            case Phase::Detecting:
                job.rec.detection += t - job.phase_start;
                log(j, EventKind::Detected, t);
                begin_start(j, t);
                break;
            case Phase::Queued:
            case Phase::Waiting:
            case Phase::Done:
                break;  // no timed end
        }
    }

    void begin_start(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (!job.started) {
            job.started = true;
            job.rec.queue_wait += t - job.phase_start;
        } else if (job.phase == Phase::Waiting) {
            job.rec.recovery_wait += t - job.phase_start;
            ++job.rec.restarts;
        } else {
            ++job.rec.restarts;
        }
        const JobSpec& spec = in_.jobs[j];
        const double init = draw_duration(j, Purpose::Init, spec.init);
        const double load = draw_duration(j, Purpose::Load, spec.load);
        job.phase = Phase::Starting;
        job.phase_start = t;
        job.phase_end = t + (init + load);
        hold(j, t);
        log(j, EventKind::StartBegin, t);
        schedule(j);
    }

    void begin_compute(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        const double from = committed_progress(j, job.segments_done);
        const double to = committed_progress(j, job.segments_done + 1);
        job.phase = Phase::Computing;
        job.phase_start = t;
        job.phase_end = t + (to - from);
        log(j, EventKind::ComputeBegin, t);
        schedule(j);
    }

    void complete(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        release(j, t);
        job.phase = Phase::Done;
        job.rec.completed = true;
        job.rec.end = t;
        log(j, EventKind::Done, t);
    }

    void on_failure(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        switch (job.phase) {
            case Phase::Starting:
                job.rec.overhead += t - job.phase_start;
                break;
            case Phase::Computing:
                job.rec.wasted += t - job.phase_start;
                break;
            case Phase::Saving:
                job.rec.wasted += job.segment_compute + (t - job.phase_start);
                job.segment_compute = 0.0;
                break;
            default:
                break;  // the clock only runs while the job holds hardware
        }
        ++job.rec.failures;
        const std::int32_t node = static_cast<std::int32_t>(draw_index(j, Purpose::Blame, plans_[j].nodes));
        out_.trace.push_back({replica_, static_cast<std::int32_t>(j), node, -1, t, job.fail_draw});
        log(j, EventKind::Failure, t);
        release(j, t);
        renew_failure_clock(j);
        // Without a cause taxonomy a failure is seen at once (zero detection
        // latency) and, without a fleet, replacements are always available.
        job.phase = Phase::Detecting;
        job.phase_start = t;
        job.phase_end = t;
        on_phase_end(j, t);
    }

    // --- horizon and rollup ----------------------------------------------
    void finish() {
        FleetRecord fleet{};
        fleet.replica = replica_;
        fleet.jobs = static_cast<std::uint32_t>(jobs_.size());
        fleet.events = events_;
        const double horizon = in_.horizon;
        double makespan = 0.0;
        for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
            JobState& job = jobs_[j];
            JobRecord& r = job.rec;
            double progress = committed_progress(j, job.segments_done);
            if (job.phase != Phase::Done) {
                // At the horizon nothing is lost yet: compute since the last
                // checkpoint is productive, a write in progress is ckpt_stall.
                const double t = std::max(horizon, in_.jobs[j].submit);
                const double elapsed = t - job.phase_start;
                switch (job.phase) {
                    case Phase::Queued:
                        r.queue_wait += elapsed;
                        break;
                    case Phase::Starting:
                        r.overhead += elapsed;
                        break;
                    case Phase::Computing:
                        r.productive += elapsed;
                        progress += elapsed;
                        break;
                    case Phase::Saving:
                        r.productive += job.segment_compute;
                        progress += job.segment_compute;
                        r.ckpt_stall += elapsed;
                        break;
                    case Phase::Detecting:
                        r.detection += elapsed;
                        break;
                    case Phase::Waiting:
                        r.recovery_wait += elapsed;
                        break;
                    case Phase::Pending:
                    case Phase::Done:
                        break;
                }
                r.end = t;
                if (job.phase != Phase::Pending) log(j, EventKind::Horizon, t);
            }
            const JobPlan& plan = plans_[j];
            r.progress = progress;
            r.wall = r.end - r.submit;
            r.ettr = r.wall > 0.0 ? r.productive / r.wall : std::numeric_limits<double>::quiet_NaN();
            const double gpus = r.gpus;
            r.gpu_hours_lost = gpus * (r.wall - r.productive) / kSecondsPerHour;
            r.checkpoint_interval = plan.interval;
            r.mtbf = plan.mtbf;
            r.young_interval = plan.young;
            r.daly_interval = plan.daly;
            r.expected_ettr = plan.expected_ettr;
            r.expected_waste = 1.0 - plan.expected_ettr;

            if (job.phase != Phase::Pending) makespan = std::max(makespan, r.end);  // never past the horizon
            fleet.jobs_completed += r.completed ? 1u : 0u;
            fleet.failures += r.failures;
            fleet.preemptions += r.preemptions;
            fleet.checkpoints += r.checkpoints;
            fleet.gpu_hours += gpus * r.wall / kSecondsPerHour;
            fleet.productive_gpu_hours += gpus * r.productive / kSecondsPerHour;
            fleet.wasted_gpu_hours += gpus * r.wasted / kSecondsPerHour;
            fleet.ckpt_stall_gpu_hours += gpus * r.ckpt_stall / kSecondsPerHour;
            fleet.overhead_gpu_hours += gpus * r.overhead / kSecondsPerHour;
            fleet.detection_gpu_hours += gpus * r.detection / kSecondsPerHour;
            fleet.queue_wait_gpu_hours += gpus * r.queue_wait / kSecondsPerHour;
            fleet.recovery_wait_gpu_hours += gpus * r.recovery_wait / kSecondsPerHour;
            fleet.gpu_hours_lost += r.gpu_hours_lost;
            fleet.churn_gpu_hours += r.churn_gpu_hours;
#ifdef ACESIM_CHECK_INVARIANTS
            const double sum = r.productive + r.wasted + r.ckpt_stall + r.overhead + r.detection +
                               r.queue_wait + r.recovery_wait;
            if (std::abs(sum - r.wall) > 1e-9 * std::max(1.0, r.wall))
                throw std::logic_error("accounting does not add up for job " + std::to_string(j));
#endif
            out_.jobs.push_back(r);
        }
        fleet.makespan = makespan;
        fleet.ettr = fleet.gpu_hours > 0.0 ? fleet.productive_gpu_hours / fleet.gpu_hours
                                           : std::numeric_limits<double>::quiet_NaN();
        out_.fleet.push_back(fleet);
    }

    const SimulationInput& in_;
    const std::vector<JobPlan>& plans_;
    const std::vector<DistributionView>& views_;
    std::uint32_t replica_;
    Key key_;
    std::uint64_t max_events_;
    SimulationOutput& out_;
    std::vector<JobState> jobs_;
    EventHeap heap_;
    std::uint64_t events_ = 0;
    std::size_t trace_begin_ = 0;
};

void validate(const SimulationInput& in) {
    require(!in.jobs.empty(), "jobs must not be empty");
    require(in.jobs.size() <= kMaxEntityId + 1ull,
            "jobs: at most " + std::to_string(kMaxEntityId + 1ull) + " jobs per simulation");
    require(in.replicas >= 1, "replicas must be >= 1");
    require(static_cast<std::uint64_t>(in.first_replica) + in.replicas <= 0xFFFFFFFFull,
            "replicas: replica ids must fit in 32 bits");
    require(in.gpus_per_node >= 1, "gpus_per_node must be >= 1");
    require(!std::isnan(in.horizon) && in.horizon > 0.0, "horizon must be > 0 (math.inf for none)");
    const std::size_t nd = in.distributions.size();
    require(in.job_failures == kNoDistribution || in.job_failures < nd, "failures: bad distribution index");
    if (in.job_failures != kNoDistribution) {
        // A law whose draws are all zero never lets time advance. (ScaleAware
        // factors are positive, so the sign of the mean does not depend on size.)
        const double mean = in.distributions[in.job_failures].mean(1.0);
        require(mean > 0.0, "failures must have a mean > 0 (got " + std::to_string(mean) + ")");
    }
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        const JobSpec& s = in.jobs[j];
        require(s.gpus >= 1, job_field(j, "gpus") + " must be >= 1");
        require(std::isfinite(s.work) && s.work > 0.0, job_field(j, "work") + " must be finite and > 0");
        require(std::isfinite(s.submit) && s.submit >= 0.0,
                job_field(j, "submit") + " must be finite and >= 0");
        if (s.rule == IntervalRule::Fixed) {
            require(std::isfinite(s.checkpoint_interval) && s.checkpoint_interval > 0.0,
                    job_field(j, "checkpoint_interval") + " must be finite and > 0");
        }
        require(s.init < nd && s.save < nd && s.load < nd,
                job_field(j, "init/save/load") + ": bad distribution index");
    }
}

}  // namespace

double resolve_interval(const SimulationInput& in, const JobSpec& job) {
    if (job.rule == IntervalRule::Fixed) return job.checkpoint_interval;
    const double gpus = job.gpus;
    const double mtbf =
        in.job_failures == kNoDistribution ? kInf : in.distributions[in.job_failures].mean(gpus);
    const double save = in.distributions[job.save].mean(gpus);
    if (!std::isfinite(mtbf)) return job.work;  // no failures: one checkpoint at the end
    require(save > 0.0, "checkpoint_interval: the 'young'/'daly' rules need a save latency with mean > 0");
    const double interval =
        job.rule == IntervalRule::Young ? young_interval(save, mtbf) : daly_interval(save, mtbf);
    require(std::isfinite(interval) && interval > 0.0,
            "checkpoint_interval: the rule gave no usable interval (" + std::to_string(interval) + ")");
    return interval;
}

SimulationOutput simulate(const SimulationInput& in) {
    validate(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    std::vector<DistributionView> views;
    views.reserve(in.distributions.size());
    for (const Distribution& d : in.distributions) views.push_back(d.view());

    std::vector<JobPlan> plans(in.jobs.size());
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        const JobSpec& s = in.jobs[j];
        const double gpus = s.gpus;
        JobPlan& p = plans[j];
        p.interval = resolve_interval(in, s);
        p.segments = static_cast<std::uint32_t>(std::min(segment_count(s.work, p.interval), 4294967295.0));
        require(segment_count(s.work, p.interval) < 4294967295.0,
                job_field(j, "checkpoint_interval") + " gives more than 2^32 checkpoints");
        p.nodes = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) /
                                             in.gpus_per_node);
        p.mtbf = in.job_failures == kNoDistribution ? kInf : in.distributions[in.job_failures].mean(gpus);
        const double save = in.distributions[s.save].mean(gpus);
        const double restart = in.distributions[s.init].mean(gpus) + in.distributions[s.load].mean(gpus);
        p.young = young_interval(save, p.mtbf);
        p.daly = daly_interval(save, p.mtbf);
        p.expected_ettr = expected_ettr_exponential(p.mtbf, s.work, p.interval, save, restart);
    }

    std::vector<SimulationOutput> per_replica(in.replicas);
    std::vector<std::string> errors(in.replicas);
    parallel_for(in.replicas, in.threads, 1, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t r = begin; r < end; ++r) {
            try {
                ReplicaRun run(in, plans, views, in.first_replica + static_cast<std::uint32_t>(r), max_events,
                               per_replica[r]);
                run.run();
            } catch (const std::exception& e) {
                errors[r] = e.what();
            }
        }
    });
    for (const std::string& e : errors)
        if (!e.empty()) throw std::runtime_error(e);

    SimulationOutput out;
    std::size_t nj = 0, nt = 0, ne = 0;
    for (const auto& o : per_replica) {
        nj += o.jobs.size();
        nt += o.trace.size();
        ne += o.events.size();
    }
    out.jobs.reserve(nj);
    out.trace.reserve(nt);
    out.events.reserve(ne);
    out.fleet.reserve(in.replicas);
    for (auto& o : per_replica) {
        out.jobs.insert(out.jobs.end(), o.jobs.begin(), o.jobs.end());
        out.fleet.insert(out.fleet.end(), o.fleet.begin(), o.fleet.end());
        out.trace.insert(out.trace.end(), o.trace.begin(), o.trace.end());
        out.events.insert(out.events.end(), o.events.begin(), o.events.end());
        o = SimulationOutput{};
    }
    return out;
}

}  // namespace acesim

// The single-job model without an event heap: one job, replacements always
// available (fleet None), its lifecycle stepped directly. Written for host
// and device (batch Monte Carlo on CPU threads or CUDA, and simulate()
// without a fleet) and kept operation-for-operation equal to the event-heap
// simulator's fleet-less path, so both give bit-identical rows for the same
// seeds.
#pragma once

#include <cmath>
#include <cstdint>

#include "acesim/analytic.hpp"
#include "acesim/checkpoint_levels.hpp"
#include "acesim/distributions.hpp"
#include "acesim/hd.hpp"
#include "acesim/lifecycle.hpp"
#include "acesim/philox.hpp"
#include "acesim/records.hpp"
#include "acesim/sampler.hpp"

namespace acesim {

constexpr std::uint32_t kNoLaw = 0xFFFFFFFFu;

/// One grid point of a batch: a job and its failure law, with the per-job
/// quantities the event-heap path computes once (its JobPlan).
struct SingleJobSpec {
    double work;
    double submit;
    double interval;  ///< starting checkpoint interval (rule resolved)
    double mtbf;
    double young;
    double daly;
    double expected_ettr;
    double save_mean;
    std::uint64_t max_stalled_failures;  ///< failures in a row without a new durable checkpoint (StallCount)
    std::uint32_t gpus;
    std::int32_t priority;
    std::uint32_t rule;   ///< IntervalRule value (3: adaptive)
    std::uint32_t nodes;  ///< virtual nodes, for the blamed node index
    std::uint32_t init;   ///< distribution indices
    std::uint32_t save;
    std::uint32_t load;
    std::uint32_t failures;  ///< kNoLaw: no job-level failures
    std::uint32_t leveled;   ///< 1: asynchronous or tiered checkpoints (levels below)
    LevelPlan levels;
};

/// Failure causes for the batch path (shares and detection laws).
struct CauseTable {
    const double* shares;
    const std::uint32_t* detect;  ///< kNoLaw: seen at once
    const std::uint32_t* width;   ///< nodes a failure of the cause takes (0: process scope)
    std::uint32_t count;
    double total;
};

enum SingleJobStatus : std::uint32_t {
    kSingleJobOk = 0,
    kSingleJobMaxEvents = 1,
    kSingleJobTooManyFailures = 2,
    kSingleJobNoDraw = 3,          ///< a duration law (a Replay) ran out of draws
    kSingleJobPastLatestTime = 4,  ///< the clock passed kLatestTime (simulator.hpp)
    kSingleJobNoProgress = 5  ///< max_stalled_failures failures in a row without a new durable checkpoint
};

/// Failures one replica may record before the run is declared hopeless
/// (the event-heap path bounds its trace the same way).
constexpr std::uint64_t kSingleJobMaxFailures = std::uint64_t{1} << 25;

/// What a job-level failure leaves for the failure trace: nothing on the
/// batch path. simulate()'s single-job path passes a functor that keeps a
/// row per failure (its time, cause and the failure law's draw); the
/// functor draws the blamed node itself, from its own stream, so the other
/// draws are the same either way.
struct NoFailureTrace {
    ACESIM_HD void operator()(double, std::int32_t, double) const {}
};

namespace detail {
/// Draws of one stream in index order. A constant law needs no randomness;
/// on the host, other laws are drawn sixteen at a time through the vectorized
/// batch kernels (draw_range: the same numbers as draw()), since a draw
/// depends only on its index.
struct StreamDraws {
    const DistributionView* dist;
    Stream stream;
    double gpus;
    double constant;  // NaN unless the law is a Constant
    std::uint32_t next = 0;
#if !defined(__CUDA_ARCH__)
    static constexpr std::uint32_t kAhead = 16;
    double ahead[kAhead];
    std::uint32_t ahead_first = 0;
    std::uint32_t ahead_count = 0;
#endif

    ACESIM_HD StreamDraws(const DistributionView* d, Stream s, double g) : dist(d), stream(s), gpus(g) {
        const DistNode& root = d->nodes[d->root];
        constant = root.kind == DistKind::Constant ? root.p0 : NAN;
    }

    ACESIM_HD double operator()() {
        if (constant == constant) {  // not NaN: a Constant law
            ++next;
            return constant;
        }
#if defined(__CUDA_ARCH__)
        return draw(*dist, stream, next++, gpus);
#else
        if (next - ahead_first >= ahead_count) {
            draw_range(*dist, stream, next, kAhead, gpus, ahead);
            ahead_first = next;
            ahead_count = kAhead;
        }
        return ahead[next++ - ahead_first];
#endif
    }
};

/// The cause of a failure by share (-1 without a taxonomy), from the
/// job's cause stream: the same pick as the event-heap engine's.
ACESIM_HD std::int32_t draw_cause(const CauseTable& causes, const Stream& s_cause, std::uint32_t& n_cause) {
    if (causes.count == 0) return -1;
    const double u = uniform_open(lo64(s_cause.block(n_cause++, 0))) * causes.total;
    double cumulative = 0.0;
    for (std::uint32_t c = 0; c + 1 < causes.count; ++c) {
        cumulative += causes.shares[c];
        if (u < cumulative) return static_cast<std::int32_t>(c);
    }
    return static_cast<std::int32_t>(causes.count - 1);
}

/// A row's identity columns (every bucket zero); `Spec`: a SingleJobSpec,
/// or the fleet engine's JobSpec.
template <class Spec>
ACESIM_HD void open_row(JobRecord& rec, const Spec& spec, std::uint32_t replica, std::uint32_t entity) {
    rec = JobRecord{};
    rec.replica = replica;
    rec.job = entity;
    rec.gpus = spec.gpus;
    rec.priority = spec.priority;
    rec.submit = spec.submit;
}

/// A failure's detection latency (0: seen at once) for its cause, drawn as
/// the event-heap engine draws it.
ACESIM_HD double draw_detection(const CauseTable& causes, const DistributionView* dists, std::int32_t cause,
                                const Stream& s_detect, std::uint32_t& n_detect, double gpus) {
    return cause >= 0 && causes.detect[cause] != kNoLaw
               ? draw(dists[causes.detect[cause]], s_detect, n_detect++, gpus)
               : 0.0;
}

/// A failure at t was rolled back: detection begins. Returns true when it
/// is seen at once (the job restarts now).
ACESIM_HD bool begin_detection(Lifecycle& s, JobRecord& rec, double t, double detect) {
    s.phase = Phase::Detecting;
    s.phase_start = t;
    s.phase_end = t + detect;
    if (detect != 0.0) return false;
    rec.detection += t - s.phase_start;
    return true;
}

/// The job's final checkpoint ended at t: it is done.
ACESIM_HD void finish(Lifecycle& s, JobRecord& rec, FailureClock& clock, double work, double t) {
    clock.unhold(t);
    s.phase = Phase::Done;
    rec.completed = true;
    rec.end = t;
    exact_productive(rec, work);
}

/// A (re)start at t, before its draws: the first start ends the queue
/// wait, later ones count as restarts; the adaptive rule's new interval.
ACESIM_HD void count_start(Lifecycle& s, JobRecord& rec, bool& started, double t, const SingleJobSpec& spec,
                           const FailureClock& clock) {
    if (!started) {
        started = true;
        rec.queue_wait += t - s.phase_start;
    } else {
        ++rec.restarts;
    }
    if (spec.rule == 3u)
        s.interval = adaptive_interval(spec.mtbf, spec.work, spec.save_mean, clock.held_time, rec.failures,
                                       spec.interval);
}

}  // namespace detail

/// run_single_job for a job with checkpoint levels (an asynchronous persist,
/// tiers): the transitions of checkpoint_levels.hpp in the order the
/// event-heap engine makes them, so the rows are the same bits.
template <class FailureTrace = NoFailureTrace>
ACESIM_HD std::uint32_t run_single_job_levels(const SingleJobSpec& spec, const DistributionView* dists,
                                              const CauseTable& causes, Key key, std::uint32_t replica,
                                              std::uint32_t entity, double horizon, std::uint64_t max_events,
                                              JobRecord& rec, std::uint64_t& events,
                                              FailureTrace trace = FailureTrace{}) {
    using namespace detail;
    constexpr double kInfinity = INFINITY;
    const double gpus = static_cast<double>(spec.gpus);
    const LevelPlan& P = spec.levels;
    std::uint32_t n_cause = 0, n_detect = 0, n_persist = 0, n_tier_save = 0, n_tier_load = 0;
    const bool job_failures = spec.failures != kNoLaw;
    auto stream = [&](Purpose purpose) {
        return Stream{key, stream_id(EntityKind::Job, entity, purpose), replica};
    };
    StreamDraws failure_draw(&dists[job_failures ? spec.failures : spec.init], stream(Purpose::Failure),
                             gpus);
    StreamDraws init_draw(&dists[spec.init], stream(Purpose::Init), gpus);
    StreamDraws save_draw(&dists[spec.save], stream(Purpose::Save), gpus);
    StreamDraws load_draw(&dists[spec.load], stream(Purpose::Load), gpus);
    const Stream s_cause = stream(Purpose::Cause);
    const Stream s_detect = stream(Purpose::Detect);
    const Stream s_persist = stream(Purpose::Persist);
    const Stream s_tier_save = stream(Purpose::TierSave);
    const Stream s_tier_load = stream(Purpose::TierLoad);

    open_row(rec, spec, replica, entity);

    Lifecycle s;
    s.phase_end = spec.submit;
    s.interval = spec.interval;
    Levels L;
    FailureClock clock;
    clock.fail_left = job_failures ? failure_draw() : kInfinity;
    double fail_draw = clock.fail_left;  // the draw behind the next failure (its trace row)
    bool started = false;
    std::uint64_t failures_recorded = 0;
    StallCount stall;
    events = 0;
    // A duration law's draw of +inf: a Replay ran out (every other law draws
    // finite durations). The host names the law (simulate_batch).
    bool ran_out = false;
    auto duration = [&](double x) {
        ran_out = ran_out || x == kInfinity;
        return x;
    };
    auto write_latency = [&]() {
        return duration(L.writing == 0
                            ? save_draw()
                            : draw(dists[P.tier[L.writing - 1].save], s_tier_save, n_tier_save++, gpus));
    };

    for (;;) {
        if (ran_out) return kSingleJobNoDraw;
        // At equal times: the persist's end, then the phase's; a failure
        // strikes only strictly before both.
        const double due = L.persist_end < s.phase_end ? L.persist_end : s.phase_end;
        const double next = clock.next(due);
        if (s.phase == Phase::Done || next > horizon || next == kInfinity) break;
        if (next > kLatestTime) return kSingleJobPastLatestTime;
        if (++events > max_events) return kSingleJobMaxEvents;
        double t;
        bool restart = false;
        if (clock.strikes_before(due)) {
            t = clock.fail_at;
            const std::int32_t cause = draw_cause(causes, s_cause, n_cause);
            const double detect = duration(draw_detection(causes, dists, cause, s_detect, n_detect, gpus));
            if (++failures_recorded > kSingleJobMaxFailures) return kSingleJobTooManyFailures;
            trace(t, cause, fail_draw);
            const std::uint32_t width = cause >= 0 ? causes.width[cause] : 1u;
            levels_roll_back(s, L, P, rec, t, width < spec.nodes ? width : spec.nodes);
            clock.unhold(t);
            ++rec.failures;
            if (stall.interrupted(L.durable, spec.max_stalled_failures)) return kSingleJobNoProgress;
            clock.fail_left = job_failures ? failure_draw() : kInfinity;
            fail_draw = clock.fail_left;
            restart = begin_detection(s, rec, t, detect);
        } else if (L.persist_end <= s.phase_end) {
            t = L.persist_end;
            levels_end_persist(L, rec);
            if (s.phase == Phase::PersistWait) {
                rec.ckpt_stall += t - s.phase_start;
                if (L.durable >= spec.work) {  // the final checkpoint (else: its snapshot is next)
                    finish(s, rec, clock, spec.work, t);
                } else {
                    levels_begin_write(s, t, duration(save_draw()));
                }
            }
        } else {
            t = s.phase_end;
            switch (s.phase) {
                case Phase::Pending:
                    s.phase_start = t;  // queued and started at once
                    restart = true;
                    break;
                case Phase::Starting:
                    end_start(s, rec, t);
                    levels_begin_compute(s, L, P, spec.work, t);
                    break;
                case Phase::Computing:
                    if (levels_reach_boundary(s, L, rec, t)) levels_begin_write(s, t, write_latency());
                    break;
                case Phase::Saving: {
                    const double persist =
                        L.writing == 0 && P.persist != kNoLevelLaw
                            ? duration(draw(dists[P.persist], s_persist, n_persist++, gpus))
                            : 0.0;
                    switch (levels_end_write(s, L, P, rec, spec.work, t, persist)) {
                        case WriteEnd::Done:
                            finish(s, rec, clock, spec.work, t);
                            break;
                        case WriteEnd::FinalPersist:
                            s.phase = Phase::PersistWait;
                            s.phase_start = t;
                            s.phase_end = L.persist_end;
                            break;
                        default:
                            levels_begin_compute(s, L, P, spec.work, t);
                            break;
                    }
                    break;
                }
                case Phase::Detecting:
                    rec.detection += t - s.phase_start;
                    restart = true;
                    break;
                default:
                    break;
            }
        }
        if (restart) {
            count_start(s, rec, started, t, spec, clock);
            const double init = duration(init_draw());
            const double load = duration(
                L.restore == 0 ? load_draw()
                               : draw(dists[P.tier[L.restore - 1].load], s_tier_load, n_tier_load++, gpus));
            L.restore = 0;
            begin_start(s, t, init, load);
            clock.hold(t);
        }
    }

    double progress = s.committed;
    if (s.phase != Phase::Done)
        progress = levels_close_at(s, L, rec, started, horizon > spec.submit ? horizon : spec.submit);
    finish_row(rec, progress, s.interval, RowConstants{spec.mtbf, spec.young, spec.daly, spec.expected_ettr});
    return kSingleJobOk;
}

/// Runs one replica of one job. `entity` is the job index its streams are
/// keyed by (0 for a job simulated alone). Fills `rec` and counts events.
/// The transitions are the lifecycle's (lifecycle.hpp), the same functions
/// the event-heap engine calls, in the same order: the same bits.
template <class FailureTrace = NoFailureTrace>
ACESIM_HD std::uint32_t run_single_job(const SingleJobSpec& spec, const DistributionView* dists,
                                       const CauseTable& causes, Key key, std::uint32_t replica,
                                       std::uint32_t entity, double horizon, std::uint64_t max_events,
                                       JobRecord& rec, std::uint64_t& events,
                                       FailureTrace trace = FailureTrace{}) {
    if (spec.leveled)
        return run_single_job_levels(spec, dists, causes, key, replica, entity, horizon, max_events, rec,
                                     events, trace);
    using namespace detail;
    constexpr double kInfinity = INFINITY;
    const double gpus = static_cast<double>(spec.gpus);
    std::uint32_t n_cause = 0, n_detect = 0;
    const bool job_failures = spec.failures != kNoLaw;
    StreamDraws failure_draw(&dists[job_failures ? spec.failures : spec.init],
                             Stream{key, stream_id(EntityKind::Job, entity, Purpose::Failure), replica},
                             gpus);
    StreamDraws init_draw(&dists[spec.init],
                          Stream{key, stream_id(EntityKind::Job, entity, Purpose::Init), replica}, gpus);
    StreamDraws save_draw(&dists[spec.save],
                          Stream{key, stream_id(EntityKind::Job, entity, Purpose::Save), replica}, gpus);
    StreamDraws load_draw(&dists[spec.load],
                          Stream{key, stream_id(EntityKind::Job, entity, Purpose::Load), replica}, gpus);
    const Stream s_cause{key, stream_id(EntityKind::Job, entity, Purpose::Cause), replica};
    const Stream s_detect{key, stream_id(EntityKind::Job, entity, Purpose::Detect), replica};

    open_row(rec, spec, replica, entity);

    Lifecycle s;
    s.phase_end = spec.submit;
    s.interval = spec.interval;
    FailureClock clock;
    clock.fail_left = job_failures ? failure_draw() : kInfinity;
    double fail_draw = clock.fail_left;  // the draw behind the next failure (its trace row)
    bool started = false;
    std::uint64_t failures_recorded = 0;
    StallCount stall;
    events = 0;
    // As in run_single_job_levels: a duration draw of +inf is a Replay run out.
    bool ran_out = false;
    auto duration = [&](double x) {
        ran_out = ran_out || x == kInfinity;
        return x;
    };

    for (;;) {
        if (ran_out) return kSingleJobNoDraw;
        const double next = clock.next(s.phase_end);
        if (s.phase == Phase::Done || next > horizon || next == kInfinity) break;
        if (next > kLatestTime) return kSingleJobPastLatestTime;
        if (++events > max_events) return kSingleJobMaxEvents;
        double t;
        bool restart = false;
        if (clock.strikes_before(s.phase_end)) {
            // A job-level failure: cause and detection draws as in the
            // event-heap path.
            t = clock.fail_at;
            // The blamed node only names a trace row (the trace functor
            // draws it); its stream is separate, so no other draw depends on it.
            const std::int32_t cause = draw_cause(causes, s_cause, n_cause);
            const double detect = duration(draw_detection(causes, dists, cause, s_detect, n_detect, gpus));
            if (++failures_recorded > kSingleJobMaxFailures) return kSingleJobTooManyFailures;
            trace(t, cause, fail_draw);
            interrupt(s, rec, t);
            clock.unhold(t);
            ++rec.failures;
            if (stall.interrupted(s.committed, spec.max_stalled_failures)) return kSingleJobNoProgress;
            clock.fail_left = job_failures ? failure_draw() : kInfinity;
            fail_draw = clock.fail_left;
            restart = begin_detection(s, rec, t, detect);
        } else {
            t = s.phase_end;
            switch (s.phase) {
                case Phase::Pending:
                    s.phase_start = t;  // queued and started at once
                    restart = true;
                    break;
                case Phase::Starting:
                    end_start(s, rec, t);
                    begin_compute(s, spec.work, t);
                    break;
                case Phase::Computing:
                    begin_save(s, t, duration(save_draw()));
                    break;
                case Phase::Saving:
                    if (end_save(s, rec, spec.work, t)) {
                        finish(s, rec, clock, spec.work, t);
                    } else {
                        begin_compute(s, spec.work, t);
                        // Routine cycles: whole compute + write segments that
                        // end before the next failure run here without the
                        // general dispatch; the same transitions in the same
                        // order as the event loop, so the same bits.
                        while (clock.holding && !(clock.fail_at < s.phase_end) && s.phase_end <= horizon &&
                               s.phase_end != kInfinity) {
                            if (++events > max_events) return kSingleJobMaxEvents;
                            t = s.phase_end;
                            begin_save(s, t, duration(save_draw()));
                            if (ran_out) return kSingleJobNoDraw;
                            if (clock.fail_at < s.phase_end || s.phase_end > horizon ||
                                s.phase_end == kInfinity)
                                break;
                            if (++events > max_events) return kSingleJobMaxEvents;
                            t = s.phase_end;
                            if (end_save(s, rec, spec.work, t)) {
                                finish(s, rec, clock, spec.work, t);
                                break;
                            }
                            begin_compute(s, spec.work, t);
                        }
                    }
                    break;
                case Phase::Detecting:
                    rec.detection += t - s.phase_start;
                    restart = true;
                    break;
                default:
                    break;
            }
        }
        if (restart) {
            count_start(s, rec, started, t, spec, clock);
            const double init = duration(init_draw());
            const double load = duration(load_draw());
            begin_start(s, t, init, load);
            clock.hold(t);
        }
    }

    double progress = s.committed;
    if (s.phase != Phase::Done)
        progress = close_at(s, rec, started, horizon > spec.submit ? horizon : spec.submit);
    finish_row(rec, progress, s.interval, RowConstants{spec.mtbf, spec.young, spec.daly, spec.expected_ettr});
    return kSingleJobOk;
}

}  // namespace acesim

// The single-job model without an event heap: one job, replacements always
// available (fleet None), its lifecycle stepped directly. Written for host
// and device (batch Monte Carlo on CPU threads or CUDA) and kept
// operation-for-operation equal to the event-heap simulator's fleet-less
// path, so both give bit-identical rows for the same seeds.
#pragma once

#include <cmath>
#include <cstdint>

#include "acesim/analytic.hpp"
#include "acesim/distributions.hpp"
#include "acesim/hd.hpp"
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
    std::uint32_t gpus;
    std::int32_t priority;
    std::uint32_t rule;   ///< IntervalRule value (3: adaptive)
    std::uint32_t nodes;  ///< virtual nodes, for the blamed node index
    std::uint32_t init;   ///< distribution indices
    std::uint32_t save;
    std::uint32_t load;
    std::uint32_t failures;  ///< kNoLaw: no job-level failures
};

/// Failure causes for the batch path (shares and detection laws).
struct CauseTable {
    const double* shares;
    const std::uint32_t* detect;  ///< kNoLaw: seen at once
    std::uint32_t count;
    double total;
};

enum SingleJobStatus : std::uint32_t {
    kSingleJobOk = 0,
    kSingleJobMaxEvents = 1,
    kSingleJobTooManyFailures = 2
};

/// Failures one replica may record before the run is declared hopeless
/// (the event-heap path bounds its trace the same way).
constexpr std::uint64_t kSingleJobMaxFailures = std::uint64_t{1} << 25;

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

/// Finite test that compiles the same on host and device (x - x is NaN for inf and NaN).
ACESIM_HD bool finite(double x) { return x - x == 0.0; }
enum : std::uint32_t { kPending, kStarting, kComputing, kSaving, kDetecting, kDone };
}  // namespace detail

/// Runs one replica of one job. `entity` is the job index its streams are
/// keyed by (0 for a job simulated alone). Fills `rec` and counts events.
ACESIM_HD std::uint32_t run_single_job(const SingleJobSpec& spec, const DistributionView* dists,
                                       const CauseTable& causes, Key key, std::uint32_t replica,
                                       std::uint32_t entity, double horizon, std::uint64_t max_events,
                                       JobRecord& rec, std::uint64_t& events) {
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

    rec = JobRecord{};
    rec.replica = replica;
    rec.job = entity;
    rec.gpus = spec.gpus;
    rec.priority = spec.priority;
    rec.submit = spec.submit;

    std::uint32_t phase = kPending;
    double phase_start = 0.0, phase_end = spec.submit;
    double committed = 0.0, boundary = 0.0, segment_compute = 0.0, interval = spec.interval;
    double held_time = 0.0, hold_since = 0.0;
    bool holding = false;
    double fail_at = kInfinity;
    double fail_left = job_failures ? failure_draw() : kInfinity;
    bool started = false;
    std::uint64_t failures_recorded = 0;
    events = 0;

    for (;;) {
        const double next = holding ? (fail_at < phase_end ? fail_at : phase_end) : phase_end;
        if (phase == kDone || next > horizon || next == kInfinity) break;
        if (++events > max_events) return kSingleJobMaxEvents;
        double t;
        bool restart = false;
        if (holding && fail_at < phase_end) {
            // A job-level failure: cause and detection draws as in the
            // event-heap path.
            t = fail_at;
            // The blamed node only names a trace row, which the batch path does not
            // keep; its stream is separate, so skipping it changes no other draw.
            std::int32_t cause = -1;
            if (causes.count > 0) {
                const double u = uniform_open(lo64(s_cause.block(n_cause++, 0))) * causes.total;
                double cumulative = 0.0;
                cause = static_cast<std::int32_t>(causes.count - 1);
                for (std::uint32_t c = 0; c + 1 < causes.count; ++c) {
                    cumulative += causes.shares[c];
                    if (u < cumulative) {
                        cause = static_cast<std::int32_t>(c);
                        break;
                    }
                }
            }
            double detect = 0.0;
            if (cause >= 0 && causes.detect[cause] != kNoLaw)
                detect = draw(dists[causes.detect[cause]], s_detect, n_detect++, gpus);
            if (++failures_recorded > kSingleJobMaxFailures) return kSingleJobTooManyFailures;
            // Roll back.
            if (phase == kStarting) {
                rec.overhead += t - phase_start;
            } else if (phase == kComputing) {
                rec.wasted += t - phase_start;
            } else if (phase == kSaving) {
                rec.wasted += segment_compute + (t - phase_start);
                segment_compute = 0.0;
            }
            fail_left = fail_at - t;
            held_time += t - hold_since;
            holding = false;
            ++rec.failures;
            fail_left = job_failures ? failure_draw() : kInfinity;
            phase = kDetecting;
            phase_start = t;
            phase_end = t + detect;
            if (detect == 0.0) {
                rec.detection += t - phase_start;
                restart = true;
            }
        } else {
            t = phase_end;
            switch (phase) {
                case kPending:
                    phase_start = t;  // queued and started at once
                    restart = true;
                    break;
                case kStarting:
                    rec.overhead += t - phase_start;
                    boundary = committed + interval < spec.work ? committed + interval : spec.work;
                    phase = kComputing;
                    phase_start = t;
                    phase_end = t + (boundary - committed);
                    break;
                case kComputing:
                    segment_compute = t - phase_start;
                    phase = kSaving;
                    phase_start = t;
                    phase_end = t + save_draw();
                    break;
                case kSaving:
                    rec.productive += segment_compute;
                    rec.ckpt_stall += t - phase_start;
                    segment_compute = 0.0;
                    committed = boundary;
                    ++rec.checkpoints;
                    if (committed >= spec.work) {
                        if (holding) {
                            fail_left = fail_at - t;
                            held_time += t - hold_since;
                            holding = false;
                        }
                        phase = kDone;
                        rec.completed = true;
                        rec.end = t;
                    } else {
                        boundary = committed + interval < spec.work ? committed + interval : spec.work;
                        phase = kComputing;
                        phase_start = t;
                        phase_end = t + (boundary - committed);
                        // Routine cycles: whole compute + write segments that
                        // end before the next failure run here without the
                        // general dispatch; the same operations in the same
                        // order as the event loop, so the same bits.
                        while (holding && !(fail_at < phase_end) && phase_end <= horizon &&
                               phase_end != kInfinity) {
                            if (++events > max_events) return kSingleJobMaxEvents;
                            t = phase_end;
                            segment_compute = t - phase_start;
                            phase = kSaving;
                            phase_start = t;
                            phase_end = t + save_draw();
                            if (fail_at < phase_end || phase_end > horizon || phase_end == kInfinity) break;
                            if (++events > max_events) return kSingleJobMaxEvents;
                            t = phase_end;
                            rec.productive += segment_compute;
                            rec.ckpt_stall += t - phase_start;
                            segment_compute = 0.0;
                            committed = boundary;
                            ++rec.checkpoints;
                            if (committed >= spec.work) {
                                fail_left = fail_at - t;
                                held_time += t - hold_since;
                                holding = false;
                                phase = kDone;
                                rec.completed = true;
                                rec.end = t;
                                break;
                            }
                            boundary = committed + interval < spec.work ? committed + interval : spec.work;
                            phase = kComputing;
                            phase_start = t;
                            phase_end = t + (boundary - committed);
                        }
                    }
                    break;
                case kDetecting:
                    rec.detection += t - phase_start;
                    restart = true;
                    break;
                default:
                    break;
            }
        }
        if (restart) {
            if (!started) {
                started = true;
                rec.queue_wait += t - phase_start;
            } else {
                ++rec.restarts;
            }
            if (spec.rule == 3u) {
                // Adaptive: Young's interval for (prior + held time) / (1 + failures).
                const double prior = finite(spec.mtbf) ? spec.mtbf : spec.work;
                const double estimate = (prior + held_time) / (1.0 + rec.failures);
                const double tau = young_interval(spec.save_mean, estimate);
                interval = finite(tau) && tau > 0.0 ? (tau < spec.work ? tau : spec.work) : spec.interval;
            }
            const double init = init_draw();
            const double load = load_draw();
            phase = kStarting;
            phase_start = t;
            phase_end = t + (init + load);
            if (!holding) {
                holding = true;
                hold_since = t;
                fail_at = t + fail_left;
            }
        }
    }

    double progress = committed;
    if (phase != kDone) {
        const double t = horizon > spec.submit ? horizon : spec.submit;
        const double elapsed = t - phase_start;
        switch (phase) {
            case kStarting:
                rec.overhead += elapsed;
                break;
            case kComputing:
                rec.productive += elapsed;
                progress += elapsed;
                break;
            case kSaving:
                rec.productive += segment_compute;
                progress += segment_compute;
                rec.ckpt_stall += elapsed;
                break;
            case kDetecting:
                rec.detection += elapsed;
                break;
            default:
                break;
        }
        rec.end = t;
    }
    rec.progress = progress;
    rec.wall = rec.end - rec.submit;
    rec.ettr = rec.wall > 0.0 ? rec.productive / rec.wall : NAN;
    rec.gpu_hours_lost = gpus * (rec.wall - rec.productive) / 3600.0;
    rec.checkpoint_interval = interval;
    rec.mtbf = spec.mtbf;
    rec.young_interval = spec.young;
    rec.daly_interval = spec.daly;
    rec.expected_ettr = spec.expected_ettr;
    rec.expected_waste = 1.0 - spec.expected_ettr;
    return kSingleJobOk;
}

}  // namespace acesim

// The job lifecycle's arithmetic (DESIGN section 4), written once for the
// event-heap engine and the single-job batch path (host and device): phases,
// checkpoint boundaries, the failure clock and the accounting buckets that
// each transition charges. Callers decide *when* a transition happens; these
// functions say what it does to the job's state and its output row.
#pragma once

#include <cmath>
#include <cstdint>

#include "acesim/analytic.hpp"
#include "acesim/hd.hpp"
#include "acesim/records.hpp"

namespace acesim {

/// The latest simulated time a run may reach, in seconds (about 317,000
/// years): ten times the largest input time or duration the Python layer
/// accepts (1e12 s), where a double still resolves 2 ms. A run whose clock
/// passes it cannot finish its jobs (quarantines or repairs that outlast
/// them, failures faster than progress) and stops with an error naming the
/// fleet's state; a finite horizon measures a window of it instead.
constexpr double kLatestTime = 1e13;

/// Where a job is in its lifecycle.
enum class Phase : std::uint8_t {
    Pending,    ///< not yet submitted
    Queued,     ///< in the queue (first start, or again after REQUEUE / preemption)
    Starting,   ///< init + load (holds hardware)
    Computing,  ///< holds hardware, progress advances
    Saving,     ///< checkpoint write (holds hardware)
    Detecting,  ///< a fault happened; nodes held, no progress, failure clock stopped
    Waiting,    ///< holds some nodes and waits for the rest after a failure
    Done,
    PersistWait,    ///< holds hardware, waits for the previous checkpoint's persist (a stall)
    Reconfiguring,  ///< an elastic job regrows onto its returned nodes (holds hardware, no progress)
};

/// A job's phase and progress: the state every transition below reads and writes.
struct Lifecycle {
    Phase phase = Phase::Pending;
    double phase_start = 0.0;
    double phase_end = 0.0;
    double committed = 0.0;          ///< progress at the last completed checkpoint
    double boundary = 0.0;           ///< progress at the next checkpoint
    double interval = 0.0;           ///< current checkpoint interval
    double segment_compute = 0.0;    ///< compute of the segment whose checkpoint is being written
    double start_init = 0.0;         ///< the start in progress: its init draw
    double start_reconfigure = 0.0;  ///< and its reconfiguration (an elastic restart)
};

/// `elapsed` seconds of a start are overhead: its init first, then its
/// reconfiguration, and the rest load.
ACESIM_HD void charge_start(const Lifecycle& s, JobRecord& rec, double elapsed) {
    rec.overhead += elapsed;
    const double init = elapsed < s.start_init ? elapsed : s.start_init;
    const double rest = elapsed - init;
    const double reconfigure = rest < s.start_reconfigure ? rest : s.start_reconfigure;
    rec.init += init;
    rec.reconfigure += reconfigure;
    rec.load += rest - reconfigure;
}

/// `elapsed` seconds of an elastic job's reconfiguration pause are overhead.
ACESIM_HD void charge_reconfigure(JobRecord& rec, double elapsed) {
    rec.overhead += elapsed;
    rec.reconfigure += elapsed;
}

/// The job-level failure clock: it runs only while the job holds hardware
/// (held seconds), so the next failure is a wall time while holding and a
/// remainder of held seconds otherwise.
struct FailureClock {
    bool holding = false;
    double hold_since = 0.0;
    double fail_at = INFINITY;    ///< wall time of the next job-level failure while holding
    double fail_left = INFINITY;  ///< held seconds to it while not holding
    double held_time = 0.0;       ///< hardware time so far (adaptive MTBF estimate)

    ACESIM_HD void hold(double t) {
        if (!holding) {
            holding = true;
            hold_since = t;
            fail_at = t + fail_left;
        }
    }
    ACESIM_HD void unhold(double t) {
        if (holding) {
            fail_left = fail_at - t;
            held_time += t - hold_since;
            holding = false;
        }
    }
    /// Wall time of the next thing that can happen to a job whose phase ends at `phase_end`.
    ACESIM_HD double next(double phase_end) const {
        return holding ? (fail_at < phase_end ? fail_at : phase_end) : phase_end;
    }
    /// A job-level failure strikes before the phase ends.
    ACESIM_HD bool strikes_before(double phase_end) const { return holding && fail_at < phase_end; }
};

/// A job's failures in a row without a new durable checkpoint: the rule of
/// max_stalled_failures, one for the event-heap engine and the single-job
/// kernel. Durable progress never goes back, so a failure that finds it
/// beyond the mark starts a new run of failures.
struct StallCount {
    double mark = 0.0;        ///< durable progress at the run's first failure (0: the initial state)
    std::uint32_t count = 0;  ///< failures since then

    /// A failure interrupts a job whose durable progress is `durable`:
    /// true when it is the `limit`-th in a row without a new one.
    ACESIM_HD bool interrupted(double durable, std::uint64_t limit) {
        if (durable > mark) {
            mark = durable;
            count = 0;
        }
        if (count < 0xFFFFFFFFu) ++count;
        return count >= limit;
    }
};

/// A start (init + load) begins at t; `load` includes the `reconfigure`
/// seconds of an elastic restart.
ACESIM_HD void begin_start(Lifecycle& s, double t, double init, double load, double reconfigure = 0.0) {
    s.phase = Phase::Starting;
    s.phase_start = t;
    s.phase_end = t + (init + load);
    s.start_init = init;
    s.start_reconfigure = reconfigure;
}

/// The start in progress ends at t: its time is overhead.
ACESIM_HD void end_start(Lifecycle& s, JobRecord& rec, double t) { charge_start(s, rec, t - s.phase_start); }

/// A completed job's productive time is its work. The kept segments add up
/// to it but for rounding (a sum of differences of clock times: up to about
/// 1e-13 of the work, and a few units in the last place of the clock, which
/// is all of a work below the clock's resolution, 5e-324 s at t = 240 s);
/// this makes it exact. Call it with rec.end set. A gap wider than rounding
/// is left alone: it would be an accounting fault for the invariant checks
/// to find.
ACESIM_HD void exact_productive(JobRecord& rec, double work) {
    const double gap = rec.productive - work;
    const double clock = rec.end < 0.0 ? -rec.end : rec.end;
    if (gap != 0.0 && (gap < 0.0 ? -gap : gap) <= 1e-9 * work + 64.0 * 2.220446049250313e-16 * clock)
        rec.productive = work;
}

/// Compute toward the next checkpoint boundary begins at t.
ACESIM_HD void begin_compute(Lifecycle& s, double work, double t) {
    s.boundary = s.committed + s.interval < work ? s.committed + s.interval : work;
    s.phase = Phase::Computing;
    s.phase_start = t;
    s.phase_end = t + (s.boundary - s.committed);
}

/// The segment's compute ends at t; its checkpoint write of `save` seconds begins.
ACESIM_HD void begin_save(Lifecycle& s, double t, double save) {
    s.segment_compute = t - s.phase_start;
    s.phase = Phase::Saving;
    s.phase_start = t;
    s.phase_end = t + save;
}

/// The checkpoint write ends at t: the segment is kept. Returns true when
/// the job's work is complete.
ACESIM_HD bool end_save(Lifecycle& s, JobRecord& rec, double work, double t) {
    rec.productive += s.segment_compute;
    rec.ckpt_stall += t - s.phase_start;
    s.segment_compute = 0.0;
    s.committed = s.boundary;
    ++rec.checkpoints;
    return s.committed >= work;
}

/// Ends a start, compute or write early at t (a failure or a preemption)
/// and returns the compute it rolls back (a start cut off is overhead).
ACESIM_HD double interrupt(Lifecycle& s, JobRecord& rec, double t) {
    double lost = 0.0;
    switch (s.phase) {
        case Phase::Starting:
            charge_start(s, rec, t - s.phase_start);
            break;
        case Phase::Computing:
            lost = t - s.phase_start;
            rec.wasted += lost;
            break;
        case Phase::Saving:
            lost = s.segment_compute + (t - s.phase_start);
            rec.wasted += lost;
            s.segment_compute = 0.0;
            break;
        default:
            break;
    }
    return lost;
}

/// The job holds hardware (its failure clock runs) in this phase.
ACESIM_HD bool holds_hardware(Phase p) {
    return p == Phase::Starting || p == Phase::Computing || p == Phase::Saving || p == Phase::PersistWait ||
           p == Phase::Reconfiguring;
}

/// A row's status when it is closed in `phase` at the horizon: a job that
/// holds its nodes (in detection too) is running; one waiting for nodes
/// counts as queued.
ACESIM_HD JobStatus status_at_close(Phase phase) {
    switch (phase) {
        case Phase::Done:
            return JobStatus::Done;
        case Phase::Pending:
            return JobStatus::NotSubmitted;
        case Phase::Queued:
        case Phase::Waiting:
            return JobStatus::Queued;
        default:
            return JobStatus::Running;
    }
}

/// A segment cut by a close never ends past its boundary: clock differences
/// round, and a job in its final write would show more progress, and more
/// productive time, than its work. Returns the progress, clamped.
ACESIM_HD double clamp_to_boundary(const Lifecycle& s, JobRecord& rec, double progress) {
    if (rec.productive > s.boundary) rec.productive = s.boundary;
    return progress > s.boundary ? s.boundary : progress;
}

/// Closes an unfinished job's row at t (the horizon): nothing is lost yet, so
/// compute since the last checkpoint is productive and a write in progress
/// is ckpt_stall. `started`: a queued job waits for a restart, not its
/// first start. Returns the job's progress.
ACESIM_HD double close_at(const Lifecycle& s, JobRecord& rec, bool started, double t) {
    double progress = s.committed;
    const double elapsed = t - s.phase_start;
    switch (s.phase) {
        case Phase::Queued:
            (started ? rec.recovery_wait : rec.queue_wait) += elapsed;
            break;
        case Phase::Starting:
            charge_start(s, rec, elapsed);
            break;
        case Phase::Computing:
            rec.productive += elapsed;
            progress += elapsed;
            break;
        case Phase::Saving:
            rec.productive += s.segment_compute;
            progress += s.segment_compute;
            rec.ckpt_stall += elapsed;
            break;
        case Phase::Detecting:
            rec.detection += elapsed;
            break;
        case Phase::Waiting:
            rec.recovery_wait += elapsed;
            break;
        case Phase::Pending:
        case Phase::Done:
            break;
    }
    if (s.phase == Phase::Computing || s.phase == Phase::Saving)
        progress = clamp_to_boundary(s, rec, progress);
    rec.end = t;
    rec.status = static_cast<std::uint8_t>(status_at_close(s.phase));
    return progress;
}

/// Young's interval for the MTBF seen so far, with the model's mean as a
/// prior worth one failure: (M0 + held time) / (1 + failures); `fallback`
/// when that gives no usable interval.
ACESIM_HD double adaptive_interval(double mtbf, double work, double save_mean, double held_time,
                                   std::uint32_t failures, double fallback) {
    const double prior = mtbf - mtbf == 0.0 ? mtbf : work;  // finite test, same on host and device
    const double estimate = (prior + held_time) / (1.0 + failures);
    const double tau = young_interval(save_mean, estimate);
    return tau - tau == 0.0 && tau > 0.0 ? (tau < work ? tau : work) : fallback;
}

/// The per-job analytic fields of a row (the same for every replica).
struct RowConstants {
    double mtbf;
    double young;
    double daly;
    double expected_ettr;
};

/// Fills a row's derived fields once its buckets are final.
ACESIM_HD void finish_row(JobRecord& rec, double progress, double interval, const RowConstants& k) {
    rec.progress = progress;
    rec.wall = rec.end - rec.submit;
    rec.ettr = rec.wall > 0.0 ? rec.productive / rec.wall : NAN;
    const double gpus = rec.gpus;
    rec.gpu_hours_lost = gpus * (rec.wall - rec.productive) / 3600.0;
    rec.checkpoint_interval = interval;
    rec.mtbf = k.mtbf;
    rec.young_interval = k.young;
    rec.daly_interval = k.daly;
    rec.expected_ettr = k.expected_ettr;
    rec.expected_waste = 1.0 - k.expected_ettr;
}

}  // namespace acesim

// Checkpoint levels (DESIGN section 4, "the job lifecycle as modern training
// runs it"): the durable checkpoint, written synchronously or as a blocking
// snapshot followed by a background persist, and up to kMaxTiers faster
// tiers (in-memory, node-local) that survive only some failures; and the
// progress rate of a job's compute (below 1 during a slow, gray failure).
//
// These transitions generalize the synchronous ones of lifecycle.hpp: with
// no persist (or a persist of 0 s), no tiers and rate 1 they perform the same
// floating-point operations in the same order, so the rows are bit for bit
// those of the synchronous path. Written for host and device (the batch
// path runs them on CUDA threads too).
#pragma once

#include <cmath>
#include <cstdint>

#include "acesim/hd.hpp"
#include "acesim/lifecycle.hpp"
#include "acesim/records.hpp"

namespace acesim {

constexpr std::uint32_t kMaxTiers = 4;
/// A loss no tier survives: a preemption, a time-limit stop or a planned
/// stop (the job leaves its nodes; only the durable checkpoint follows it).
constexpr std::uint32_t kAllNodes = 0xFFFFFFFFu;
constexpr std::uint32_t kNoLevelLaw = 0xFFFFFFFFu;

/// A fast checkpoint tier: a synchronous write every `interval` seconds of
/// progress that survives a failure taking fewer than `replication` of the
/// job's nodes (1: process failures only).
struct TierPlan {
    double interval;
    std::uint32_t save;  ///< distribution indices
    std::uint32_t load;
    std::uint32_t replication;
    std::uint32_t pad_;
};

/// A job's checkpoint levels. Level 0 is the durable checkpoint; levels
/// 1..tiers are the tiers, most durable first (replication descending, then
/// the order given).
struct LevelPlan {
    std::uint32_t persist = kNoLevelLaw;  ///< background persist law; none: synchronous
    std::uint32_t tiers = 0;
    double persist_mean = 0.0;
    TierPlan tier[kMaxTiers];
};

/// What the levels of one job hold, and its compute rate.
struct Levels {
    double durable = 0.0;         ///< progress of the newest durable checkpoint (0: the initial state)
    double durable_credit = 0.0;  ///< the row's productive when it became the newest kept checkpoint
    double durable_base = 0.0;  ///< progress of the last durable snapshot (its next boundary counts from it)
    double kept = 0.0;          ///< progress of the newest kept checkpoint, any level
    double unkept = 0.0;     ///< compute between `kept` and the position not kept yet (a persist in flight)
    double inflight = -1.0;  ///< progress of the snapshot being persisted (< 0: none)
    double inflight_credit = 0.0;
    double persist_end = INFINITY;    ///< wall time its persist ends
    double seg_acc = 0.0;             ///< progress of this compute phase before its last rate change
    double rate = 1.0;                ///< progress per second of compute: width_rate x slow_rate
    double width_rate = 1.0;          ///< an elastic job on fewer nodes: (held / needed) ** scaling
    double slow_rate = 1.0;           ///< a slow failure's slowdown until its detection
    double tier_progress[kMaxTiers];  ///< < 0: the tier holds no checkpoint
    double tier_credit[kMaxTiers];
    double tier_base[kMaxTiers];
    std::uint32_t writing = 0;  ///< the level of the boundary ahead (and of the write in progress)
    std::uint32_t restore = 0;  ///< the level the next start loads from
    /// Shared storage: 1 when this phase's fixed part (a durable write, a
    /// load) is followed by a transfer, 2 when the persist's is (bits).
    std::uint32_t transfer_due = 0;
    std::uint32_t transfer = 0;         ///< the transfer in flight: 0 none, 1 the phase's, 2 the persist's
    double slow_until = INFINITY;       ///< the engine: a slow failure's detection
    std::uint32_t slow_lost_nodes = 0;  ///< the engine: the nodes that failure takes (at its detection)
    std::uint32_t draws[4] = {0, 0, 0, 0};  ///< the engine: draws of Persist, TierSave, TierLoad, Reconfigure

    ACESIM_HD Levels() {
        for (std::uint32_t k = 0; k < kMaxTiers; ++k) {
            tier_progress[k] = -1.0;
            tier_credit[k] = 0.0;
            tier_base[k] = 0.0;
        }
    }
    ACESIM_HD bool persisting() const { return inflight >= 0.0; }
};

/// Progress of the current compute phase at t.
ACESIM_HD double compute_progress(const Lifecycle& s, const Levels& L, double t) {
    return L.seg_acc + (t - s.phase_start) * L.rate;
}

/// A compute stretch of `elapsed` seconds at a rate below 1 loses (1 - rate)
/// of its time: (1 - width_rate) to `narrow` (an elastic job on fewer
/// nodes), the rest of the loss to detection (a slow failure).
ACESIM_HD void charge_slow_time(const Levels& L, JobRecord& rec, double elapsed) {
    if (L.rate < 1.0) {
        if (L.width_rate < 1.0) rec.narrow += elapsed * (1.0 - L.width_rate);
        if (L.slow_rate < 1.0) rec.detection += elapsed * L.width_rate * (1.0 - L.slow_rate);
    }
}

/// Compute toward the next boundary of any level begins at t: the durable's
/// (its last snapshot + the interval, capped at the work) or a tier's, the
/// most durable level winning a tie (relative tolerance 1e-9).
ACESIM_HD void levels_begin_compute(Lifecycle& s, Levels& L, const LevelPlan& P, double work, double t) {
    double b = L.durable_base + s.interval < work ? L.durable_base + s.interval : work;
    std::uint32_t level = 0;
    for (std::uint32_t k = 0; k < P.tiers; ++k) {
        const double next = L.tier_base[k] + P.tier[k].interval;
        if (next < b - 1e-9 * b) {
            b = next;
            level = k + 1;
        }
    }
    if (b < s.committed) b = s.committed;  // a durable checkpoint overdue after a restore from a tier
    s.boundary = b;
    L.writing = level;
    L.seg_acc = 0.0;
    s.phase = Phase::Computing;
    s.phase_start = t;
    s.phase_end = t + (b - s.committed) / L.rate;
}

/// The rates of compute change at t (a slow failure begins; an elastic job
/// shrinks or grows): compute so far is banked and the phase's end moves.
ACESIM_HD void levels_set_rates(Lifecycle& s, Levels& L, JobRecord& rec, double t, double width_rate,
                                double slow_rate) {
    const bool computing = s.phase == Phase::Computing;
    if (computing) {
        charge_slow_time(L, rec, t - s.phase_start);
        L.seg_acc = compute_progress(s, L, t);
        s.phase_start = t;
    }
    L.width_rate = width_rate;
    L.slow_rate = slow_rate;
    L.rate = width_rate * slow_rate;
    if (computing) s.phase_end = t + (s.boundary - s.committed - L.seg_acc) / L.rate;
}

/// An elastic job pauses its compute at t for `duration` seconds to take
/// its nodes back (phase Reconfiguring; the compute so far is banked).
ACESIM_HD void levels_pause_compute(Lifecycle& s, Levels& L, JobRecord& rec, double t, double duration) {
    if (s.phase == Phase::Computing) {
        charge_slow_time(L, rec, t - s.phase_start);
        L.seg_acc = compute_progress(s, L, t);
    }
    s.phase = Phase::Reconfiguring;
    s.phase_start = t;
    s.phase_end = t + duration;
}

/// The reconfiguration ends at t (overhead); compute goes on toward the same boundary.
ACESIM_HD void levels_resume_compute(Lifecycle& s, Levels& L, JobRecord& rec, double t) {
    charge_reconfigure(rec, t - s.phase_start);
    s.phase = Phase::Computing;
    s.phase_start = t;
    s.phase_end = t + (s.boundary - s.committed - L.seg_acc) / L.rate;
}

/// The compute phase reaches its boundary at t. Returns true when the write
/// begins now (the caller draws its latency and calls levels_begin_write);
/// false when it must first wait for the previous persist (phase PersistWait
/// until it ends).
ACESIM_HD bool levels_reach_boundary(Lifecycle& s, Levels& L, JobRecord& rec, double t) {
    charge_slow_time(L, rec, t - s.phase_start);
    s.segment_compute = compute_progress(s, L, t);
    L.seg_acc = 0.0;
    s.phase_start = t;
    if (L.writing == 0 && L.persisting()) {
        s.phase = Phase::PersistWait;
        s.phase_end = L.persist_end;
        return false;
    }
    return true;
}

/// The write of the boundary's level (a snapshot for the durable) begins at t.
ACESIM_HD void levels_begin_write(Lifecycle& s, double t, double save) {
    s.phase = Phase::Saving;
    s.phase_start = t;
    s.phase_end = t + save;
}

/// Level `level` holds the checkpoint at progress `at`: every level at most
/// as durable counts its next boundary from it.
ACESIM_HD void levels_rebase(Levels& L, const LevelPlan& P, std::uint32_t level, double at) {
    if (level == 0) L.durable_base = at;
    for (std::uint32_t k = level == 0 ? 0 : level - 1; k < P.tiers; ++k) L.tier_base[k] = at;
}

/// The checkpoint at `at` (row credit `credit`) is durable.
ACESIM_HD void levels_make_durable(Levels& L, JobRecord& rec, double at, double credit) {
    L.durable = at;
    L.durable_credit = credit;
    if (at >= L.kept) {
        rec.productive = credit;
        L.unkept = 0.0;
        L.kept = at;
    }
    ++rec.checkpoints;
}

enum class WriteEnd : std::uint32_t {
    Continue,      ///< compute goes on (the checkpoint is kept)
    Persisting,    ///< compute goes on while the snapshot persists
    Done,          ///< the final checkpoint is durable
    FinalPersist,  ///< the final snapshot is taken: the job waits for its persist
};

/// The write in progress ends at t. `persist`: the persist draw of a durable
/// snapshot (0: durable at once, unless `background`: a transfer follows).
ACESIM_HD WriteEnd levels_end_write(Lifecycle& s, Levels& L, const LevelPlan& P, JobRecord& rec, double work,
                                    double t, double persist, bool background = false) {
    rec.ckpt_stall += t - s.phase_start;
    const double credit = (rec.productive + L.unkept) + s.segment_compute;
    const double at = s.boundary;
    const double segment = s.segment_compute;
    s.segment_compute = 0.0;
    s.committed = at;
    if (L.writing > 0) {
        const std::uint32_t k = L.writing - 1;
        L.tier_progress[k] = at;
        L.tier_credit[k] = credit;
        rec.productive = credit;
        L.unkept = 0.0;
        L.kept = at;
        ++rec.checkpoints;
        levels_rebase(L, P, L.writing, at);
        return WriteEnd::Continue;
    }
    levels_rebase(L, P, 0, at);
    if (persist > 0.0 || background) {
        L.inflight = at;
        L.inflight_credit = credit;
        L.unkept = L.unkept + segment;
        L.persist_end = t + persist;
        return at >= work ? WriteEnd::FinalPersist : WriteEnd::Persisting;
    }
    levels_make_durable(L, rec, at, credit);
    return at >= work ? WriteEnd::Done : WriteEnd::Continue;
}

/// The persist in flight ends at t: its checkpoint is durable.
ACESIM_HD void levels_end_persist(Levels& L, JobRecord& rec) {
    levels_make_durable(L, rec, L.inflight, L.inflight_credit);
    L.inflight = -1.0;
    L.persist_end = INFINITY;
}

/// Ends a start, compute, write or persist wait early at t and rolls back
/// to the newest checkpoint that survives the loss of `lost_nodes` of the
/// job's nodes (0: a process failure; kAllNodes: only the durable survives).
/// What is rolled back is wasted (a start cut off is overhead); tiers the
/// loss destroys hold nothing afterwards. Returns the compute rolled back.
ACESIM_HD double levels_roll_back(Lifecycle& s, Levels& L, const LevelPlan& P, JobRecord& rec, double t,
                                  std::uint32_t lost_nodes) {
    double lost = 0.0;
    switch (s.phase) {
        case Phase::Starting:
            charge_start(s, rec, t - s.phase_start);
            break;
        case Phase::Computing:
            charge_slow_time(L, rec, t - s.phase_start);
            lost = compute_progress(s, L, t);
            break;
        case Phase::Saving:
        case Phase::PersistWait:
            lost = s.segment_compute + (t - s.phase_start);
            break;
        case Phase::Reconfiguring:
            charge_reconfigure(rec, t - s.phase_start);
            lost = L.seg_acc;
            break;
        default:
            break;
    }
    std::uint32_t level = 0;
    double at = L.durable;
    double credit = L.durable_credit;
    for (std::uint32_t k = 0; k < P.tiers; ++k) {
        if (P.tier[k].replication <= lost_nodes) {
            L.tier_progress[k] = -1.0;  // its copies went with the nodes
        } else if (L.tier_progress[k] > at) {
            level = k + 1;
            at = L.tier_progress[k];
            credit = L.tier_credit[k];
        }
    }
    if (L.persisting()) ++rec.lost_checkpoints;
    if (level > 0) ++rec.tier_restores;
    const double rolled = (rec.productive - credit) + L.unkept;
    rec.wasted += rolled;
    rec.wasted += lost;
    rec.productive = credit;
    s.segment_compute = 0.0;
    s.committed = at;
    L.kept = at;
    L.unkept = 0.0;
    L.inflight = -1.0;
    L.persist_end = INFINITY;
    L.seg_acc = 0.0;
    L.slow_rate = 1.0;
    L.rate = L.width_rate;
    L.durable_base = L.durable;
    levels_rebase(L, P, level, at);
    L.restore = level;
    return rolled + lost;
}

/// Closes an unfinished job's row at t (the horizon): nothing is lost yet,
/// so compute not yet kept is productive; a write or a persist wait in
/// progress is ckpt_stall. Returns the job's progress.
ACESIM_HD double levels_close_at(const Lifecycle& s, const Levels& L, JobRecord& rec, bool started,
                                 double t) {
    const double elapsed = t - s.phase_start;
    switch (s.phase) {
        case Phase::Computing: {
            charge_slow_time(L, rec, elapsed);
            const double segment = compute_progress(s, L, t);
            rec.productive += L.unkept;
            rec.productive += segment;
            rec.end = t;
            rec.status = static_cast<std::uint8_t>(JobStatus::Running);
            return clamp_to_boundary(s, rec, s.committed + segment);
        }
        case Phase::Saving:
        case Phase::PersistWait:
            rec.productive += L.unkept;
            rec.productive += s.segment_compute;
            rec.ckpt_stall += elapsed;
            rec.end = t;
            rec.status = static_cast<std::uint8_t>(JobStatus::Running);
            return clamp_to_boundary(s, rec, s.committed + s.segment_compute);
        case Phase::Reconfiguring:
            rec.productive += L.unkept;
            rec.productive += L.seg_acc;
            charge_reconfigure(rec, elapsed);
            rec.end = t;
            rec.status = static_cast<std::uint8_t>(JobStatus::Running);
            return clamp_to_boundary(s, rec, s.committed + L.seg_acc);
        default:  // nothing is in flight outside these phases
            return close_at(s, rec, started, t);
    }
}

}  // namespace acesim

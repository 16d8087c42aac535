#include "checkpoint_writes.hpp"

#include <limits>

namespace acesim {

WriteOutcome CheckpointWrites::end_checkpoint(std::uint32_t j, double t) {
    if (!levels_.empty()) return end_leveled_write(j, t);
    JobState& job = jobs_[j];
    const bool done = end_save(job.life, *job.rec, in_.jobs[j].work, t);
    ledger_.log(j, EventKind::CheckpointEnd, t, jobs_[j]);
    outside_.report_checkpoint(j, t, job.life.committed, true);
    if (done) return WriteOutcome::Done;
    const std::int32_t by = preempt_if_deferred(j, t, true);
    return by >= 0 ? WriteOutcome(WriteOutcome::Preempt, static_cast<std::uint32_t>(by))
                   : WriteOutcome::Compute;
}

std::int32_t CheckpointWrites::preempt_if_deferred(std::uint32_t j, double t, bool at_boundary) {
    JobState& job = jobs_[j];
    if (job.preempt_for < 0) return -1;
    const std::int32_t by = jobs_.cancel_deferred_preemption(j);
    if (jobs_.phase(static_cast<std::uint32_t>(by)) != Phase::Waiting ||
        !scheduler_.waiting(static_cast<std::uint32_t>(by)))
        return -1;  // the preemptor no longer needs the nodes
    if (at_boundary) {
        // At its checkpoint nothing is lost: the write is done and no
        // compute has started.
        job.life.phase = Phase::Computing;
        job.life.phase_start = t;
        if (!levels_.empty()) levels_[j].seg_acc = 0.0;
    }
    return by;
}

void CheckpointWrites::reach_leveled_boundary(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    Levels& L = levels_[j];
    if (levels_reach_boundary(job.life, L, *job.rec, t)) {
        begin_leveled_write(j, t);
    } else {
        requests_.job_at(j, due_.next(j));  // waits for the persist in flight (end_persist)
    }
}

void CheckpointWrites::begin_leveled_write(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const Levels& L = levels_[j];
    const double save = L.writing == 0
                            ? job_draws_.law(j, Purpose::Save, in_.jobs[j].save)
                            : job_draws_.law(j, Purpose::TierSave, plans_.levels[j].tier[L.writing - 1].save);
    levels_begin_write(job.life, t, save);
    if (L.writing == 0 && plans_.levels[j].persist == kNoLevelLaw && uses_storage(storage_, in_, j))
        levels_[j].transfer_due |= 1u;
    // A drain checkpoint's write of the mean ends by the maintenance start
    // (its transfer, alone on the storage, included), less the mean persist
    // when one follows: its persist (end_leveled_write) then ends by the start.
    const LevelPlan& plan = plans_.levels[j];
    const double transfer = L.transfer_due & 1u ? storage_transfer(in_, j) : 0.0;
    const double due = job.drain_by - plan.persist_mean;
    if (L.writing == 0 &&
        ends_as_planned(job.life.phase_end + transfer, due, t <= due_.drain_point(j, job.drain_by),
                        save + transfer, plans_.of(j).save_mean))
        job.life.phase_end = due - transfer;
    // (a snapshot's persist still has to be timed: its end clears it)
    if (L.writing != 0 || plan.persist == kNoLevelLaw) job.drain_by = std::numeric_limits<double>::infinity();
    ledger_.log(j, EventKind::CheckpointBegin, t, jobs_[j]);
    requests_.job_at(j, due_.next(j));
}

WriteOutcome CheckpointWrites::end_leveled_write(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    Levels& L = levels_[j];
    const LevelPlan& plan = plans_.levels[j];
    const bool durable = L.writing == 0;
    const double persist =
        durable && plan.persist != kNoLevelLaw ? job_draws_.law(j, Purpose::Persist, plan.persist) : 0.0;
    // With shared storage the persist's transfer follows its fixed part.
    const bool transfer = durable && plan.persist != kNoLevelLaw && uses_storage(storage_, in_, j);
    const WriteEnd end =
        levels_end_write(job.life, L, plan, *job.rec, in_.jobs[j].work, t, persist, transfer);
    if (transfer) L.transfer_due |= 2u;
    if (durable && plan.persist != kNoLevelLaw) {
        // A drain snapshot that ended by its time (begin_leveled_write) and a
        // persist of the mean: durable by the maintenance start (its
        // transfer, alone on the storage, after it).
        const double after = transfer ? storage_transfer(in_, j) : 0.0;
        if (L.persisting() &&
            ends_as_planned(L.persist_end + after, job.drain_by, t <= job.drain_by - plan.persist_mean,
                            persist + after, plan.persist_mean))
            L.persist_end = job.drain_by - after;
        job.drain_by = std::numeric_limits<double>::infinity();
    }
    ledger_.log(j, EventKind::CheckpointEnd, t, jobs_[j]);
    // A snapshot whose persist runs is not kept yet (its durability is reported then).
    if (end == WriteEnd::Done || end == WriteEnd::Continue)
        outside_.report_checkpoint(j, t, job.life.committed, durable);
    switch (end) {
        case WriteEnd::Done:
            return WriteOutcome::Done;
        case WriteEnd::FinalPersist:
            job.life.phase = Phase::PersistWait;
            job.life.phase_start = t;
            job.life.phase_end = L.persist_end;
            requests_.job_at(j, due_.next(j));
            return WriteOutcome::Handled;
        case WriteEnd::Continue: {
            const std::int32_t by = durable ? preempt_if_deferred(j, t, true) : -1;
            return by >= 0 ? WriteOutcome(WriteOutcome::Preempt, static_cast<std::uint32_t>(by))
                           : WriteOutcome::Compute;
        }
        case WriteEnd::Persisting:
            break;
    }
    return WriteOutcome::Compute;
}

WriteOutcome CheckpointWrites::end_persist(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    Levels& L = levels_[j];
    if (L.transfer_due & 2u) {  // its fixed part is over: the transfer to the shared storage
        L.transfer_due &= ~2u;
        begin_transfer(j, t, 2);
        return WriteOutcome::Handled;
    }
    if (L.transfer == 2) end_transfer(j, t, true);
    levels_end_persist(L, *job.rec);
    ledger_.log(j, EventKind::CheckpointDurable, t, jobs_[j]);
    outside_.report_checkpoint(j, t, L.durable, true);
    if (job.life.phase == Phase::PersistWait) {
        job.rec->ckpt_stall += t - job.life.phase_start;
        if (L.durable >= in_.jobs[j].work) return WriteOutcome::Done;  // the final checkpoint
        // (else: its snapshot is next)
        job.life.phase_start = t;
        const std::int32_t by = preempt_if_deferred(j, t, false);
        if (by >= 0) return {WriteOutcome::Preempt, static_cast<std::uint32_t>(by)};
        begin_leveled_write(j, t);
        return WriteOutcome::Handled;
    }
    const std::int32_t by = preempt_if_deferred(j, t, false);
    if (by >= 0) return {WriteOutcome::Preempt, static_cast<std::uint32_t>(by)};
    requests_.job_at(j, due_.next(j));
    return WriteOutcome::Handled;
}

bool CheckpointWrites::phase_transfer_begins(std::uint32_t j, double t) {
    if (levels_.empty()) return false;
    Levels& L = levels_[j];
    if (L.transfer_due & 1u) {
        L.transfer_due &= ~1u;
        begin_transfer(j, t, 1);
        return true;
    }
    if (L.transfer == 1) end_transfer(j, t, true);
    return false;
}

void CheckpointWrites::begin_transfer(std::uint32_t j, double t, std::uint32_t kind) {
    levels_[j].transfer = kind;
    storage_.add(j, in_.options(j).checkpoint_bytes, t);
    reschedule_transfers();
}

void CheckpointWrites::end_transfer(std::uint32_t j, double t, bool finished) {
    jobs_[j].rec->contention += storage_.remove(j, t, finished);
    levels_[j].transfer = 0;
    reschedule_transfers();
}

void CheckpointWrites::reschedule_transfers() {
    for (std::size_t k = 0; k < storage_.size(); ++k) {
        const std::uint32_t j = storage_.job(k);
        const double at = storage_.finish(k);
        JobState& job = jobs_[j];
        Levels& L = levels_[j];
        if (L.transfer == 1) {
            job.life.phase_end = at;
        } else {
            L.persist_end = at;
            if (job.life.phase == Phase::PersistWait) job.life.phase_end = at;
        }
        requests_.job_at(j, due_.next(j));
    }
}

}  // namespace acesim

#include "job_transitions.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "acesim/analytic.hpp"

namespace acesim {
namespace {
constexpr double kSecondsPerHour = 3600.0;
}  // namespace

double JobTransitions::routine_bound(std::uint32_t j) const {
    // Events up to the horizon happen (kernel), up to kLatestTime (handle);
    // a phase end at a job-level failure's instant, at its time limit or at
    // a slow failure's detection comes first (handle_job).
    const FailureClock& clock = jobs_[j].clock;
    double bound = std::min(kernel_.horizon(), kLatestTime);
    if (limits_) bound = std::min(bound, limit_at_[j]);
    if (!levels_.empty()) bound = std::min(bound, levels_[j].slow_until);
    return clock.holding ? std::min(bound, clock.fail_at) : bound;
}

std::uint32_t JobTransitions::apply_routine(std::uint32_t j, double bound, bool at_bound, std::uint32_t most,
                                            bool& capped) {
    // The same arithmetic and draws as on_phase_end's Computing and Saving
    // cases (without maintenance, deferred preemptions or an event log,
    // which turn run_ahead_ off).
    if (!levels_.empty()) return apply_leveled_routine(j, bound, at_bound, most, capped);
    JobState& job = jobs_[j];
    const JobSpec& spec = in_.jobs[j];
    // On copies that stay in registers; what the loop changes (stretch_start's
    // fields) is written back once.
    Lifecycle life = job.life;
    JobRecord rec = *job.rec;
    // A constant write is that value at every draw: only its counter moves.
    double constant_save = 0.0;
    const bool constant = job_draws_.constant(spec.save, constant_save);
    std::uint32_t constant_saves = 0;
    const double drain_at = drain_point(j);
    std::uint32_t n = 0;
    capped = false;
    for (;;) {
        const double t = life.phase_end;
        if (!(t < bound || (at_bound && t == bound))) break;
        if (n == most) {
            capped = true;  // (its stretch continues: resume)
            break;
        }
        if (std::isfinite(job.drain_by)) break;  // a drain checkpoint's steps are events (begin_checkpoint)
        if (life.phase == Phase::Computing) {
            double save = constant_save;
            if (constant) {
                ++constant_saves;
            } else if (!job_draws_.try_law(j, Purpose::Save, spec.save, save)) {
                break;  // its event draws it and says why it cannot be drawn
            }
            begin_save(life, t, save);
        } else {
            if (life.boundary >= spec.work) break;  // the final write's end: its completion is an event
            end_save(life, rec, spec.work, t);
            acesim::begin_compute(life, spec.work, t);
            if (t < drain_at && drain_at <= life.phase_end) {  // (as begin_compute plans it)
                job.life = life;
                plan_drain_checkpoint(j, t);
                life = job.life;
            }
        }
        ++n;
    }
    job_draws_.skip(j, Purpose::Save, constant_saves);
    job.life = life;
    job.rec->productive = rec.productive;
    job.rec->ckpt_stall = rec.ckpt_stall;
    job.rec->checkpoints = rec.checkpoints;
    return n;
}

std::uint32_t JobTransitions::apply_leveled_routine(std::uint32_t j, double bound, bool at_bound,
                                                    std::uint32_t most, bool& capped) {
    // The same arithmetic and draws, in the same order, as handle_job's
    // persist end (CheckpointWrites::end_persist) and phase ends
    // (reach_leveled_boundary, end_leveled_write, begin_compute) without
    // shared storage, elastic jobs, maintenance, deferred preemptions or an
    // event log (run_ahead_ is off with them). A slow failure's reduced
    // rate is the Levels' (its detection bounds the stretch).
    JobState& job = jobs_[j];
    Lifecycle& life = job.life;
    Levels& L = levels_[j];
    const LevelPlan& plan = plans_.levels[j];
    const JobSpec& spec = in_.jobs[j];
    JobRecord& rec = *job.rec;
    // The draw of the write that begins (the durable's or a tier's).
    auto write_draw = [&](double& save) {
        return L.writing == 0 ? job_draws_.try_law(j, Purpose::Save, spec.save, save)
                              : job_draws_.try_law(j, Purpose::TierSave, plan.tier[L.writing - 1].save, save);
    };
    const double drain_at = drain_point(j);
    std::uint32_t n = 0;
    capped = false;
    for (;;) {
        // At equal times a persist's end comes before the phase's (handle_job).
        const bool persist = L.persist_end <= life.phase_end;
        const double t = persist ? L.persist_end : life.phase_end;
        if (!(t < bound || (at_bound && t == bound))) break;
        if (n == most) {
            capped = true;  // (its stretch continues: resume)
            break;
        }
        // A drain checkpoint's steps are events (CheckpointWrites: its write and persist end as planned).
        if (std::isfinite(job.drain_by)) break;
        if (persist) {
            if (life.phase == Phase::PersistWait) {
                if (L.inflight >= spec.work) break;  // the final checkpoint: its completion is an event
                double save;
                if (!write_draw(save)) break;
                levels_end_persist(L, rec);
                rec.ckpt_stall += t - life.phase_start;
                life.phase_start = t;
                levels_begin_write(life, t, save);
            } else {
                levels_end_persist(L, rec);
            }
        } else if (life.phase == Phase::Computing) {
            const bool writes = !(L.writing == 0 && L.persisting());  // else it waits for the persist
            double save = 0.0;
            if (writes && !write_draw(save)) break;
            if (levels_reach_boundary(life, L, rec, t)) levels_begin_write(life, t, save);
        } else if (life.phase == Phase::Saving) {
            const bool durable = L.writing == 0;
            std::uint32_t& persists = L.draws[static_cast<std::size_t>(Purpose::Persist) - kPurposes];
            const std::uint32_t before = persists;
            double persist_draw = 0.0;
            if (durable && plan.persist != kNoLevelLaw &&
                !job_draws_.try_law(j, Purpose::Persist, plan.persist, persist_draw))
                break;
            if (durable && persist_draw == 0.0 && life.boundary >= spec.work) {
                persists = before;  // the final checkpoint, durable at once: its completion is an event
                break;
            }
            switch (levels_end_write(life, L, plan, rec, spec.work, t, persist_draw)) {
                case WriteEnd::FinalPersist:
                    life.phase = Phase::PersistWait;
                    life.phase_start = t;
                    life.phase_end = L.persist_end;
                    break;
                case WriteEnd::Continue:
                case WriteEnd::Persisting:
                    levels_begin_compute(life, L, plan, spec.work, t);
                    if (t < drain_at && drain_at <= life.phase_end) plan_drain_checkpoint(j, t);
                    break;
                case WriteEnd::Done:  // ruled out above: its completion is an event
                    throw std::logic_error("invariant: job " + std::to_string(j) +
                                           "'s final checkpoint was applied ahead of the clock");
            }
        } else {
            break;  // (PersistWait ends with its persist, above)
        }
        ++n;
    }
    return n;
}

double JobTransitions::drain_point(std::uint32_t j) const {
    // Its nodes' next window is the same all through a stretch: a window
    // that begins on one of them stops the job (catching it up first).
    if (pool_.maintenance().empty()) return -std::numeric_limits<double>::infinity();
    return due_.drain_point(j, pool_.next_drain(j));
}

void JobTransitions::stretch_start(std::uint32_t j, bool restore) {
    // What apply_routine changes, kept at a stretch's start or put back.
    JobState& job = jobs_[j];
    RunAhead& a = job.ahead;
    const auto keep_or_restore = [restore](auto& kept, auto& now) {
        restore ? void(now = kept) : void(kept = now);
    };
    keep_or_restore(a.life, job.life);
    keep_or_restore(a.productive, job.rec->productive);
    keep_or_restore(a.ckpt_stall, job.rec->ckpt_stall);
    keep_or_restore(a.detection, job.rec->detection);
    keep_or_restore(a.drain_by, job.drain_by);
    keep_or_restore(a.checkpoints, job.rec->checkpoints);
    keep_or_restore(a.saves, job.draws[static_cast<std::size_t>(Purpose::Save)]);
    if (!levels_.empty()) keep_or_restore(a.levels, levels_[j]);  // (its draws' counters included)
}

void JobTransitions::run_ahead(std::uint32_t j) {
    jobs_[j].ahead.look_ahead = kFirstLookAhead;
    stretch(j);
}

void JobTransitions::resume(std::uint32_t j) {
    RunAhead& a = jobs_[j].ahead;
    a.resumes = false;
    kernel_.uncount_routine(1);  // its entry was no event: the transitions it applies are
    a.look_ahead = static_cast<std::uint16_t>(std::min<std::uint32_t>(2u * a.look_ahead, kLastLookAhead));
    stretch(j);
}

void JobTransitions::stretch(std::uint32_t j) {
    stretch_start(j, false);
    RunAhead& a = jobs_[j].ahead;
    bool capped = false;
    a.events = apply_routine(j, routine_bound(j), true, a.look_ahead, capped);
    a.active = a.events > 0;
    a.resumes = capped;  // (its next transition is its next event: due by the bound)
    kernel_.count_routine(a.events);
    requests_.job_at(j, due_.next(j));
}

void JobTransitions::catch_up(std::uint32_t j) {
    RunAhead& a = jobs_[j].ahead;
    a.resumes = false;  // (whoever catches it up schedules its next event)
    if (!a.active) return;
    // Back to the stretch's start, then the transitions up to now again:
    // the same draws (counter-based) and the same arithmetic in the same
    // order. (At most the stretch's look-ahead bound: its continuation's
    // entry, had it come, would come at now or later.)
    stretch_start(j, true);
    kernel_.uncount_routine(a.events);
    a.active = false;
    const double now = kernel_.now();
    const double bound = routine_bound(j);
    constexpr std::uint32_t kAll = std::numeric_limits<std::uint32_t>::max();
    bool capped = false;
    // Those at now come before the current event when the kernel's order
    // at equal times says so, the bound's instant included (the job's own
    // event at its bound has caught it up already: handle_job).
    kernel_.count_routine(
        now <= bound ? apply_routine(j, now, EventKernel::job_event_before(j, current_), kAll, capped)
                     : apply_routine(j, bound, true, kAll, capped));
}

void JobTransitions::enqueue(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.life.phase = Phase::Queued;
    job.life.phase_start = t;
    if (reservation_.enabled())
        reservation_.enqueued(j,
                              reservation_.run_estimate(j, jobs_[j].life));  // (out of line: see note_start)
    scheduler_.enqueue(j);
}

void JobTransitions::wait_for_nodes(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.life.phase = Phase::Waiting;
    job.life.phase_start = t;
    scheduler_.wait(j);
    ledger_.log(j, EventKind::Waiting, t, jobs_[j]);
}

void JobTransitions::submit(std::uint32_t j, double t) {
    ledger_.log(j, EventKind::Submit, t, jobs_[j]);
    enqueue(j, t);
}

bool JobTransitions::end_start(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const double overhead = t - job.life.phase_start;
    acesim::end_start(job.life, *job.rec, t);
    charge_restart_churn(j, overhead);
    return begin_compute(j, t);
}

void JobTransitions::begin_checkpoint(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    const double save = job_draws_.law(j, Purpose::Save, in_.jobs[j].save);
    begin_save(job.life, t, save);
    // A drain checkpoint of the mean ends by the maintenance start.
    if (ends_as_planned(job.life.phase_end, job.drain_by, t <= due_.drain_point(j, job.drain_by), save,
                        plans_.of(j).save_mean))
        job.life.phase_end = job.drain_by;
    job.drain_by = std::numeric_limits<double>::infinity();
    ledger_.log(j, EventKind::CheckpointBegin, t, jobs_[j]);
    requests_.job_at(j, due_.next(j));
}

void JobTransitions::end_detection(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.rec->detection += t - job.life.phase_start;
    if (job.planned_stop) {
        job.planned_stop = false;  // nothing to detect: it was planned
    } else {
        ledger_.log(j, EventKind::Detected, t, jobs_[j]);
    }
}

void JobTransitions::end_replacement_delay(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    if (!job.replacing) return;
    job.replacing = false;
    begin_start(j, t);
}

void JobTransitions::end_reconfiguration(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    levels_resume_compute(job.life, levels_[j], *job.rec, t);
    ledger_.log(j, EventKind::ComputeBegin, t, jobs_[j]);
    requests_.job_at(j, due_.next(j));
}

void JobTransitions::begin_start(std::uint32_t j, double t, double reconfigure) {
    JobState& job = jobs_[j];
    if (!job.started) {
        job.started = true;
        job.rec->queue_wait += t - job.life.phase_start;
    } else {
        if (job.life.phase == Phase::Waiting || job.life.phase == Phase::Queued)
            job.rec->recovery_wait += t - job.life.phase_start;
        ++job.rec->restarts;
    }
    const JobSpec& spec = in_.jobs[j];
    if (reservation_.enabled()) note_start(j, t);  // out of line: it costs the greedy path nothing
    if (spec.rule == IntervalRule::Adaptive) {
        const JobProfile& profile = plans_.of(j);
        job.life.interval = adaptive_interval(profile.mtbf, spec.work, profile.save_mean, job.clock.held_time,
                                              job.rec->failures, starting_interval(spec, profile));
    }
    const double init = job_draws_.law(j, Purpose::Init, spec.init);
    double load;
    if (!levels_.empty() && levels_[j].restore == 0 && uses_storage(storage_, in_, j))
        levels_[j].transfer_due |= 1u;
    if (!levels_.empty() && levels_[j].restore > 0) {
        load = job_draws_.law(j, Purpose::TierLoad, plans_.levels[j].tier[levels_[j].restore - 1].load);
        levels_[j].restore = 0;
    } else {
        load = job_draws_.law(j, Purpose::Load, spec.load);
    }
    acesim::begin_start(job.life, t, init, reconfigure > 0.0 ? load + reconfigure : load, reconfigure);
    job.replaced = false;
    job.run_start = t;
    if (limits_) limit_at_[j] = t + in_.time_limits[j];
    job.clock.hold(t);
    ledger_.log(j, EventKind::StartBegin, t, jobs_[j]);
    if (pool_.enabled()) ledger_.placed(j, t, pool_.nodes_of(j));
    requests_.job_at(j, due_.next(j));
}

void JobTransitions::note_start(std::uint32_t j, double t) {
    // From the queue its estimate is the one made when it was queued.
    const double estimate = jobs_[j].life.phase == Phase::Queued
                                ? reservation_.estimate(j)
                                : reservation_.run_estimate(j, jobs_[j].life);
    reservation_.dequeued(j);
    reservation_.set_end(j, t + estimate);
}

bool JobTransitions::begin_compute(std::uint32_t j, double t) {
    if (levels_.empty()) {
        acesim::begin_compute(jobs_[j].life, in_.jobs[j].work, t);
    } else {
        levels_begin_compute(jobs_[j].life, levels_[j], plans_.levels[j], in_.jobs[j].work, t);
        if (jobs_[j].grow_pending) return true;  // its nodes came back during a start or a write
    }
    if (!pool_.maintenance().empty()) plan_drain_checkpoint(j, t);
    ledger_.log(j, EventKind::ComputeBegin, t, jobs_[j]);
    if (run_ahead_ && in_.options(j).min_gpus == 0) {  // (an elastic job's width changes between its events)
        run_ahead(j);
    } else {
        requests_.job_at(j, due_.next(j));
    }
    return false;
}

void JobTransitions::plan_drain_checkpoint(std::uint32_t j, double t) {
    // A node of the job enters maintenance at `start`: the job checkpoints
    // at start - (mean save) - (mean persist), so that a write and a persist
    // of the mean make it durable by the start (an asynchronous job computes
    // meanwhile: that compute is lost at the stop). Its segment ends there
    // (an extra checkpoint) when that falls inside this compute phase;
    // otherwise nothing changes (a regular checkpoint comes first, or it is
    // too late and the job loses its work since the last durable checkpoint
    // when it is stopped, a persist in flight included).
    JobState& job = jobs_[j];
    const double start = pool_.next_drain(j);
    const double at = due_.drain_point(j, start);
    if (!(t < at && at <= job.life.phase_end)) return;
    if (at < job.life.phase_end) {
        // (a drain checkpoint is durable; its compute at the job's rate)
        job.life.boundary = job.life.committed + (levels_.empty() ? at - t : (at - t) * levels_[j].rate);
        job.life.phase_end = at;
        if (!levels_.empty()) levels_[j].writing = 0;
    }
    job.drain_by = start;
}

void JobTransitions::complete(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    job.clock.unhold(t);
    end_slow_failure(j);  // done before its slow failure was found
    if (limits_) limit_at_[j] = std::numeric_limits<double>::infinity();
    job.life.phase = Phase::Done;
    job.rec->completed = true;
    job.rec->end = t;
    exact_productive(*job.rec, in_.jobs[j].work);
    ledger_.log(j, EventKind::Done, t, jobs_[j]);
    if (outside_.enabled) {
        const NodeList held = pool_.nodes_of(j);
        std::vector<std::uint32_t> nodes(held.begin(), held.end());
        outside_.report({t, t, ModelEvent::JobDone, static_cast<std::int32_t>(j), -1, nodes, 0.0, false, nodes});
    }
    jobs_.done(j);
    if (pool_.enabled()) reservation_.release_nodes(j, pool_);
}

void JobTransitions::stop_at_time_limit(std::uint32_t j, double t) {
    // Like a preemption without a preemptor: what the run did since its last
    // checkpoint is lost (wasted, or overhead for a start cut off), and the
    // job waits in the queue again (recovery_wait) to restart from it.
    JobState& job = jobs_[j];
    jobs_.cancel_deferred_preemption(j);
    ++job.rec->timeouts;
    ledger_.log(j, EventKind::TimeLimit, t, jobs_[j]);
    if (pool_.enabled()) reservation_.release_nodes(j, pool_);
    enqueue(j, t);
}

double JobTransitions::interrupt(std::uint32_t j, double t, std::uint32_t lost_nodes) {
    catch_up(j);  // (t is the current event's time)
    JobState& job = jobs_[j];
    const double overhead = t - job.life.phase_start;
    const bool starting = job.life.phase == Phase::Starting;
    if (!levels_.empty()) levels_[j].transfer_due = 0;  // (one in flight was cut off: the engine's)
    const double lost =
        levels_.empty() ? acesim::interrupt(job.life, *job.rec, t)
                        : levels_roll_back(job.life, levels_[j], plans_.levels[j], *job.rec, t, lost_nodes);
    end_slow_failure(j);
    if (starting) charge_restart_churn(j, overhead);
    job.clock.unhold(t);
    job.drain_by = std::numeric_limits<double>::infinity();
    if (limits_) limit_at_[j] = std::numeric_limits<double>::infinity();  // the run is over
    return lost;
}

void JobTransitions::end_slow_failure(std::uint32_t j) {
    JobState& job = jobs_[j];
    job.slow = false;
    if (!levels_.empty()) levels_[j].slow_until = std::numeric_limits<double>::infinity();
}

void JobTransitions::charge_restart_churn(std::uint32_t j, double overhead) {
    JobState& job = jobs_[j];
    if (job.churn_owner < 0) return;
    // (the owner may have ended since: its row is the output's then)
    jobs_.row(static_cast<std::uint32_t>(job.churn_owner))->churn_gpu_hours +=
        in_.jobs[j].gpus * overhead / kSecondsPerHour;
    job.churn_owner = -1;
}

}  // namespace acesim

// Every job's state in one replica, held only while the job is live: from
// its submission to its end. A job not submitted yet, or done, costs one
// pointer; a live one holds a slot of a pool that is reused as jobs end, so
// the states the engine touches stay few and in cache (a fleet month runs
// 1.7M jobs, of which a fraction of a percent are live at any moment). A
// live job's row is filled in its slot and written to the output once,
// when the job ends (an outside scheduler's run keeps every row in the
// output from the start, and every state).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "acesim/records.hpp"
#include "acesim/simulator.hpp"
#include "acesim/single_job.hpp"
#include "job_state.hpp"
#include "plans.hpp"

namespace acesim {

class JobStates {
public:
    JobStates(const JobTable& specs, const Plans& plans, std::uint32_t replica)
        : specs_(specs), plans_(plans), replica_(replica) {
        done_.life.phase = Phase::Done;
    }
    JobStates(const JobStates&) = delete;
    JobStates& operator=(const JobStates&) = delete;

    /// n jobs, none submitted; their rows go to `rows` (n of them).
    void reset(std::size_t n, JobRecord* rows) {
        state_.assign(n, nullptr);
        rows_ = rows;
    }
    /// An outside scheduler's run: rows are filled in the output itself and
    /// no state is given up (the scheduler reads any job's at any time).
    void keep_everything() { keep_ = true; }
    /// The output's rows moved (an outside scheduler's run grew them).
    void rebind_rows(JobRecord* rows) {
        rows_ = rows;
        for (std::size_t j = 0; j < state_.size(); ++j)
            if (live(j)) state_[j]->rec = rows_ + j;
    }
    /// One more job, not submitted (an outside scheduler's run).
    void add() { state_.push_back(nullptr); }

    std::size_t size() const { return state_.size(); }
    /// It was submitted (opened), done or not.
    bool opened(std::size_t j) const { return state_[j] != nullptr; }
    /// It was submitted and is not done: its state is held.
    bool live(std::size_t j) const { return state_[j] != nullptr && state_[j] != &done_; }

    /// A live job's state (to change it).
    JobState& operator[](std::size_t j) {
        JobState* s = state_[j];
        if (s == nullptr || s == &done_) not_live(j);
        return *s;
    }
    /// Any job's state to read: one not submitted or done reads as a job in
    /// that phase that holds nothing.
    const JobState& operator[](std::size_t j) const {
        const JobState* s = state_[j];
        return s == nullptr ? pending_ : *s;
    }
    Phase phase(std::size_t j) const { return (*this)[j].phase(); }

    /// Its row: in its slot while it is live, else the output's (a job
    /// not submitted has no row yet: nullptr).
    JobRecord* row(std::size_t j) {
        if (live(j)) return state_[j]->rec;
        return state_[j] == nullptr ? nullptr : rows_ + j;
    }
    const JobRecord* row(std::size_t j) const { return const_cast<JobStates*>(this)->row(j); }

    /// Job j is submitted: a fresh state in phase Pending (its submission
    /// due), and its row with its identity. Opening a job does not move
    /// any other job's state.
    JobState& open(std::uint32_t j) {
        JobState* s;
        if (!free_.empty()) {
            s = free_.back();
            free_.pop_back();
        } else {
            if (chunk_left_ == 0) {
                // Chunks double from kFirstChunk to kChunk: a small run
                // (a replica of a few jobs) allocates a few slots, not 1,024.
                const std::size_t n = std::min(kChunk, std::max(kFirstChunk, used_));
                chunks_.push_back(std::make_unique<JobState[]>(n));
                next_ = chunks_.back().get();
                chunk_left_ = n;
            }
            s = next_++;
            --chunk_left_;
            ++used_;
        }
        *s = JobState{};
        s->rec = keep_ ? rows_ + j : &s->row;
        const JobSpec& spec = specs_[j];
        detail::open_row(*s->rec, spec, replica_, j);
        s->life.interval = starting_interval(spec, plans_.of(j));
        s->life.phase_end = spec.submit;
        state_[j] = s;
        return *s;
    }

    /// Job j is done (finished or closed as unplaceable): its row keeps its
    /// progress and interval for the rollup, and its state is given up at
    /// the end of the event (release_done), so that the event's parts may
    /// still read it.
    void done(std::uint32_t j) {
        ++ended_;
        JobState& s = (*this)[j];
        s.rec->progress = s.life.committed;
        s.rec->checkpoint_interval = s.life.interval;
        if (!keep_) done_now_.push_back(j);
    }
    /// How many jobs are done (finished, or closed as unplaceable).
    std::size_t ended() const { return ended_; }
    /// A victim marked for preemption at its next checkpoint (v) no longer
    /// is: its preemptor counts on its nodes no more. Returns the preemptor
    /// (-1: none).
    std::int32_t cancel_deferred_preemption(std::uint32_t v) {
        JobState& victim = (*this)[v];
        const std::int32_t by = victim.preempt_for;
        if (by < 0) return -1;
        if (live(static_cast<std::uint32_t>(by)))
            (*this)[static_cast<std::size_t>(by)].pledged -= plans_.jobs[v].nodes;
        victim.preempt_for = -1;
        return by;
    }
    /// Gives up the states of the jobs that ended in this event.
    void release_done() {
        for (const std::uint32_t j : done_now_) release(j);
        done_now_.clear();
    }
    /// Writes a live job's row to the output and gives up its state (no-op
    /// in an outside scheduler's run).
    void release(std::uint32_t j) {
        if (keep_ || !live(j)) return;
        JobState* s = state_[j];
        rows_[j] = s->row;
        free_.push_back(s);
        state_[j] = &done_;
    }

private:
    [[noreturn]] static void not_live(std::size_t j) {
        throw std::logic_error("invariant: job " + std::to_string(j) +
                               "'s state was changed while it was not live (not submitted, or done)");
    }

    static constexpr std::size_t kFirstChunk = 8;
    static constexpr std::size_t kChunk = 1024;
    const JobTable& specs_;
    const Plans& plans_;
    std::uint32_t replica_;
    JobRecord* rows_ = nullptr;
    bool keep_ = false;
    std::vector<JobState*> state_;  ///< per job: its slot, &done_, or nullptr (not submitted)
    std::vector<std::unique_ptr<JobState[]>> chunks_;
    std::size_t used_ = 0;        ///< slots ever handed out
    JobState* next_ = nullptr;    ///< the next unused slot of the last chunk
    std::size_t chunk_left_ = 0;  ///< unused slots left in it
    std::vector<JobState*> free_;
    std::vector<std::uint32_t> done_now_;
    std::size_t ended_ = 0;
    JobState pending_{};
    JobState done_{};
};

/// The draws of every job's own laws (init, load, writes, failures, ...):
/// a purpose's counter is the job's, or for the purposes of checkpoint
/// levels (>= kPurposes) its Levels'.
class JobDraws {
public:
    JobDraws(const ReplicaDraws& draws, const SimulationInput& in, JobStates& jobs,
             std::vector<Levels>& levels)
        : draws_(draws), in_(in), jobs_(jobs), levels_(levels) {}

    /// The next draw of job j's `purpose` law `dist`.
    double law(std::uint32_t j, Purpose purpose, std::uint32_t dist) {
        return draws_.law(EntityKind::Job, j, purpose, dist, counter(j, purpose), gpus(j));
    }
    /// The next draw of j's `purpose` law `dist` if it is finite (its
    /// counter moves on); false otherwise (the event will draw it, and say why).
    bool try_law(std::uint32_t j, Purpose purpose, std::uint32_t dist, double& x) {
        return draws_.try_law(EntityKind::Job, j, purpose, dist, counter(j, purpose), gpus(j), x);
    }
    /// When law `dist` is a finite constant: its value (ReplicaDraws::constant).
    bool constant(std::uint32_t dist, double& x) const { return draws_.constant(dist, x); }
    /// `n` draws of j's `purpose` law were taken without drawing (a constant's).
    void skip(std::uint32_t j, Purpose purpose, std::uint32_t n) { counter(j, purpose) += n; }
    /// Job j's job-level failure clock starts over with a fresh draw.
    void renew_failure_clock(std::uint32_t j) {
        JobState& job = jobs_[j];
        const std::uint32_t dist = job_failure_law(in_, j);
        job.fail_draw = dist == kNoDistribution ? std::numeric_limits<double>::infinity()
                                                : law(j, Purpose::Failure, dist);
        job.clock.fail_left = job.fail_draw;
    }

private:
    std::uint32_t& counter(std::uint32_t j, Purpose purpose) {
        const auto p = static_cast<std::size_t>(purpose);
        return p < kPurposes ? jobs_[j].draws[p] : levels_[j].draws[p - kPurposes];
    }
    double gpus(std::uint32_t j) const { return static_cast<double>(in_.jobs[j].gpus); }

    const ReplicaDraws& draws_;
    const SimulationInput& in_;
    JobStates& jobs_;
    std::vector<Levels>& levels_;
};

/// When each job's next event is due: the end of its phase (with checkpoint
/// levels also its persist's end and a slow failure's detection), a
/// job-level failure, or its time limit; what the parts ask the kernel for.
class JobDue {
public:
    JobDue(const JobStates& jobs, const Plans& plans, const std::vector<Levels>& levels,
           const std::vector<double>& limit_at, bool limits)
        : jobs_(jobs), plans_(plans), levels_(levels), limit_at_(limit_at), limits_(limits) {}

    /// The wall time of j's next timed transition (its phase end; with
    /// checkpoint levels also its persist's end and a slow failure's detection).
    double phase(std::uint32_t j) const {
        const JobState& job = jobs_[j];
        if (levels_.empty()) return job.life.phase_end;
        return std::min(std::min(job.life.phase_end, levels_[j].persist_end), levels_[j].slow_until);
    }
    /// j's next event: its phase's, its job-level failure or its time limit.
    double next(std::uint32_t j) const {
        const double next = jobs_[j].clock.next(phase(j));
        // limit_at: inf unless the job runs under a limit.
        return limits_ && limit_at_[j] < next ? limit_at_[j] : next;
    }

    /// Where j's drain checkpoint for a maintenance window starting at
    /// `start` begins: the start less the mean write and the mean persist
    /// (0 without one).
    double drain_point(std::uint32_t j, double start) const {
        const double persist = levels_.empty() ? 0.0 : plans_.levels[j].persist_mean;
        return start - plans_.of(j).save_mean - persist;
    }

private:
    const JobStates& jobs_;
    const Plans& plans_;
    const std::vector<Levels>& levels_;
    const std::vector<double>& limit_at_;
    bool limits_;
};

}  // namespace acesim

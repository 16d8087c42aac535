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
        JobState& s = (*this)[j];
        s.rec->progress = s.life.committed;
        s.rec->checkpoint_interval = s.life.interval;
        if (!keep_) done_now_.push_back(j);
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
    JobState pending_{};
    JobState done_{};
};

}  // namespace acesim

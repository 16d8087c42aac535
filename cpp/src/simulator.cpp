#include "acesim/simulator.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "acesim/analytic.hpp"
#include "acesim/cuda_samplers.hpp"
#include "acesim/event_heap.hpp"
#include "acesim/philox.hpp"
#include "acesim/sampler.hpp"
#include "acesim/single_job.hpp"

namespace acesim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kSecondsPerHour = 3600.0;
/// Bounds the failure trace (about 48 bytes a row) of a run whose failure
/// law strikes faster than jobs can make progress.
constexpr std::size_t kMaxFailuresPerReplica = std::size_t{1} << 25;
/// Heap entities: jobs are 0 .. n-1, nodes carry this bit.
constexpr std::uint32_t kNodeBit = 0x80000000u;

void require(bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
}

/// Like require, but builds the message only on failure (per-job checks run
/// over millions of jobs).
template <class Message>
void require_that(bool ok, Message message) {
    if (!ok) throw std::invalid_argument(message());
}

std::string job_field(std::size_t j, const char* field) { return "jobs[" + std::to_string(j) + "]." + field; }

enum class Phase : std::uint8_t {
    Pending,    // not yet submitted
    Queued,     // in the queue (first start, or again after REQUEUE / preemption)
    Starting,   // init + load (holds hardware)
    Computing,  // holds hardware, progress advances
    Saving,     // checkpoint write (holds hardware)
    Detecting,  // a fault happened; nodes held, no progress, failure clock stopped
    Waiting,    // holds some nodes and waits for the rest after a failure
    Done,
};

constexpr std::size_t kPurposes = 9;

/// Quantities shared by every job of one size and one set of laws (most
/// jobs of a large workload share a handful of these).
struct JobProfile {
    double mtbf;       // mean time to failure for the job's size
    double save_mean;  // mean checkpoint write
    double restart;    // mean init + load
    double young;
    double daly;
};

/// Per-job quantities that do not change between replicas.
struct JobPlan {
    double interval;              // the starting interval
    std::uint32_t nodes;          // nodes the job occupies (1 for jobs smaller than a node)
    std::uint32_t gpus_per_node;  // GPUs it uses on each of them
    std::uint32_t profile;        // index into the JobProfile table
};

/// Plans for every job and the profiles they share.
struct Plans {
    std::vector<JobPlan> jobs;
    std::vector<JobProfile> profiles;
    const JobProfile& of(std::size_t j) const { return profiles[jobs[j].profile]; }
};

/// The nodes a job holds: a slice of one flat array sized by the job's node
/// count (a job never holds more), so jobs cost no allocation of their own.
class NodeList {
public:
    void bind(std::uint32_t* slots) { data_ = slots; }
    std::uint32_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    std::uint32_t back() const { return data_[size_ - 1]; }
    const std::uint32_t* begin() const { return data_; }
    const std::uint32_t* end() const { return data_ + size_; }
    std::uint32_t operator[](std::uint32_t i) const { return data_[i]; }
    void push_back(std::uint32_t n) { data_[size_++] = n; }
    void remove(std::uint32_t n) {
        if (data_[size_ - 1] == n) {  // the common case: releasing from the back
            --size_;
            return;
        }
        std::uint32_t* it = std::find(data_, data_ + size_, n);
        std::copy(it + 1, data_ + size_, it);  // keep the order: the blamed index depends on it
        --size_;
    }

private:
    std::uint32_t* data_ = nullptr;
    std::uint32_t size_ = 0;
};

struct JobState {
    Phase phase = Phase::Pending;
    double phase_start = 0.0;
    double phase_end = 0.0;
    double committed = 0.0;        // progress at the last completed checkpoint
    double boundary = 0.0;         // progress at the next checkpoint
    double interval = 0.0;         // current checkpoint interval
    double segment_compute = 0.0;  // compute of the segment whose checkpoint is being written
    double fault_time = 0.0;
    double lost_work = 0.0;   // rolled back by the last failure
    std::int32_t cause = -1;  // cause of the last failure
    double held_time = 0.0;   // hardware time so far (adaptive MTBF estimate)
    double hold_since = 0.0;
    double run_start = 0.0;   // when the current run (start) began
    bool holding = false;     // the failure clock runs
    double fail_at = kInf;    // wall time of the next job-level failure while holding
    double fail_left = kInf;  // held seconds to it while not holding
    double fail_draw = kInf;  // the inter-failure draw in force
    std::uint32_t version = 0;
    bool started = false;
    bool in_queue = false;
    bool in_waiting = false;
    std::int32_t churn_owner = -1;  // job whose recovery preempted this one
    std::int32_t preempt_for = -1;  // CHECKPOINT_AWARE: preempt for this job at the next checkpoint
    std::uint32_t deferred = 0;     // victims waiting for their checkpoint to give this job nodes
    Replacement decision{};         // the re-placement chosen at its last failure
    std::uint32_t reserved = 0;     // WAIT_REPAIR: nodes reserved, not yet back
    std::uint32_t draws[kPurposes] = {};
    NodeList nodes;
    JobRecord* rec = nullptr;  // the job's output row, filled in place
};

struct NodeState {
    bool in_service = true;
    bool lemon = false;
    bool ever_quarantined = false;
    double down_until = -kInf;
    double quarantined_until = -kInf;
    double next_failure = kInf;
    double fail_draw = kInf;
    std::uint32_t free_gpus = 0;
    std::int32_t pool = -1;  // index into pools_, -1: none
    std::uint32_t pos = 0;   // position in that pool
    std::uint32_t version = 0;
    std::uint32_t draws[kPurposes] = {};
    std::vector<std::uint32_t> jobs;      // jobs placed on it
    std::vector<std::uint32_t> reserved;  // WAIT_REPAIR jobs waiting for it
    std::vector<double> recent;           // failure times inside the quarantine window
};

/// Queue order: priority (high first), then submission, then index.
using QueueKey = std::tuple<std::int64_t, double, std::uint32_t>;

class ReplicaRun {
public:
    ReplicaRun(const SimulationInput& in, const Plans& plans, const std::vector<DistributionView>& views,
               std::uint32_t replica, std::uint64_t max_events, JobRecord* rows, SimulationOutput& out)
        : in_(in),
          fleet_(in.fleet),
          policy_(in.policy),
          plans_(plans.jobs),
          profiles_(plans.profiles),
          views_(views),
          replica_(replica),
          key_(key_from_seed(in.seed)),
          max_events_(max_events),
          gpn_(in.gpus_per_node),
          rows_(rows),
          out_(out) {}

    void run() {
        trace_begin_ = out_.trace.size();
        init_fleet();
        const std::size_t n = in_.jobs.size();
        jobs_.resize(n);
        heap_.reserve(nodes_.size() + 1024);
        if (fleet_.enabled) {
            std::size_t slots = 0;
            for (const JobPlan& p : plans_) slots += p.nodes;
            node_slots_.resize(slots);
        }
        std::size_t slot = 0;
        for (std::uint32_t j = 0; j < n; ++j) {
            const JobSpec& spec = in_.jobs[j];
            JobState& job = jobs_[j];
            if (fleet_.enabled) {
                job.nodes.bind(node_slots_.data() + slot);
                slot += plans_[j].nodes;
            }
            job.rec = rows_ + j;
            *job.rec = JobRecord{};
            job.rec->replica = replica_;
            job.rec->job = j;
            job.rec->gpus = spec.gpus;
            job.rec->priority = spec.priority;
            job.rec->submit = spec.submit;
            job.interval = plans_[j].interval;
            job.phase_end = spec.submit;
            renew_failure_clock(j);
        }
        // Submissions wait in a sorted list, not in the heap, so the heap only
        // holds what is running (it stays small and in cache). At equal
        // times a submission comes first, then by job index.
        std::vector<std::uint32_t> arrivals(n);
        for (std::uint32_t j = 0; j < n; ++j) arrivals[j] = j;
        std::stable_sort(arrivals.begin(), arrivals.end(), [&](std::uint32_t a, std::uint32_t b) {
            return in_.jobs[a].submit < in_.jobs[b].submit;
        });
        std::size_t next_arrival = 0;
        double last = -kInf;
        // Node failure processes never end: the run ends when every job has.
        while (jobs_done_ < n) {
            const bool arrival =
                next_arrival < n &&
                (heap_.empty() || in_.jobs[arrivals[next_arrival]].submit <= heap_.top().time);
            if (!arrival && heap_.empty()) break;
            Event e;
            if (arrival) {
                const std::uint32_t j = arrivals[next_arrival];
                e = Event{in_.jobs[j].submit, 0, j, jobs_[j].version};
                if (e.time > in_.horizon) break;
                ++next_arrival;
            } else {
                e = heap_.top();
                if (e.time > in_.horizon || e.time == kInf) break;  // nothing happens at infinity
                heap_.pop();
            }
            const bool is_node = (e.entity & kNodeBit) != 0;
            const std::uint32_t id = e.entity & ~kNodeBit;
            if (e.version != (is_node ? nodes_[id].version : jobs_[id].version)) continue;  // superseded
            if (++events_ > max_events_) {
                throw std::runtime_error("simulation exceeded max_events=" + std::to_string(max_events_) +
                                         " in replica " + std::to_string(replica_) +
                                         "; a job may never finish under this failure model: set a horizon");
            }
            if (checking_ && e.time < last) throw std::logic_error("invariant: events ran backwards in time");
            last = e.time;
            now_ = e.time;
            if (is_node) {
                handle_node(id, e.time);
            } else {
                handle_job(id);
            }
            if (out_.trace.size() - trace_begin_ > kMaxFailuresPerReplica) {
                throw std::runtime_error("simulation recorded more than " +
                                         std::to_string(kMaxFailuresPerReplica) + " failures in replica " +
                                         std::to_string(replica_) +
                                         "; the failure law's draws are too short for jobs to make progress");
            }
            if (checking_) check_invariants();
        }
        finish();
    }

private:
    // --- random draws -----------------------------------------------------
    Stream stream(EntityKind kind, std::uint32_t id, Purpose purpose) const {
        return Stream{key_, stream_id(kind, id, purpose), replica_};
    }

    double draw_job(std::uint32_t j, Purpose purpose, std::uint32_t dist) {
        return draw(views_[dist], stream(EntityKind::Job, j, purpose),
                    jobs_[j].draws[static_cast<std::size_t>(purpose)]++,
                    static_cast<double>(in_.jobs[j].gpus));
    }

    double draw_node(std::uint32_t n, Purpose purpose, std::uint32_t dist) {
        return draw(views_[dist], stream(EntityKind::Node, n, purpose),
                    nodes_[n].draws[static_cast<std::size_t>(purpose)]++, static_cast<double>(gpn_));
    }

    /// 64 random bits from the next draw of a stream (index or cause picks).
    std::uint64_t bits(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t* counters) {
        const Block b = stream(kind, id, purpose).block(counters[static_cast<std::size_t>(purpose)]++, 0);
        return lo64(b);
    }

    std::int32_t draw_cause(EntityKind kind, std::uint32_t id, std::uint32_t* counters) {
        if (in_.causes.empty()) return -1;
        const double u = uniform_open(bits(kind, id, Purpose::Cause, counters)) * cause_total_;
        double cumulative = 0.0;
        for (std::size_t c = 0; c + 1 < in_.causes.size(); ++c) {
            cumulative += in_.causes[c].share;
            if (u < cumulative) return static_cast<std::int32_t>(c);
        }
        return static_cast<std::int32_t>(in_.causes.size() - 1);
    }

    double draw_detect(std::int32_t cause, EntityKind kind, std::uint32_t id) {
        if (cause < 0) return 0.0;
        const std::uint32_t dist = in_.causes[cause].detect;
        if (dist == kNoDistribution) return 0.0;
        if (kind == EntityKind::Job) return draw_job(id, Purpose::Detect, dist);
        return draw_node(id, Purpose::Detect, dist);
    }

    void renew_failure_clock(std::uint32_t j) {
        JobState& job = jobs_[j];
        const std::uint32_t law = job_failure_law(in_, j);
        job.fail_draw = law == kNoDistribution ? kInf : draw_job(j, Purpose::Failure, law);
        job.fail_left = job.fail_draw;
    }

    double node_gap(std::uint32_t n) {
        const std::uint32_t law =
            fleet_.node_failure_laws.empty() ? fleet_.node_failures : fleet_.node_failure_laws[n];
        if (law == kNoDistribution) return kInf;
        const double x = draw_node(n, Purpose::Failure, law);
        // Per-node laws (a replayed trace) are taken as they are.
        return nodes_[n].lemon && fleet_.node_failure_laws.empty() ? x / fleet_.lemon_factor : x;
    }

    // --- fleet set-up and pools --------------------------------------------
    void init_fleet() {
        cause_total_ = 0.0;
        for (const CauseSpec& c : in_.causes) cause_total_ += c.share;
        if (!fleet_.enabled) return;
        nodes_.resize(fleet_.nodes);
        pools_.assign(gpn_ + 2, {});
        spare_pool_ = gpn_ + 1;
        for (std::uint32_t n = 0; n < fleet_.nodes; ++n) {
            NodeState& node = nodes_[n];
            node.free_gpus = gpn_;
            if (fleet_.lemon_fraction > 0.0) {
                node.lemon = uniform_open(bits(EntityKind::Node, n, Purpose::Lemon, node.draws)) <
                             fleet_.lemon_fraction;
            }
            // The last `spares` nodes start as hot spares.
            pool_add(n, n >= fleet_.nodes - fleet_.spares ? spare_pool_ : gpn_);
            node.fail_draw = node_gap(n);
            node.next_failure = node.fail_draw;
            if (node.next_failure < kInf) schedule_node(n);
        }
    }

    void pool_add(std::uint32_t n, std::uint32_t p) {
        NodeState& node = nodes_[n];
        node.pool = static_cast<std::int32_t>(p);
        node.pos = static_cast<std::uint32_t>(pools_[p].size());
        pools_[p].push_back(n);
    }

    void pool_remove(std::uint32_t n) {
        NodeState& node = nodes_[n];
        if (node.pool < 0) return;
        auto& pool = pools_[node.pool];
        const std::uint32_t last = pool.back();
        pool[node.pos] = last;
        nodes_[last].pos = node.pos;
        pool.pop_back();
        node.pool = -1;
    }

    /// Puts a node where it belongs: spare pool (refilled first), the pool
    /// of its free GPU count, or none (out of service, reserved or full).
    void repool(std::uint32_t n) {
        pool_remove(n);
        NodeState& node = nodes_[n];
        if (!node.in_service || !node.reserved.empty() || node.free_gpus == 0) return;
        if (node.free_gpus == gpn_ && node.jobs.empty() && pools_[spare_pool_].size() < fleet_.spares) {
            pool_add(n, spare_pool_);
        } else {
            pool_add(n, node.free_gpus);
        }
    }

    void attach(std::uint32_t j, std::uint32_t n) {
        NodeState& node = nodes_[n];
        node.jobs.push_back(j);
        node.free_gpus -= plans_[j].gpus_per_node;
        jobs_[j].nodes.push_back(n);
        repool(n);
    }

    void detach(std::uint32_t j, std::uint32_t n) {
        NodeState& node = nodes_[n];
        node.jobs.erase(std::find(node.jobs.begin(), node.jobs.end(), j));
        node.free_gpus += plans_[j].gpus_per_node;
        jobs_[j].nodes.remove(n);
        repool(n);
    }

    void release_all(std::uint32_t j) {
        while (!jobs_[j].nodes.empty()) detach(j, jobs_[j].nodes.back());
    }

    std::uint32_t missing(std::uint32_t j) const {
        return plans_[j].nodes - static_cast<std::uint32_t>(jobs_[j].nodes.size()) - jobs_[j].reserved;
    }

    /// Takes the nodes a job lacks, all or nothing. Starts from the queue use
    /// free nodes (chosen by the placement callback when there is one);
    /// recovering jobs (spares_first) take hot spares first.
    bool acquire(std::uint32_t j, bool spares_first) {
        if (!fleet_.enabled) return true;
        const std::uint32_t need = missing(j);
        if (need == 0) return true;
        const std::uint32_t used = plans_[j].gpus_per_node;
        if (!spares_first)
            return policy_.place ? place_outside(j, need, used) : acquire_builtin(j, need, used);
        if (used < gpn_) {
            // A job smaller than a node: best fit among partly free nodes.
            for (std::uint32_t k = used; k <= gpn_; ++k) {
                if (!pools_[k].empty()) {
                    attach(j, pools_[k].back());
                    return true;
                }
            }
            if (!pools_[spare_pool_].empty()) {
                ++spare_uses_;
                attach(j, pools_[spare_pool_].back());
                return true;
            }
            return false;
        }
        if (pools_[gpn_].size() + pools_[spare_pool_].size() < need) return false;
        for (std::uint32_t k = 0; k < need; ++k) {
            if (!pools_[spare_pool_].empty()) {
                ++spare_uses_;
                attach(j, pools_[spare_pool_].back());
            } else {
                attach(j, pools_[gpn_].back());
            }
        }
        return true;
    }

    /// A start from the queue placed by an outside scheduler (the
    /// placement callback), among the free nodes that fit.
    bool place_outside(std::uint32_t j, std::uint32_t need, std::uint32_t used) {
        std::vector<std::uint32_t> candidates;
        for (std::uint32_t k = used; k <= gpn_; ++k) {
            if (used == gpn_ && k != gpn_) continue;  // whole-node jobs take whole free nodes
            candidates.insert(candidates.end(), pools_[k].begin(), pools_[k].end());
        }
        if (candidates.size() < need) return false;  // cannot start now, whoever chooses
        std::sort(candidates.begin(), candidates.end());
        const PlacementView view{now_, replica_, j, in_.jobs[j].gpus, in_.jobs[j].priority, need, used};
        std::vector<std::uint32_t> chosen;
        if (!policy_.place(view, candidates, chosen)) return acquire_builtin(j, need, used);
        if (chosen.size() != need)
            throw std::invalid_argument("place returned " + std::to_string(chosen.size()) +
                                        " nodes for job " + std::to_string(j) + "; it needs " +
                                        std::to_string(need));
        std::vector<std::uint32_t> sorted = chosen;
        std::sort(sorted.begin(), sorted.end());
        for (std::size_t k = 0; k < sorted.size(); ++k) {
            const bool known = std::binary_search(candidates.begin(), candidates.end(), sorted[k]);
            if (!known || (k > 0 && sorted[k] == sorted[k - 1]))
                throw std::invalid_argument("place returned node " + std::to_string(sorted[k]) +
                                            ", which is not a free node that fits job " + std::to_string(j) +
                                            " (or is given twice)");
        }
        for (std::uint32_t n : chosen) attach(j, n);
        return true;
    }

    /// The built-in choice among free nodes: best fit for a job smaller than
    /// a node, whole free nodes otherwise.
    bool acquire_builtin(std::uint32_t j, std::uint32_t need, std::uint32_t used) {
        if (used < gpn_) {
            for (std::uint32_t k = used; k <= gpn_; ++k) {
                if (!pools_[k].empty()) {
                    attach(j, pools_[k].back());
                    return true;
                }
            }
            return false;
        }
        if (pools_[gpn_].size() < need) return false;
        for (std::uint32_t k = 0; k < need; ++k) attach(j, pools_[gpn_].back());
        return true;
    }

    // --- scheduling ---------------------------------------------------------
    void schedule_job(std::uint32_t j) {
        JobState& job = jobs_[j];
        ++job.version;
        const double next = job.holding ? std::min(job.phase_end, job.fail_at) : job.phase_end;
        heap_.push(next, j, job.version);
    }

    void schedule_node(std::uint32_t n) {
        NodeState& node = nodes_[n];
        ++node.version;
        double next = node.next_failure;
        if (!node.in_service) next = std::min(next, std::max(node.down_until, node.quarantined_until));
        if (next < kInf) heap_.push(next, n | kNodeBit, node.version);
    }

    QueueKey queue_key(std::uint32_t j) const {
        return {-static_cast<std::int64_t>(in_.jobs[j].priority), in_.jobs[j].submit, j};
    }

    void enqueue(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        job.phase = Phase::Queued;
        job.phase_start = t;
        job.in_queue = true;
        queue_.insert(queue_key(j));
    }

    void wait_for_nodes(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        job.phase = Phase::Waiting;
        job.phase_start = t;
        job.in_waiting = true;
        waiting_.insert(queue_key(j));
        log(j, EventKind::Waiting, t);
    }

    /// Hands free capacity out: recovering jobs first (they hold idle nodes and
    /// may take hot spares), then the queue in priority order (never from the
    /// spares). Backfill is greedy within a priority level, but a job that
    /// does not fit holds back every job of lower priority, so small
    /// low-priority jobs cannot starve a large high-priority one.
    void dispatch(double t) {
        if (dispatching_) {
            dispatch_again_ = true;
            return;
        }
        dispatching_ = true;
        do {
            dispatch_again_ = false;
            std::int64_t blocked = std::numeric_limits<std::int64_t>::min();
            for (auto it = waiting_.begin(); it != waiting_.end();) {
                const std::uint32_t j = std::get<2>(*it);
                if (jobs_[j].reserved == 0 && acquire(j, true)) {
                    it = waiting_.erase(it);
                    jobs_[j].in_waiting = false;
                    begin_start(j, t);
                } else {
                    if (jobs_[j].reserved == 0)
                        blocked = std::max<std::int64_t>(blocked, in_.jobs[j].priority);
                    ++it;
                }
            }
            for (auto it = queue_.begin(); it != queue_.end();) {
                if (fleet_.enabled && !capacity_left()) break;
                const std::uint32_t j = std::get<2>(*it);
                if (in_.jobs[j].priority < blocked) break;  // the queue is in priority order
                if (acquire(j, false)) {
                    it = queue_.erase(it);
                    jobs_[j].in_queue = false;
                    begin_start(j, t);
                } else {
                    blocked = std::max<std::int64_t>(blocked, in_.jobs[j].priority);
                    ++it;
                }
            }
        } while (dispatch_again_);
        dispatching_ = false;
    }

    bool capacity_left() const {
        for (std::uint32_t k = 1; k <= gpn_; ++k)
            if (!pools_[k].empty()) return true;
        return false;
    }

    void log(std::uint32_t j, EventKind kind, double t) {
        if (!in_.record_events) return;
        out_.events.push_back({replica_, j, static_cast<std::uint32_t>(kind), 0u, t, jobs_[j].committed});
    }

    // --- failure clock ------------------------------------------------------
    void hold(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (!job.holding) {
            job.holding = true;
            job.hold_since = t;
            job.fail_at = t + job.fail_left;
        }
    }

    void unhold(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (job.holding) {
            job.fail_left = job.fail_at - t;
            job.held_time += t - job.hold_since;
            job.holding = false;
        }
    }

    // --- job lifecycle -------------------------------------------------------
    void handle_job(std::uint32_t j) {
        JobState& job = jobs_[j];
        if (job.holding && job.fail_at < job.phase_end) {
            job_level_failure(j, job.fail_at);
        } else {
            on_phase_end(j, job.phase_end);
        }
    }

    void on_phase_end(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        switch (job.phase) {
            case Phase::Pending:
                log(j, EventKind::Submit, t);
                enqueue(j, t);
                dispatch(t);
                break;
            case Phase::Starting:
                job.rec->overhead += t - job.phase_start;
                charge_restart_churn(j, t - job.phase_start);
                begin_compute(j, t);
                break;
            case Phase::Computing:
                job.segment_compute = t - job.phase_start;
                job.phase = Phase::Saving;
                job.phase_start = t;
                job.phase_end = t + draw_job(j, Purpose::Save, in_.jobs[j].save);
                log(j, EventKind::CheckpointBegin, t);
                schedule_job(j);
                break;
            case Phase::Saving:
                job.rec->productive += job.segment_compute;
                job.rec->ckpt_stall += t - job.phase_start;
                job.segment_compute = 0.0;
                job.committed = job.boundary;
                ++job.rec->checkpoints;
                log(j, EventKind::CheckpointEnd, t);
                if (job.committed >= in_.jobs[j].work) {
                    cancel_deferred_preemption(j);
                    complete(j, t);
                } else if (job.preempt_for >= 0) {
                    const auto by = static_cast<std::uint32_t>(job.preempt_for);
                    cancel_deferred_preemption(j);
                    if (jobs_[by].phase == Phase::Waiting && jobs_[by].in_waiting) {
                        // At its checkpoint nothing is lost: the write is
                        // done and no compute has started.
                        job.phase = Phase::Computing;
                        job.phase_start = t;
                        preempt(j, by, t);
                        dispatch(t);
                    } else {
                        begin_compute(j, t);  // the preemptor no longer needs the nodes
                    }
                } else {
                    begin_compute(j, t);
                }
                break;
            case Phase::Detecting:
                job.rec->detection += t - job.phase_start;
                log(j, EventKind::Detected, t);
                recover(j, t);
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
            job.rec->queue_wait += t - job.phase_start;
        } else {
            if (job.phase == Phase::Waiting || job.phase == Phase::Queued)
                job.rec->recovery_wait += t - job.phase_start;
            ++job.rec->restarts;
        }
        if (in_.jobs[j].rule == IntervalRule::Adaptive) job.interval = adaptive_interval(j);
        const JobSpec& spec = in_.jobs[j];
        const double init = draw_job(j, Purpose::Init, spec.init);
        const double load = draw_job(j, Purpose::Load, spec.load);
        job.phase = Phase::Starting;
        job.phase_start = t;
        job.run_start = t;
        job.phase_end = t + (init + load);
        hold(j, t);
        log(j, EventKind::StartBegin, t);
        schedule_job(j);
    }

    /// Young's interval for the MTBF seen so far, with the model's mean as a
    /// prior worth one failure: (M0 + held time) / (1 + failures).
    double adaptive_interval(std::uint32_t j) const {
        const JobState& job = jobs_[j];
        const JobPlan& plan = plans_[j];
        const JobProfile& profile = profiles_[plan.profile];
        const double prior = std::isfinite(profile.mtbf) ? profile.mtbf : in_.jobs[j].work;
        const double estimate = (prior + job.held_time) / (1.0 + job.rec->failures);
        const double tau = young_interval(profile.save_mean, estimate);
        return std::isfinite(tau) && tau > 0.0 ? std::min(tau, in_.jobs[j].work) : plan.interval;
    }

    void begin_compute(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        job.boundary = std::min(job.committed + job.interval, in_.jobs[j].work);
        job.phase = Phase::Computing;
        job.phase_start = t;
        job.phase_end = t + (job.boundary - job.committed);
        log(j, EventKind::ComputeBegin, t);
        schedule_job(j);
    }

    void complete(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        unhold(j, t);
        job.phase = Phase::Done;
        ++jobs_done_;
        job.rec->completed = true;
        job.rec->end = t;
        log(j, EventKind::Done, t);
        if (fleet_.enabled) {
            release_all(j);
            dispatch(t);
        }
    }

    /// Ends the current phase early (failure or preemption) and returns the
    /// compute it rolls back.
    double interrupt(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        double lost = 0.0;
        switch (job.phase) {
            case Phase::Starting:
                job.rec->overhead += t - job.phase_start;
                charge_restart_churn(j, t - job.phase_start);
                break;
            case Phase::Computing:
                lost = t - job.phase_start;
                job.rec->wasted += lost;
                break;
            case Phase::Saving:
                lost = job.segment_compute + (t - job.phase_start);
                job.rec->wasted += lost;
                job.segment_compute = 0.0;
                break;
            default:
                break;
        }
        unhold(j, t);
        return lost;
    }

    void charge_restart_churn(std::uint32_t j, double overhead) {
        JobState& job = jobs_[j];
        if (job.churn_owner < 0) return;
        jobs_[job.churn_owner].rec->churn_gpu_hours += in_.jobs[j].gpus * overhead / kSecondsPerHour;
        job.churn_owner = -1;
    }

    bool running(const JobState& job) const {
        return job.phase == Phase::Starting || job.phase == Phase::Computing || job.phase == Phase::Saving;
    }

    // --- failures -------------------------------------------------------------
    void job_level_failure(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        const double drawn = job.fail_draw;
        const std::uint32_t span = fleet_.enabled ? job.nodes.size() : plans_[j].nodes;
        const auto local = static_cast<std::uint32_t>(
            bounded_index(bits(EntityKind::Job, j, Purpose::Blame, job.draws), std::max(span, 1u)));
        const std::int32_t cause = draw_cause(EntityKind::Job, j, job.draws);
        const double detect = draw_detect(cause, EntityKind::Job, j);
        const std::uint32_t event = next_event_++;
        if (!fleet_.enabled) {
            out_.trace.push_back({replica_, event, static_cast<std::int32_t>(j),
                                  static_cast<std::int32_t>(local), -1, cause, 0u, 0u, t, drawn});
            fault(j, t, detect, cause);
            return;
        }
        const std::uint32_t blamed = job.nodes[local];
        strike(event, blamed, -1, cause, 0u, t, drawn, detect, static_cast<std::int32_t>(j));
    }

    void handle_node(std::uint32_t n, double t) {
        NodeState& node = nodes_[n];
        if (node.next_failure <= t) {
            const double drawn = node.fail_draw;
            // The node's failure process is a renewal in wall-clock time that
            // no policy changes: the same trace under every policy.
            node.fail_draw = node_gap(n);
            node.next_failure = t + node.fail_draw;
            const std::int32_t cause = draw_cause(EntityKind::Node, n, node.draws);
            const double detect = draw_detect(cause, EntityKind::Node, n);
            strike(next_event_++, n, static_cast<std::int32_t>(n), cause, 1u, t, drawn, detect, -1);
        } else if (!node.in_service && t >= node.down_until && t >= node.quarantined_until) {
            return_to_service(n, t);
        }
        schedule_node(n);
    }

    /// One failure event on `node` (and its block for multi-node causes):
    /// every job on the affected nodes faults; nodes go to repair.
    void strike(std::uint32_t event, std::uint32_t node, std::int32_t origin, std::int32_t cause,
                std::uint32_t source, double t, double drawn, double detect, std::int32_t blamed_job) {
        const CauseSpec* spec = cause >= 0 ? &in_.causes[cause] : nullptr;
        const bool down = spec ? spec->node_down : true;
        const std::uint32_t width = spec ? std::max(spec->nodes, 1u) : 1u;
        const std::uint32_t first = (node / width) * width;
        const std::uint32_t last = std::min(first + width, fleet_.nodes);
        hit_.clear();
        auto hit_job = [&](std::uint32_t j, std::uint32_t m) {
            if (std::find(hit_.begin(), hit_.end(), j) != hit_.end()) return;
            hit_.push_back(j);
            out_.trace.push_back({replica_, event, static_cast<std::int32_t>(j), static_cast<std::int32_t>(m),
                                  origin, cause, source, 0u, t, drawn});
            fault(j, t, detect, cause);
        };
        if (blamed_job >= 0) hit_job(static_cast<std::uint32_t>(blamed_job), node);
        for (std::uint32_t m = first; m < last; ++m) {
            NodeState& ns = nodes_[m];
            ++node_failures_;
            const std::vector<std::uint32_t> on = ns.jobs;  // fault() may detach
            if (on.empty() && !(blamed_job >= 0 && m == node)) {
                out_.trace.push_back(
                    {replica_, event, -1, static_cast<std::int32_t>(m), origin, cause, source, 0u, t, drawn});
            }
            for (std::uint32_t j : on) hit_job(j, m);
            if (down)
                take_down(
                    m, t,
                    t + detect +
                        (fleet_.repair == kNoDistribution ? 0.0
                                                          : draw_node(m, Purpose::Repair, fleet_.repair)));
            note_failure_for_quarantine(m, t);
            // A job that was waiting while holding this node now lacks it.
            for (std::uint32_t j : std::vector<std::uint32_t>(ns.jobs)) {
                if (jobs_[j].phase == Phase::Waiting && !ns.in_service) lose_waiting_node(j, m);
            }
        }
    }

    /// A job's hardware faulted at t: progress rolls back now; it notices
    /// after `detect` seconds.
    void fault(std::uint32_t j, double t, double detect, std::int32_t cause) {
        JobState& job = jobs_[j];
        if (!running(job)) return;  // detecting already, waiting, queued or done
        cancel_deferred_preemption(j);
        job.lost_work = interrupt(j, t);
        job.cause = cause;
        ++job.rec->failures;
        log(j, EventKind::Failure, t);
        renew_failure_clock(j);
        job.fault_time = t;
        job.phase = Phase::Detecting;
        job.phase_start = t;
        job.phase_end = t + detect;
        if (detect == 0.0 && !fleet_.enabled) {
            on_phase_end(j, t);  // seen at once and nothing to wait for
        } else {
            schedule_job(j);
        }
    }

    void take_down(std::uint32_t m, double t, double until) {
        NodeState& node = nodes_[m];
        const double from = std::max(t, node.down_until);
        if (until > from)
            down_node_hours_ +=
                (std::min(until, in_.horizon) - std::min(from, in_.horizon)) / kSecondsPerHour;
        node.down_until = std::max(node.down_until, until);
        if (node.in_service) {
            node.in_service = false;
            pool_remove(m);
        }
        schedule_node(m);
    }

    void note_failure_for_quarantine(std::uint32_t m, double t) {
        const QuarantineSpec& q = policy_.quarantine;
        if (!q.enabled) return;
        NodeState& node = nodes_[m];
        node.recent.push_back(t);
        node.recent.erase(std::remove_if(node.recent.begin(), node.recent.end(),
                                         [&](double f) { return f < t - q.window; }),
                          node.recent.end());
        if (node.recent.size() < q.failures) return;
        node.recent.clear();
        ++quarantines_;
        if (!node.ever_quarantined) {
            node.ever_quarantined = true;
            ++quarantined_nodes_;
        }
        const double until = t + q.duration;
        const double from = std::max(t, node.quarantined_until);
        if (until > from)
            quarantined_node_hours_ +=
                (std::min(until, in_.horizon) - std::min(from, in_.horizon)) / kSecondsPerHour;
        node.quarantined_until = std::max(node.quarantined_until, until);
        if (node.in_service) {
            node.in_service = false;
            pool_remove(m);
        }
        schedule_node(m);
    }

    void return_to_service(std::uint32_t n, double t) {
        NodeState& node = nodes_[n];
        node.in_service = true;
        // WAIT_REPAIR jobs get their node back first.
        const std::vector<std::uint32_t> reserved = std::move(node.reserved);
        node.reserved.clear();
        for (std::uint32_t j : reserved) {
            JobState& job = jobs_[j];
            --job.reserved;
            attach(j, n);
            if (job.reserved == 0 && missing(j) == 0 && job.phase == Phase::Waiting) {
                if (job.in_waiting) {
                    waiting_.erase(queue_key(j));
                    job.in_waiting = false;
                }
                begin_start(j, t);
            } else if (job.reserved == 0 && job.phase == Phase::Waiting && !job.in_waiting) {
                job.in_waiting = true;
                waiting_.insert(queue_key(j));
            }
        }
        repool(n);
        dispatch(t);
    }

    void lose_waiting_node(std::uint32_t j, std::uint32_t m) {
        detach(j, m);
        if (jobs_[j].decision == Replacement::WaitRepair) reserve(j, m);
    }

    void reserve(std::uint32_t j, std::uint32_t m) {
        nodes_[m].reserved.push_back(j);
        ++jobs_[j].reserved;
        pool_remove(m);
    }

    // --- recovery ---------------------------------------------------------------
    void recover(std::uint32_t j, double t) {
        JobState& job = jobs_[j];
        if (!fleet_.enabled) {
            begin_start(j, t);
            return;
        }
        std::vector<std::uint32_t> failed;
        double repair_remaining = 0.0;
        for (std::uint32_t n : job.nodes) {
            if (!nodes_[n].in_service) {
                failed.push_back(n);
                repair_remaining = std::max(repair_remaining,
                                            std::max(nodes_[n].down_until, nodes_[n].quarantined_until) - t);
            }
        }
        const Replacement decision =
            decide(j, t, static_cast<std::uint32_t>(failed.size()), repair_remaining);
        job.decision = decision;
        job.phase = Phase::Waiting;  // for the recovery_wait accounting of begin_start
        job.phase_start = t;
        if (decision == Replacement::Requeue) {
            release_all(j);
            enqueue(j, t);
            dispatch(t);
            return;
        }
        if (failed.empty()) {
            begin_start(j, t);  // nothing went down (a software fault): restart in place
            return;
        }
        for (std::uint32_t n : failed) {
            detach(j, n);
            if (decision == Replacement::WaitRepair) reserve(j, n);
        }
        if (decision == Replacement::WaitRepair) {
            log(j, EventKind::Waiting, t);
            return;  // return_to_service restarts it
        }
        if (acquire(j, true)) {
            begin_start(j, t);
            return;
        }
        wait_for_nodes(j, t);
        if (decision == Replacement::PreemptLower) preempt_lower(j, t);
        dispatch(t);
    }

    Replacement decide(std::uint32_t j, double t, std::uint32_t failed, double repair_remaining) {
        if (!policy_.on_failure && !policy_.compiled) return policy_.replacement;
        const JobState& job = jobs_[j];
        acesim_failure_view view{};
        view.time = t;
        view.fault_time = job.fault_time;
        view.progress = job.committed;
        view.work = in_.jobs[j].work;
        view.lost_work = job.lost_work;
        view.repair_remaining = repair_remaining;
        view.replica = replica_;
        view.job = j;
        view.gpus = in_.jobs[j].gpus;
        view.priority = in_.jobs[j].priority;
        view.failures = job.rec->failures;
        view.cause = job.cause;
        view.nodes_held = job.nodes.size() - failed;
        view.nodes_needed = failed;
        view.free_nodes = static_cast<std::uint32_t>(pools_[gpn_].size());
        view.spare_nodes = static_cast<std::uint32_t>(pools_[spare_pool_].size());
        std::uint32_t down = 0, quarantined = 0;
        for (const NodeState& n : nodes_) {
            if (n.in_service) continue;
            if (t < n.quarantined_until)
                ++quarantined;
            else
                ++down;
        }
        view.down_nodes = down;
        view.quarantined_nodes = quarantined;
        std::uint32_t preemptible = 0;
        for (std::uint32_t k = 0; k < jobs_.size(); ++k) {
            if (running(jobs_[k]) && in_.jobs[k].priority < in_.jobs[j].priority &&
                plans_[k].gpus_per_node == gpn_)
                preemptible += jobs_[k].nodes.size();
        }
        view.preemptible_nodes = preemptible;
        const std::int32_t choice =
            policy_.compiled ? policy_.compiled(&view, policy_.compiled_user_data) : policy_.on_failure(view);
        if (choice == ACESIM_DEFAULT) return policy_.replacement;
        if (choice < 0 || choice > 3)
            throw std::invalid_argument("on_failure returned " + std::to_string(choice) +
                                        "; expected a Replacement (0-3) or None");
        return static_cast<Replacement>(choice);
    }

    /// A victim marked for preemption at its next checkpoint no longer is
    /// (it reached the checkpoint, finished or failed first).
    void cancel_deferred_preemption(std::uint32_t v) {
        JobState& victim = jobs_[v];
        if (victim.preempt_for < 0) return;
        --jobs_[victim.preempt_for].deferred;
        victim.preempt_for = -1;
    }

    /// PREEMPT_LOWER: frees nodes held by running lower-priority whole-node
    /// jobs for job j (or marks victims to give them at their next checkpoint).
    void preempt_lower(std::uint32_t j, double t) {
        std::uint32_t need = missing(j);
        if (need == 0 || jobs_[j].deferred > 0) return;
        struct Candidate {
            double cost;
            std::int32_t priority;
            double started;
            std::uint32_t job;
            bool defer;
        };
        std::vector<Candidate> candidates;
        const std::int32_t priority = in_.jobs[j].priority;
        for (std::uint32_t k = 0; k < jobs_.size(); ++k) {
            const JobState& v = jobs_[k];
            if (!running(v) || v.preempt_for >= 0 || in_.jobs[k].priority >= priority ||
                plans_[k].gpus_per_node != gpn_)
                continue;
            double lost = 0.0;
            if (v.phase == Phase::Computing) lost = t - v.phase_start;
            if (v.phase == Phase::Saving) lost = v.segment_compute + (t - v.phase_start);
            const double until_checkpoint = v.phase == Phase::Saving      ? v.phase_end - t
                                            : v.phase == Phase::Computing ? v.phase_end - t
                                                                          : kInf;
            const bool defer = policy_.preemption == Preemption::CheckpointAware &&
                               policy_.preemption_grace > 0.0 && until_checkpoint <= policy_.preemption_grace;
            candidates.push_back(
                {defer ? 0.0 : lost * in_.jobs[k].gpus, in_.jobs[k].priority, v.run_start, k, defer});
        }
        if (policy_.preemption == Preemption::CheckpointAware) {
            std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
                return std::tie(a.cost, a.priority, a.job) < std::tie(b.cost, b.priority, b.job);
            });
        } else {
            std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
                return std::make_tuple(a.priority, -a.started, a.job) <
                       std::make_tuple(b.priority, -b.started, b.job);
            });
        }
        std::uint32_t available = 0;
        std::size_t take = 0;
        while (take < candidates.size() && available < need)
            available += plans_[candidates[take++].job].nodes;
        if (available < need) return;  // not enough even with every candidate: keep waiting
        for (std::size_t c = 0; c < take; ++c) {
            const Candidate& v = candidates[c];
            if (v.defer) {
                jobs_[v.job].preempt_for = static_cast<std::int32_t>(j);
                ++jobs_[j].deferred;
            } else {
                preempt(v.job, j, t);
            }
        }
    }

    void preempt(std::uint32_t v, std::uint32_t by, double t) {
        JobState& victim = jobs_[v];
        const double lost = interrupt(v, t);
        jobs_[by].rec->churn_gpu_hours += in_.jobs[v].gpus * lost / kSecondsPerHour;
        victim.churn_owner = static_cast<std::int32_t>(by);
        ++victim.rec->preemptions;
        ++victim.version;  // its pending phase end is void
        log(v, EventKind::Preempted, t);
        release_all(v);
        enqueue(v, t);
        // The preemptor takes the freed nodes before anyone else.
        JobState& job = jobs_[by];
        if (job.phase == Phase::Waiting && job.in_waiting && job.reserved == 0 && acquire(by, true)) {
            waiting_.erase(queue_key(by));
            job.in_waiting = false;
            begin_start(by, t);
        }
    }

    // --- invariants -------------------------------------------------------------
    void check_invariants() const {
        if (!fleet_.enabled) return;
        std::vector<std::uint32_t> used(nodes_.size(), 0);
        for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
            for (std::uint32_t n : jobs_[j].nodes) {
                const auto& on = nodes_[n].jobs;
                if (std::count(on.begin(), on.end(), j) != 1)
                    throw std::logic_error("invariant: job " + std::to_string(j) + " holds node " +
                                           std::to_string(n) + " that does not list it");
                used[n] += plans_[j].gpus_per_node;
            }
            if (jobs_[j].phase == Phase::Done && !jobs_[j].nodes.empty())
                throw std::logic_error("invariant: finished job still holds nodes");
        }
        for (std::uint32_t p = 0; p < pools_.size(); ++p) {
            for (std::uint32_t k = 0; k < pools_[p].size(); ++k) {
                const NodeState& node = nodes_[pools_[p][k]];
                if (node.pool != static_cast<std::int32_t>(p) || node.pos != k)
                    throw std::logic_error("invariant: pool bookkeeping");
            }
        }
        for (std::uint32_t n = 0; n < nodes_.size(); ++n) {
            const NodeState& node = nodes_[n];
            if (used[n] + node.free_gpus != gpn_)
                throw std::logic_error("invariant: node " + std::to_string(n) + " GPUs do not add up");
            for (std::uint32_t j : node.jobs) {
                if (std::count(jobs_[j].nodes.begin(), jobs_[j].nodes.end(), n) != 1)
                    throw std::logic_error("invariant: node " + std::to_string(n) +
                                           " lists a job that does not hold it");
            }
            const bool pooled = node.pool >= 0;
            if (pooled && (!node.in_service || !node.reserved.empty()))
                throw std::logic_error("invariant: node " + std::to_string(n) +
                                       " is in a pool while out of service");
            if (pooled && node.pool == static_cast<std::int32_t>(spare_pool_) && !node.jobs.empty())
                throw std::logic_error("invariant: a hot spare runs a job");
            if (node.in_service && node.reserved.empty() && node.free_gpus > 0 && !pooled)
                throw std::logic_error("invariant: free node " + std::to_string(n) + " is in no pool");
            if (!node.reserved.empty() && node.in_service)
                throw std::logic_error("invariant: node reserved while in service");
        }
    }

    // --- horizon and rollup -----------------------------------------------------
    void finish() {
        FleetRecord fleet{};
        fleet.replica = replica_;
        fleet.jobs = static_cast<std::uint32_t>(jobs_.size());
        fleet.events = events_;
        fleet.node_failures = node_failures_;
        fleet.quarantines = quarantines_;
        fleet.quarantined_nodes = quarantined_nodes_;
        fleet.spare_uses = spare_uses_;
        fleet.quarantined_node_hours = quarantined_node_hours_;
        fleet.down_node_hours = down_node_hours_;
        const double horizon = in_.horizon;
        double makespan = 0.0;
        for (std::uint32_t j = 0; j < jobs_.size(); ++j) {
            JobState& job = jobs_[j];
            JobRecord& r = *job.rec;
            double progress = job.committed;
            if (job.phase != Phase::Done) {
                // At the horizon nothing is lost yet: compute since the last
                // checkpoint is productive, a write in progress is ckpt_stall.
                const double t = std::max(horizon, in_.jobs[j].submit);
                const double elapsed = t - job.phase_start;
                switch (job.phase) {
                    case Phase::Queued:
                        (job.started ? r.recovery_wait : r.queue_wait) += elapsed;
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
            r.checkpoint_interval = job.interval;
            const JobProfile& profile = profiles_[plan.profile];
            r.mtbf = profile.mtbf;
            r.young_interval = profile.young;
            r.daly_interval = profile.daly;
            r.expected_ettr = expected_ettr_exponential(profile.mtbf, in_.jobs[j].work, plan.interval,
                                                        profile.save_mean, profile.restart);
            r.expected_waste = 1.0 - r.expected_ettr;

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
            if (checking_) {
                const double sum = r.productive + r.wasted + r.ckpt_stall + r.overhead + r.detection +
                                   r.queue_wait + r.recovery_wait;
                if (std::abs(sum - r.wall) > 1e-9 * std::max(1.0, std::abs(r.wall)) && std::isfinite(r.wall))
                    throw std::logic_error("invariant: accounting does not add up for job " +
                                           std::to_string(j));
            }
        }
        fleet.makespan = makespan;
        fleet.ettr = fleet.gpu_hours > 0.0 ? fleet.productive_gpu_hours / fleet.gpu_hours
                                           : std::numeric_limits<double>::quiet_NaN();
        out_.fleet.push_back(fleet);
    }

private:
    const SimulationInput& in_;
    const FleetSpec& fleet_;
    const PolicySpec& policy_;
    const std::vector<JobPlan>& plans_;
    const std::vector<JobProfile>& profiles_;
    const std::vector<DistributionView>& views_;
    std::uint32_t replica_;
    Key key_;
    std::uint64_t max_events_;
    std::uint32_t gpn_;
    JobRecord* rows_;
    SimulationOutput& out_;
    // A debug build (ACESIM_DEBUG_INVARIANTS=ON) checks every run.
#ifdef ACESIM_CHECK_INVARIANTS
    const bool checking_ = true;
#else
    const bool checking_ = in_.check_invariants;
#endif
    std::vector<JobState> jobs_;
    std::vector<std::uint32_t> node_slots_;
    std::vector<NodeState> nodes_;
    std::vector<std::vector<std::uint32_t>> pools_;
    std::uint32_t spare_pool_ = 0;
    std::set<QueueKey> queue_;
    std::set<QueueKey> waiting_;
    std::vector<std::uint32_t> hit_;
    EventHeap heap_;
    double cause_total_ = 0.0;
    bool dispatching_ = false;
    bool dispatch_again_ = false;
    std::uint64_t events_ = 0;
    std::size_t trace_begin_ = 0;
    std::uint32_t next_event_ = 0;
    std::size_t jobs_done_ = 0;
    double now_ = 0.0;
    std::uint32_t node_failures_ = 0;
    std::uint32_t quarantines_ = 0;
    std::uint32_t quarantined_nodes_ = 0;
    std::uint32_t spare_uses_ = 0;
    double quarantined_node_hours_ = 0.0;
    double down_node_hours_ = 0.0;
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
    require(in.job_failure_laws.empty() || in.job_failure_laws.size() == in.jobs.size(),
            "failures: one law per job");
    auto check_law = [&](std::uint32_t law) {
        require(law == kNoDistribution || law < nd, "failures: bad distribution index");
        if (law == kNoDistribution) return;
        // A law whose draws are all zero never lets time advance. (ScaleAware
        // factors are positive, so the sign of the mean does not depend on size.)
        const double mean = in.distributions[law].mean(1.0);
        require(mean > 0.0, "failures must have a mean > 0 (got " + std::to_string(mean) + ")");
    };
    check_law(in.job_failures);
    for (std::uint32_t law : in.job_failure_laws) check_law(law);
    double share = 0.0;
    for (std::size_t c = 0; c < in.causes.size(); ++c) {
        const CauseSpec& cause = in.causes[c];
        require(std::isfinite(cause.share) && cause.share >= 0.0,
                "causes[" + std::to_string(c) + "].share must be >= 0");
        require(cause.detect == kNoDistribution || cause.detect < nd, "causes: bad distribution index");
        require(cause.nodes >= 1, "causes[" + std::to_string(c) + "].nodes must be >= 1");
        share += cause.share;
    }
    require(in.causes.empty() || share > 0.0, "causes: shares must not all be zero");
    const FleetSpec& f = in.fleet;
    if (f.enabled) {
        require(f.nodes >= 1, "fleet.nodes must be >= 1");
        require(f.nodes <= kMaxEntityId + 1u, "fleet.nodes: at most 2^24 nodes");
        require(f.spares < f.nodes, "fleet.spares must be smaller than fleet.nodes");
        require(f.repair == kNoDistribution || f.repair < nd, "fleet.repair: bad distribution index");
        require(f.node_failures == kNoDistribution || f.node_failures < nd,
                "fleet.node_failures: bad distribution index");
        require(f.node_failure_laws.empty() || f.node_failure_laws.size() == f.nodes,
                "fleet.node_failures: one law per node");
        for (std::uint32_t law : f.node_failure_laws)
            require(law == kNoDistribution || law < nd, "fleet.node_failures: bad distribution index");
        if (f.node_failures != kNoDistribution)
            require(in.distributions[f.node_failures].mean(1.0) > 0.0,
                    "fleet.node_failures must have a mean > 0");
        require(std::isfinite(f.lemon_fraction) && f.lemon_fraction >= 0.0 && f.lemon_fraction <= 1.0,
                "fleet.lemon_fraction must be in [0, 1]");
        require(std::isfinite(f.lemon_factor) && f.lemon_factor > 0.0, "fleet.lemon_factor must be > 0");
    }
    const QuarantineSpec& q = in.policy.quarantine;
    if (q.enabled) {
        require(q.failures >= 1, "quarantine.failures must be >= 1");
        require(!std::isnan(q.window) && q.window >= 0.0, "quarantine.window must be >= 0");
        require(std::isfinite(q.duration) && q.duration >= 0.0,
                "quarantine.duration must be finite and >= 0");
    }
    require(std::isfinite(in.policy.preemption_grace) && in.policy.preemption_grace >= 0.0,
            "policy.preemption_grace must be finite and >= 0");
    const std::uint64_t usable_nodes = f.enabled ? f.nodes - f.spares : 0;
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        const JobSpec& s = in.jobs[j];
        require_that(s.gpus >= 1, [&] { return job_field(j, "gpus") + " must be >= 1"; });
        require_that(std::isfinite(s.work) && s.work > 0.0,
                     [&] { return job_field(j, "work") + " must be finite and > 0"; });
        require_that(std::isfinite(s.submit) && s.submit >= 0.0,
                     [&] { return job_field(j, "submit") + " must be finite and >= 0"; });
        if (s.rule == IntervalRule::Fixed) {
            require_that(std::isfinite(s.checkpoint_interval) && s.checkpoint_interval > 0.0,
                         [&] { return job_field(j, "checkpoint_interval") + " must be finite and > 0"; });
        }
        require_that(s.init < nd && s.save < nd && s.load < nd,
                     [&] { return job_field(j, "init/save/load") + ": bad distribution index"; });
        if (f.enabled) {
            const std::uint64_t need =
                (static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) / in.gpus_per_node;
            require_that(need <= usable_nodes, [&] {
                return job_field(j, "gpus") + " needs " + std::to_string(need) + " nodes; the fleet has " +
                       std::to_string(usable_nodes) + " besides its spares";
            });
        }
    }
}

}  // namespace

double job_mtbf(const SimulationInput& in, std::size_t j) {
    const JobSpec& job = in.jobs[j];
    const double gpus = job.gpus;
    double rate = 0.0;
    const std::uint32_t law = job_failure_law(in, j);
    if (law != kNoDistribution) rate += 1.0 / in.distributions[law].mean(gpus);
    if (in.fleet.enabled && in.fleet.node_failures != kNoDistribution) {
        const double nodes = std::ceil(gpus / in.gpus_per_node);
        const double lemon = 1.0 + in.fleet.lemon_fraction * (in.fleet.lemon_factor - 1.0);
        rate += nodes * lemon / in.distributions[in.fleet.node_failures].mean(in.gpus_per_node);
    }
    return rate > 0.0 ? 1.0 / rate : kInf;
}

namespace {

/// The starting interval of a job under its rule, for its profile.
double interval_for(const JobSpec& job, const JobProfile& profile) {
    if (job.rule == IntervalRule::Fixed) return job.checkpoint_interval;
    if (!std::isfinite(profile.mtbf)) return job.work;  // no failures: one checkpoint at the end
    require(
        profile.save_mean > 0.0,
        "checkpoint_interval: the 'young', 'daly' and 'adaptive' rules need a save latency with mean > 0");
    const double interval = job.rule == IntervalRule::Daly ? profile.daly : profile.young;
    require(std::isfinite(interval) && interval > 0.0,
            "checkpoint_interval: the rule gave no usable interval (" + std::to_string(interval) + ")");
    return std::min(interval, job.work);
}

JobProfile profile_of(const SimulationInput& in, std::size_t j) {
    const JobSpec& s = in.jobs[j];
    const double gpus = s.gpus;
    JobProfile p{};
    p.mtbf = job_mtbf(in, j);
    p.save_mean = in.distributions[s.save].mean(gpus);
    p.restart = in.distributions[s.init].mean(gpus) + in.distributions[s.load].mean(gpus);
    p.young = young_interval(p.save_mean, p.mtbf);
    p.daly = daly_interval(p.save_mean, p.mtbf);
    return p;
}

struct ProfileKey {
    std::uint32_t gpus, save, init, load, law;
    bool operator==(const ProfileKey& o) const {
        return gpus == o.gpus && save == o.save && init == o.init && load == o.load && law == o.law;
    }
};
struct ProfileKeyHash {
    std::size_t operator()(const ProfileKey& k) const {
        std::uint64_t h = k.gpus;
        for (std::uint32_t v : {k.save, k.init, k.load, k.law}) h = h * 0x9E3779B97F4A7C15ull + v;
        return static_cast<std::size_t>(h ^ (h >> 29));
    }
};

/// Per-job quantities shared by the event-heap and the batch paths.
Plans make_plans(const SimulationInput& in) {
    Plans plans;
    plans.jobs.resize(in.jobs.size());
    std::unordered_map<ProfileKey, std::uint32_t, ProfileKeyHash> index;
    for (std::size_t j = 0; j < in.jobs.size(); ++j) {
        const JobSpec& s = in.jobs[j];
        const ProfileKey key{s.gpus, s.save, s.init, s.load, job_failure_law(in, j)};
        auto [it, inserted] = index.try_emplace(key, static_cast<std::uint32_t>(plans.profiles.size()));
        if (inserted) plans.profiles.push_back(profile_of(in, j));
        JobPlan& p = plans.jobs[j];
        p.profile = it->second;
        p.interval = interval_for(s, plans.profiles[p.profile]);
        require_that(segment_count(s.work, p.interval) < 4294967295.0, [&] {
            return job_field(j, "checkpoint_interval") + " gives more than 2^32 checkpoints";
        });
        p.nodes = static_cast<std::uint32_t>((static_cast<std::uint64_t>(s.gpus) + in.gpus_per_node - 1) /
                                             in.gpus_per_node);
        p.gpus_per_node = s.gpus < in.gpus_per_node ? s.gpus : in.gpus_per_node;
    }
    return plans;
}

}  // namespace

namespace {

std::vector<DistributionView> make_views(const SimulationInput& in) {
    std::vector<DistributionView> views;
    views.reserve(in.distributions.size());
    for (const Distribution& d : in.distributions) views.push_back(d.view());
    return views;
}

SingleJobSpec single_job_spec(const SimulationInput& in, const Plans& plans, std::size_t j) {
    const JobSpec& s = in.jobs[j];
    const JobPlan& plan = plans.jobs[j];
    const JobProfile& profile = plans.of(j);
    const std::uint32_t law = job_failure_law(in, j);
    SingleJobSpec spec{};
    spec.work = s.work;
    spec.submit = s.submit;
    spec.interval = plan.interval;
    spec.mtbf = profile.mtbf;
    spec.young = profile.young;
    spec.daly = profile.daly;
    spec.expected_ettr =
        expected_ettr_exponential(profile.mtbf, s.work, plan.interval, profile.save_mean, profile.restart);
    spec.save_mean = profile.save_mean;
    spec.gpus = s.gpus;
    spec.priority = s.priority;
    spec.rule = static_cast<std::uint32_t>(s.rule);
    spec.nodes = plan.nodes;
    spec.init = s.init;
    spec.save = s.save;
    spec.load = s.load;
    spec.failures = law == kNoDistribution ? kNoLaw : law;
    return spec;
}

}  // namespace

SimulationOutput simulate(const SimulationInput& in) {
    validate(in);
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);

    SimulationOutput out;
    out.jobs.resize(in.jobs.size() * static_cast<std::size_t>(in.replicas));
    std::vector<SimulationOutput> per_replica(in.replicas);
    std::vector<std::exception_ptr> errors(in.replicas);
    parallel_for(in.replicas, in.threads, 1, [&](std::uint64_t begin, std::uint64_t end) {
        for (std::uint64_t r = begin; r < end; ++r) {
            try {
                ReplicaRun run(in, plans, views, in.first_replica + static_cast<std::uint32_t>(r), max_events,
                               out.jobs.data() + r * in.jobs.size(), per_replica[r]);
                run.run();
            } catch (...) {
                errors[r] = std::current_exception();
                return;  // later replicas of this thread are not needed
            }
        }
    });
    for (const std::exception_ptr& e : errors)
        if (e) std::rethrow_exception(e);

    std::size_t nt = 0, ne = 0;
    for (const auto& o : per_replica) {
        nt += o.trace.size();
        ne += o.events.size();
    }
    out.trace.reserve(nt);
    out.events.reserve(ne);
    out.fleet.reserve(in.replicas);
    for (auto& o : per_replica) {
        out.fleet.insert(out.fleet.end(), o.fleet.begin(), o.fleet.end());
        out.trace.insert(out.trace.end(), o.trace.begin(), o.trace.end());
        out.events.insert(out.events.end(), o.events.begin(), o.events.end());
        o = SimulationOutput{};
    }
    return out;
}

}  // namespace acesim

namespace acesim {

SimulationOutput simulate_batch(const SimulationInput& in, bool cuda) {
    validate(in);
    require(!in.fleet.enabled, "batch: the single-job model has no fleet");
    require(!in.policy.on_failure && in.policy.compiled == nullptr,
            "batch: the single-job model has no policy");
    const std::uint64_t max_events = in.max_events == 0 ? kDefaultMaxEvents : in.max_events;
    const std::vector<DistributionView> views = make_views(in);
    const Plans plans = make_plans(in);
    std::vector<SingleJobSpec> specs(in.jobs.size());
    for (std::size_t j = 0; j < in.jobs.size(); ++j) specs[j] = single_job_spec(in, plans, j);
    std::vector<double> shares;
    std::vector<std::uint32_t> detect;
    double total = 0.0;
    for (const CauseSpec& c : in.causes) {
        shares.push_back(c.share);
        detect.push_back(c.detect == kNoDistribution ? kNoLaw : c.detect);
        total += c.share;
    }
    const CauseTable causes{shares.data(), detect.data(), static_cast<std::uint32_t>(shares.size()), total};
    const Key key = key_from_seed(in.seed);
    const std::uint64_t count = static_cast<std::uint64_t>(in.jobs.size()) * in.replicas;
    SimulationOutput out;
    out.jobs.resize(count);
    std::vector<std::uint32_t> status(count, kSingleJobOk);
    if (cuda) {
        const BatchRequest request{&in.distributions, &specs,           &shares,     &detect,    total,
                                   in.seed,           in.first_replica, in.replicas, in.horizon, max_events};
        const std::string error = batch_cuda(request, out.jobs.data(), status.data());
        if (!error.empty()) throw std::runtime_error(error);
    } else {
        // A replica of a small job takes about a microsecond: hand out chunks.
        constexpr std::uint64_t kMinRunsPerThread = 256;
        parallel_for(count, in.threads, kMinRunsPerThread, [&](std::uint64_t begin, std::uint64_t end) {
            for (std::uint64_t i = begin; i < end; ++i) {
                const std::uint64_t j = i / in.replicas;
                const std::uint32_t replica = in.first_replica + static_cast<std::uint32_t>(i % in.replicas);
                std::uint64_t events = 0;
                status[i] = run_single_job(specs[j], views.data(), causes, key, replica, 0u, in.horizon,
                                           max_events, out.jobs[i], events);
                out.jobs[i].job = static_cast<std::uint32_t>(j);
            }
        });
    }
    for (std::uint64_t i = 0; i < count; ++i) {
        if (status[i] == kSingleJobMaxEvents)
            throw std::runtime_error("simulation exceeded max_events=" + std::to_string(max_events) +
                                     " in replica " + std::to_string(out.jobs[i].replica) +
                                     "; a job may never finish under this failure model: set a horizon");
        if (status[i] == kSingleJobTooManyFailures)
            throw std::runtime_error("simulation recorded more than " +
                                     std::to_string(kSingleJobMaxFailures) + " failures in replica " +
                                     std::to_string(out.jobs[i].replica) +
                                     "; the failure law's draws are too short for jobs to make progress");
    }
    return out;
}

}  // namespace acesim

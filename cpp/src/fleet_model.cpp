#include "acesim/fleet_model.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "engine/plans.hpp"
#include "engine/replica_engine.hpp"
#include "engine/require.hpp"
#include "input_validation.hpp"

namespace acesim {

using detail::require;
using detail::require_that;

FleetModelCore::FleetModelCore(SimulationInput setup, bool report_checkpoints) : in_(std::move(setup)) {
    require(in_.fleet.enabled, "FleetModel: a fleet is required");
    require(in_.fleet.cold_spares == 0,
            "fleet.cold_spares: cold spares are the built-in scheduler's (a FleetModel's scheduler places "
            "every node itself)");
    require(!in_.policy.on_failure && !in_.policy.place && in_.policy.compiled == nullptr &&
                in_.policy.replacement_delay == kNoDistribution,
            "policy: a FleetModel takes only what belongs to the model (quarantine); placement, "
            "re-placement and preemption are the outside scheduler's");
    require(in_.jobs.empty(), "FleetModel: jobs are submitted one by one");
    in_.replicas = 1;
    in_.threads = 1;
    in_.policy.backfill = Backfill::Greedy;  // (no EASY reservations: the scheduler is outside)
    validate_setup(in_);
    plans_ = std::make_unique<Plans>(make_plans(in_));
    for (const Distribution& d : in_.distributions) views_.push_back(d.view());
    rows_.reserve(64);
    const std::uint64_t max_events = in_.event_limit();
    engine_ = std::make_unique<ReplicaEngine>(in_, *plans_, views_, in_.first_replica, max_events,
                                              rows_.data(), out_);
    engine_->drive_from_outside(report_checkpoints);
}

FleetModelCore::~FleetModelCore() = default;

std::uint32_t FleetModelCore::add_distribution(Distribution d) {
    // A view points into its law's table, which copies and moves of the law
    // share (it does not move with the vector): the others stay valid, and
    // the engine reads views_ through its reference.
    views_.push_back(d.view());
    in_.distributions.push_back(std::move(d));
    return static_cast<std::uint32_t>(in_.distributions.size() - 1);
}

std::uint32_t FleetModelCore::submit(JobSpec spec, JobOptions options,
                                     const std::vector<CheckpointTierSpec>& tiers) {
    require(!closed_, "FleetModel: the model was closed");
    const double now = engine_->now();
    spec.submit = now > 0.0 ? now : 0.0;
    const std::size_t j = in_.jobs.size();
    const std::size_t tiers_before = in_.tiers.size();
    options.tier_first = static_cast<std::uint32_t>(tiers_before);
    options.tier_count = static_cast<std::uint32_t>(tiers.size());
    in_.jobs.push_back(spec);
    in_.job_options.push_back(options);
    in_.tiers.insert(in_.tiers.end(), tiers.begin(), tiers.end());
    try {
        validate_job(in_, j);
        add_plan(*plans_, in_, j);
    } catch (...) {
        in_.jobs.pop_back();
        in_.job_options.pop_back();
        in_.tiers.resize(tiers_before);
        if (plans_->jobs.size() > j) plans_->jobs.pop_back();
        if (plans_->levels.size() > j) plans_->levels.pop_back();
        throw;
    }
    const JobRecord* before = rows_.data();
    rows_.emplace_back();
    if (rows_.data() != before) engine_->rebind_rows(rows_.data());
    return engine_->submit_job();
}

void FleetModelCore::require_job(std::uint32_t job, const char* what) const {
    require(!closed_, "FleetModel: the model was closed");
    require_that(job < in_.jobs.size(), [&] {
        return std::string(what) + ": job " + std::to_string(job) + " does not exist (" +
               std::to_string(in_.jobs.size()) + " submitted)";
    });
}

void FleetModelCore::start(std::uint32_t job, const std::vector<std::uint32_t>& nodes) {
    require_job(job, "start");
    engine_->start_job(job, nodes);
    started_.insert(job);
}

bool FleetModelCore::can_start(std::uint32_t job, const std::vector<std::uint32_t>& nodes) const {
    require_job(job, "start");
    return engine_->can_start(job, nodes);
}

void FleetModelCore::resize(std::uint32_t job, const std::vector<std::uint32_t>& nodes) {
    require_job(job, "resize");
    engine_->resize_job(job, nodes);
    started_.insert(job);
}

void FleetModelCore::stop(std::uint32_t job, std::int32_t for_job) {
    require_job(job, "stop");
    engine_->stop_job(job, for_job);
    started_.erase(job);
}

std::vector<ModelEvent> FleetModelCore::advance(double until, bool whole_instant) {
    require(!closed_, "FleetModel: the model was closed");
    require(!std::isnan(until), "advance: until must be a time (not NaN)");
    require_that(until >= engine_->now(), [&] {
        return "advance: time cannot go backwards (until " + std::to_string(until) + " is before now, " +
               std::to_string(engine_->now()) + ")";
    });
    std::vector<ModelEvent> events = engine_->advance(until, whole_instant);
    note(events);
    return events;
}

void FleetModelCore::note(const std::vector<ModelEvent>& events) {
    for (const ModelEvent& e : events) {
        if (e.kind != ModelEvent::JobDone) continue;
        const auto j = static_cast<std::uint32_t>(e.job);
        started_.erase(j);
        last_nodes_[j] = e.held;
    }
}

double FleetModelCore::now() const { return engine_->now() > 0.0 ? engine_->now() : 0.0; }
double FleetModelCore::peek() { return engine_->peek(); }
std::uint32_t FleetModelCore::jobs() const { return static_cast<std::uint32_t>(in_.jobs.size()); }
std::uint32_t FleetModelCore::nodes() const { return in_.fleet.nodes; }

std::vector<std::uint32_t> FleetModelCore::free_nodes() const {
    std::vector<std::uint32_t> out;
    const NodePool& pool = engine_->pool();
    for (std::uint32_t n = 0; n < pool.size(); ++n) {
        const NodeState& node = pool.node(n);
        if (node.in_service && node.jobs.empty() && node.reserved.empty() && node.acquiring_for < 0)
            out.push_back(n);
    }
    return out;
}

std::uint32_t FleetModelCore::state(std::uint32_t job) const {
    require_job(job, "state");
    const JobState& s = engine_->job(job);
    if (s.slow) return 4;
    switch (s.phase()) {
        case Phase::Queued:
        case Phase::Pending:
            return 0;
        case Phase::Starting:
            return 1;
        case Phase::Computing:
            return 2;
        case Phase::Saving:
        case Phase::PersistWait:
            return 3;
        case Phase::Detecting:
            return 4;
        case Phase::Waiting:
            return 5;
        case Phase::Done:
            return 6;
        case Phase::Reconfiguring:
            return 7;
    }
    return 0;
}

std::vector<std::uint32_t> FleetModelCore::spare_nodes() const {
    std::vector<std::uint32_t> out;
    const NodePool& pool = engine_->pool();
    for (std::uint32_t n = 0; n < pool.size(); ++n)
        if (pool.is_spare(n)) out.push_back(n);
    return out;
}

std::vector<std::uint32_t> FleetModelCore::nodes_of(std::uint32_t job) const {
    require_job(job, "nodes_of");
    const auto last = last_nodes_.find(job);
    if (last != last_nodes_.end()) return last->second;
    const NodeList held = engine_->pool().nodes_of(job);
    return std::vector<std::uint32_t>(held.begin(), held.end());
}

std::vector<std::uint8_t> FleetModelCore::node_states() const {
    require(!closed_, "FleetModel: the model was closed");
    const NodePool& pool = engine_->pool();
    const double t = engine_->now();
    std::vector<std::uint8_t> out(pool.size());
    for (std::uint32_t n = 0; n < pool.size(); ++n) {
        const NodeState& node = pool.node(n);
        NodeCondition c = NodeCondition::Free;
        if (node.retired)
            c = NodeCondition::Retired;
        else if (!node.in_service)
            c = node.quarantined_until > t ? NodeCondition::Quarantined : NodeCondition::Down;
        else if (!node.jobs.empty() || !node.reserved.empty() || node.acquiring_for >= 0)
            c = NodeCondition::Busy;
        else if (pool.is_spare(n))
            c = NodeCondition::Spare;
        out[n] = static_cast<std::uint8_t>(c);
    }
    return out;
}

std::vector<std::uint32_t> FleetModelCore::down_nodes() const {
    require(!closed_, "FleetModel: the model was closed");
    std::vector<std::uint32_t> out = engine_->pool().out_of_service();
    std::sort(out.begin(), out.end());
    return out;
}

std::vector<std::uint32_t> FleetModelCore::running() const {
    require(!closed_, "FleetModel: the model was closed");
    std::vector<std::uint32_t> out;
    for (const std::uint32_t j : started_) {
        const Phase p = engine_->job(j).phase();
        if (p != Phase::Waiting && p != Phase::Done && p != Phase::Queued && p != Phase::Pending) out.push_back(j);
    }
    return out;
}

std::vector<std::uint32_t> FleetModelCore::waiting() const {
    require(!closed_, "FleetModel: the model was closed");
    std::vector<std::uint32_t> out;
    for (const std::uint32_t j : started_)
        if (engine_->job(j).phase() == Phase::Waiting) out.push_back(j);
    return out;
}

std::vector<std::uint32_t> FleetModelCore::queued() const {
    require(!closed_, "FleetModel: the model was closed");
    return engine_->queued();
}

std::uint32_t FleetModelCore::job_nodes(std::uint32_t job) const {
    require_job(job, "job_nodes");
    return plans_->jobs[job].nodes;
}

SimulationOutput FleetModelCore::close() {
    require(!closed_, "FleetModel: the model was closed");
    require(!in_.jobs.empty(), "FleetModel: no job was submitted");
    closed_ = true;
    const double end = std::min(now(), in_.horizon);
    engine_->close(end);
    out_.jobs.assign(rows_.begin(), rows_.end());
    return std::move(out_);
}

}  // namespace acesim

// The checks of a run's input at the front door: each throws
// std::invalid_argument naming the first invalid field (a ValueError in
// Python). simulate(), simulate_batch() and a FleetModel call them before
// anything is run; the engine assumes what they checked.
#pragma once

#include <cstddef>

#include "acesim/simulation_input.hpp"
#include "engine/plans.hpp"

namespace acesim {

/// Throws std::invalid_argument naming the first invalid field of `in`.
void validate(const SimulationInput& in);
/// validate() without the jobs: the fleet, the policy, the causes and the
/// run's options (a FleetModel before any job is submitted).
void validate_setup(const SimulationInput& in);
/// The same for job j alone (a job submitted to a FleetModel).
void validate_job(const SimulationInput& in, std::size_t j);
/// What the single-job model of simulate_batch() has not: a fleet, a
/// policy, time limits, slow failures.
void validate_batch(const SimulationInput& in);

/// Job j's starting interval under its rule for its profile: a rule that
/// gives none that is usable, or an interval that cuts the work into 2^32
/// checkpoints or more, is refused (make_plans, add_plan).
void validate_interval(const SimulationInput& in, std::size_t j, const JobProfile& profile);
/// Job j's checkpoint tiers against its durable checkpoint interval: none
/// may checkpoint less often.
void validate_tier_intervals(const SimulationInput& in, std::size_t j, double interval);

}  // namespace acesim

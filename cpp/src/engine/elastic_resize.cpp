#include "elastic_resize.hpp"

#include <cmath>

namespace acesim {

const Resize& ElasticResize::shrink(std::uint32_t j, double t, bool lost_nodes) {
    // It restarts at once on the nodes it holds (init + load, and a
    // reconfiguration onto fewer nodes) and waits, running, for the rest.
    JobState& job = jobs_[j];
    Levels& L = levels_[j];
    const double held = static_cast<double>(pool_.nodes_of(j).size());
    const double width = std::pow(held / plans_.jobs[j].nodes, in_.options(j).scaling);
    levels_set_rates(job.life, L, *job.rec, t, width, L.slow_rate);
    job.narrow = true;
    job.grow_pending = false;
    if (pool_.reserved(j) == 0 && !scheduler_.waiting(j)) scheduler_.wait(j);
    const std::uint32_t law = in_.options(j).reconfigure;
    double reconfigure = 0.0;
    if (lost_nodes) {
        ledger_.log(j, EventKind::Shrink, t, jobs_[j]);
        if (law != kNoDistribution) reconfigure = job_draws_.law(j, Purpose::Reconfigure, law);
    }
    job.replaced = false;  // it took no new node
    resized_.given_back.clear();
    resized_.restart = true;
    resized_.reconfigure = reconfigure;
    return resized_;
}

const Resize& ElasticResize::resize(std::uint32_t j, const std::vector<std::uint32_t>& nodes, double t,
                                    bool waiting) {
    JobState& job = jobs_[j];
    hold_exactly(pool_, j, nodes, resized_.given_back);
    const JobOptions& options = in_.options(j);
    const JobPlan& plan = plans_.jobs[j];
    Levels& L = levels_[j];
    const double held = static_cast<double>(nodes.size());
    const double width = held < plan.nodes ? std::pow(held / plan.nodes, options.scaling) : 1.0;
    job.narrow = held < plan.nodes;
    job.grow_pending = false;
    const double reconfigure = options.reconfigure == kNoDistribution
                                   ? 0.0
                                   : job_draws_.law(j, Purpose::Reconfigure, options.reconfigure);
    ledger_.log(j, job.narrow ? EventKind::Shrink : EventKind::Grow, t, jobs_[j]);
    resized_.restart = waiting;
    resized_.reconfigure = reconfigure;
    if (waiting) {
        // A restart on these nodes (init + load + the reconfiguration): the engine's.
        levels_set_rates(job.life, L, *job.rec, t, width, L.slow_rate);
    } else {
        levels_pause_compute(job.life, L, *job.rec, t, reconfigure);
        levels_set_rates(job.life, L, *job.rec, t, width, L.slow_rate);
        requests_.job_at(j, due_.next(j));
    }
    return resized_;
}

void ElasticResize::grow(std::uint32_t j, double t) {
    // Whole again: computing, it pauses to reconfigure now; starting or
    // writing, when that ends (before its next compute).
    JobState& job = jobs_[j];
    job.narrow = false;
    job.replaced = false;
    if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
    if (job.life.phase != Phase::Computing) {
        job.grow_pending = true;
        return;
    }
    take_nodes_back(j, t);
}

void ElasticResize::take_nodes_back(std::uint32_t j, double t) {
    JobState& job = jobs_[j];
    Levels& L = levels_[j];
    job.grow_pending = false;
    const std::uint32_t law = in_.options(j).reconfigure;
    levels_pause_compute(job.life, L, *job.rec, t,
                         law == kNoDistribution ? 0.0 : job_draws_.law(j, Purpose::Reconfigure, law));
    levels_set_rates(job.life, L, *job.rec, t, 1.0, L.slow_rate);
    ledger_.log(j, EventKind::Grow, t, jobs_[j]);
    requests_.job_at(j, due_.next(j));
}

void ElasticResize::end_narrow(std::uint32_t j, bool keep_claims) {
    JobState& job = jobs_[j];
    job.narrow = false;
    job.grow_pending = false;
    Levels& L = levels_[j];
    L.width_rate = 1.0;
    L.rate = L.slow_rate;
    if (scheduler_.waiting(j)) scheduler_.stop_waiting(j);
    if (!keep_claims) pool_.drop_claims(j);
}

}  // namespace acesim

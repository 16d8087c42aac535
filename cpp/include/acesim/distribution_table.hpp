// Host-side owner of a distribution table: construction with validation,
// composition (Mixture, ScaleAware), means, and a view for the samplers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "acesim/distributions.hpp"

namespace acesim {

/// An owned, validated distribution tree. Construction throws
/// std::invalid_argument naming the offending parameter.
class Distribution {
public:
    static Distribution constant(double value);
    static Distribution exponential(double mean);
    static Distribution weibull(double shape, double scale);
    static Distribution lognormal(double mu, double sigma);
    static Distribution gamma(double shape, double scale);
    static Distribution mixture(const std::vector<double>& weights,
                                const std::vector<Distribution>& components);
    static Distribution empirical(const std::vector<double>& samples);
    static Distribution block_bootstrap(const std::vector<double>& sequence, std::uint32_t block);
    static Distribution replay(const std::vector<double>& times);
    static Distribution scale_aware(const Distribution& base, double ref_gpus, double exponent);

    /// Expected value for a job of `gpus` GPUs (only ScaleAware reads it);
    /// +inf where the law has no finite mean (a Replay that contains inf).
    double mean(double gpus) const;
    /// Mean of the forward-recurrence law (draw_forward_recurrence) for a job
    /// of `gpus` GPUs: E[X^2] / (2 E[X]); 0 for a law with all of its mass at
    /// 0; mean(gpus) for a tree holding a Replay (whose draws are the plain
    /// ones); +inf where E[X^2] overflows.
    double forward_recurrence_mean(double gpus) const;
    /// Whether the tree holds a Replay anywhere.
    bool has_replay() const;
    /// Whether draws depend on the job size.
    bool scale_dependent() const;
    /// Kind of the root node.
    DistKind kind() const { return nodes_[root_].kind; }

    DistributionView view() const { return {nodes_.data(), data_.data(), links_.data(), root_}; }

    const std::vector<DistNode>& nodes() const { return nodes_; }
    const std::vector<double>& data() const { return data_; }
    const std::vector<std::uint32_t>& links() const { return links_; }
    std::uint32_t root() const { return root_; }

private:
    double mean_of(std::uint32_t node, double gpus) const;
    double second_moment_of(std::uint32_t node, double gpus) const;
    std::uint32_t append(const Distribution& other);  // returns other's root in this table
    static Distribution leaf(DistKind kind, double p0, double p1);
    static Distribution with_data(DistKind kind, const std::vector<double>& values, double p0,
                                  bool running_sums);

    std::vector<DistNode> nodes_;
    std::vector<double> data_;
    std::vector<std::uint32_t> links_;
    std::uint32_t root_ = 0;
};

}  // namespace acesim

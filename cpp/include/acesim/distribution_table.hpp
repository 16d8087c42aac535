// Host-side owner of a distribution table: construction with validation,
// composition (Mixture, ScaleAware), means, and a view for the samplers.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "acesim/distributions.hpp"

namespace acesim {

/// An owned, validated distribution tree. Construction throws
/// std::invalid_argument naming the offending parameter.
///
/// A composite (Mixture, ScaleAware) holds its children by shared reference
/// and lays out its flat table (post-order: the children's tables in turn,
/// then its own payload and node) once, on first use, in one pass over the
/// tree. So a chain of n nested Mixtures costs O(n) to build, not the O(n^2)
/// of copying each child's table into its parent's at every level, and the
/// table is the one that copying gave, node for node.
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
    /// The law as bytes (its table, field by field): two laws with the same
    /// key draw the same numbers, so a table of laws may keep one of them.
    std::string value_key() const;
    /// Whether draws depend on the job size.
    bool scale_dependent() const;
    /// Kind of the root node.
    DistKind kind() const { return composite_ ? composite_->node.kind : table().nodes[0].kind; }

    DistributionView view() const {
        const Table& t = table();
        return {t.nodes.data(), t.data.data(), t.links.data(), t.root};
    }

    const std::vector<DistNode>& nodes() const { return table().nodes; }
    const std::vector<double>& data() const { return table().data; }
    const std::vector<std::uint32_t>& links() const { return table().links; }
    std::uint32_t root() const { return table().root; }

private:
    /// The flat table the samplers read (data and links of equal length, so
    /// one offset indexes a node's payload in both).
    struct Table {
        std::vector<DistNode> nodes;
        std::vector<double> data;
        std::vector<std::uint32_t> links;
        std::uint32_t root = 0;
    };
    /// A composite's own node (its payload offset a relative to `payload`)
    /// and its children, in order.
    struct Composite {
        DistNode node;
        std::vector<double> payload;
        std::vector<Distribution> children;
    };
    /// The table, laid out once and shared by copies.
    struct LazyTable {
        std::once_flag once;
        Table table;
    };

    const Table& table() const;
    void lay_out(Table& out) const;               // appends this tree's table to `out`
    double moment(int order, double gpus) const;  // E[X] (1) or E[X^2] (2) at `gpus`
    static Distribution leaf(DistKind kind, double p0, double p1);
    static Distribution with_data(DistKind kind, const std::vector<double>& values, double p0,
                                  bool running_sums);
    static Distribution composite(DistNode node, std::vector<double> payload,
                                  std::vector<Distribution> children);

    std::shared_ptr<const Composite> composite_;  // null for a leaf
    std::shared_ptr<LazyTable> lazy_ = std::make_shared<LazyTable>();
};

}  // namespace acesim

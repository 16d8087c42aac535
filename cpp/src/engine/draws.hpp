// The random draws of one replica: every entity's streams, keyed by
// (seed, replica, entity, purpose); the n-th draw of a stream is a pure
// function of those and n, so two runs that differ only in policy see the
// same numbers for every entity (common random numbers).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "acesim/distributions.hpp"
#include "acesim/philox.hpp"
#include "acesim/simulator.hpp"

namespace acesim {

/// Draw counters of one entity, one per purpose up to Replace; the purposes
/// of checkpoint levels and elastic jobs (Persist and after) count in the
/// job's Levels, kept only when some job needs them.
constexpr std::size_t kPurposes = 11;
using DrawCounters = std::uint32_t[kPurposes];

class ReplicaDraws {
public:
    ReplicaDraws(std::uint64_t seed, std::uint32_t replica, const std::vector<DistributionView>& views,
                 const std::vector<CauseSpec>& causes)
        : key_(key_from_seed(seed)), replica_(replica), views_(views), causes_(causes) {
        for (const CauseSpec& c : causes) cause_total_ += c.share;
    }

    Stream stream(EntityKind kind, std::uint32_t id, Purpose purpose) const {
        return Stream{key_, stream_id(kind, id, purpose), replica_};
    }

    /// When law `dist` is a finite constant: its value, which every draw
    /// takes whatever the stream and the size (false: it is not one).
    bool constant(std::uint32_t dist, double& x) const {
        const DistributionView& view = views_[dist];
        const DistNode& root = view.nodes[view.root];
        if (root.kind != DistKind::Constant || !std::isfinite(root.p0)) return false;
        x = root.p0;
        return true;
    }

    /// The next draw of law `dist` on an entity's `purpose` stream, for a size of `gpus`.
    double law(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t dist, DrawCounters& counters,
               double gpus) const {
        return law(kind, id, purpose, dist, counters[static_cast<std::size_t>(purpose)], gpus);
    }
    /// The same, for a purpose counted by `counter`. A duration (every
    /// purpose but Failure, where inf means no more failures) must be
    /// finite: a Replay that ran out gives inf, an error naming its role.
    double law(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t dist, std::uint32_t& counter,
               double gpus) const {
        const std::uint32_t n = counter++;
        const double x = draw(views_[dist], stream(kind, id, purpose), n, gpus);
        if (purpose != Purpose::Failure && !std::isfinite(x)) no_value(kind, id, purpose, n, views_[dist]);
        return x;
    }
    /// The next draw if it is finite (the counter moves on); else false and
    /// the counter stays (the draw that law() would refuse).
    bool try_law(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t dist,
                 std::uint32_t& counter, double gpus, double& x) const {
        x = draw(views_[dist], stream(kind, id, purpose), counter, gpus);
        if (!std::isfinite(x)) return false;
        ++counter;
        return true;
    }
    /// The next value of a recorded column (a replayed trace's), inf once it ends.
    double recorded(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t dist,
                    DrawCounters& counters, double gpus) const {
        return draw(views_[dist], stream(kind, id, purpose), counters[static_cast<std::size_t>(purpose)]++,
                    gpus);
    }

    /// The next draw of the forward-recurrence (equilibrium) law of `dist`:
    /// the time to the next event of a renewal process observed at a random
    /// moment. It uses its own sub-blocks, never those of law().
    double forward_recurrence(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t dist,
                              DrawCounters& counters, double gpus) const {
        return draw_forward_recurrence(views_[dist], stream(kind, id, purpose),
                                       counters[static_cast<std::size_t>(purpose)]++, gpus);
    }

    /// 64 random bits from the next draw of a stream (index or cause picks).
    std::uint64_t bits(EntityKind kind, std::uint32_t id, Purpose purpose, DrawCounters& counters) const {
        return lo64(stream(kind, id, purpose).block(counters[static_cast<std::size_t>(purpose)]++, 0));
    }

    /// The cause of a failure, by share (-1 when no taxonomy was given).
    std::int32_t cause(EntityKind kind, std::uint32_t id, DrawCounters& counters) const {
        if (causes_.empty()) return -1;
        const double u = uniform_open(bits(kind, id, Purpose::Cause, counters)) * cause_total_;
        double cumulative = 0.0;
        for (std::size_t c = 0; c + 1 < causes_.size(); ++c) {
            cumulative += causes_[c].share;
            if (u < cumulative) return static_cast<std::int32_t>(c);
        }
        return static_cast<std::int32_t>(causes_.size() - 1);
    }

    /// The detection latency of a failure of `cause` (0: seen at once).
    double detect(std::int32_t cause, EntityKind kind, std::uint32_t id, DrawCounters& counters,
                  double gpus) const {
        if (cause < 0) return 0.0;
        const std::uint32_t dist = causes_[cause].detect;
        if (dist == kNoDistribution) return 0.0;
        return law(kind, id, Purpose::Detect, dist, counters, gpus);
    }

    const CauseSpec* cause_spec(std::int32_t cause) const { return cause >= 0 ? &causes_[cause] : nullptr; }
    std::uint32_t replica() const { return replica_; }

private:
    [[noreturn]] static void no_value(EntityKind kind, std::uint32_t id, Purpose purpose, std::uint32_t n,
                                      const DistributionView& law) {
        static const char* const kRoles[] = {"failure",   "init",           "save",       "load",
                                             "blame",     "cause",          "detection",  "repair",
                                             "lemon",     "repair outcome", "replace",    "persist",
                                             "tier save", "tier load",      "reconfigure"};
        const auto p = static_cast<std::size_t>(purpose);
        const char* role = p < sizeof(kRoles) / sizeof(kRoles[0]) ? kRoles[p] : "duration";
        const char* entity = kind == EntityKind::Node  ? "node "
                             : kind == EntityKind::Job ? "job "
                                                       : "entity ";
        const std::string which = std::string("the ") + role + " law of " + entity + std::to_string(id);
        const DistNode& root = law.nodes[law.root];
        if (root.kind == DistKind::Replay && n < root.b)
            throw std::invalid_argument(which + " drew inf (value " + std::to_string(n) +
                                        " of its Replay): a duration must be finite (a repair that "
                                        "never ends is a retirement: quarantine with duration=inf)");
        throw std::invalid_argument(which + " has no draw " + std::to_string(n) +
                                    " (a Replay of its values ran out: give it more values, or resample "
                                    "them with Empirical)");
    }

    Key key_;
    std::uint32_t replica_;
    const std::vector<DistributionView>& views_;
    const std::vector<CauseSpec>& causes_;
    double cause_total_ = 0.0;
};

}  // namespace acesim

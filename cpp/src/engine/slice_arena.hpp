// The slots that hold the nodes of the jobs holding nodes now (NodePool's
// job-node links): a job's slice, its node count long, is taken when it
// takes its first node and given back when it holds none, for the next job
// of that width. A fleet month runs 1.7M jobs, of which a fraction of a
// percent hold nodes at any moment; a slice for every job cost 4 bytes per
// node of every job (21 MB for that month).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <vector>

namespace acesim {

class SliceArena {
public:
    /// Slices of at most `widest` slots.
    explicit SliceArena(std::uint32_t widest) {
        while ((std::uint64_t{1} << shift_) < widest) ++shift_;
    }

    /// The first slot of a slice of `width` slots (> 0), a freed one of that
    /// width if there is one. Slots never move: pointers to a slice stay
    /// valid while others are taken.
    std::uint32_t take(std::uint32_t width) {
        if (width < free_.size() && !free_[width].empty()) {
            const std::uint32_t first = free_[width].back();
            free_[width].pop_back();
            return first;
        }
        const std::uint64_t chunk = std::uint64_t{1} << shift_;
        if (chunks_.empty() || used_ + width > chunk) {
            if ((chunks_.size() + 1) * chunk > std::numeric_limits<std::uint32_t>::max())
                throw std::invalid_argument(
                    "jobs: the jobs holding nodes at once need more than 2^32 - 1 slots");
            chunks_.push_back(std::make_unique<std::uint32_t[]>(chunk));
            used_ = 0;
        }
        const auto first = static_cast<std::uint32_t>(((chunks_.size() - 1) << shift_) + used_);
        used_ += width;
        return first;
    }
    /// The slice at `first` of `width` slots is free again.
    void give(std::uint32_t first, std::uint32_t width) {
        if (width >= free_.size()) free_.resize(width + 1);
        free_[width].push_back(first);
    }

    std::uint32_t* at(std::uint32_t first) {
        return chunks_[first >> shift_].get() + (first & ((std::uint32_t{1} << shift_) - 1));
    }
    const std::uint32_t* at(std::uint32_t first) const { return const_cast<SliceArena*>(this)->at(first); }

private:
    /// Chunks of 2^shift_ slots (at least 2^16, and at least the widest
    /// slice, which never straddles two).
    std::uint32_t shift_ = 16;
    std::vector<std::unique_ptr<std::uint32_t[]>> chunks_;
    std::uint64_t used_ = 0;                        ///< slots handed out of the last chunk
    std::vector<std::vector<std::uint32_t>> free_;  ///< by width: first slots of freed slices
};

}  // namespace acesim

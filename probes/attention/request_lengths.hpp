#pragma once
// Request lengths of a serving batch and the ways to lay them out: padded to the longest, grouped
// into length buckets, or packed. Pure host code: the padding each layout computes in vain
// follows from the lengths alone.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace clprobe::attention {

// `count` prompt lengths in [min(16, longest), longest], skewed as chat traffic is (most prompts
// short, a few long: log-uniform), deterministic for a seed; the longest is always present.
std::vector<std::uint32_t> skewed_lengths(std::size_t count, std::uint32_t longest, std::uint64_t seed);

// Requests grouped by length: each group is padded to its own longest member.
struct Bucket {
    std::vector<std::size_t> members;  // indices into the lengths
    std::uint32_t extent = 0;          // the longest member's length
};
// `buckets` groups of (nearly) equal size in length order; 1 bucket is the padded batch.
std::vector<Bucket> length_buckets(const std::vector<std::uint32_t>& lengths, std::size_t buckets);

// Fraction of the query-key pairs computed that are padding, when request i is computed at
// extents[i] >= lengths[i].
double padding_fraction(const std::vector<std::uint32_t>& lengths, const std::vector<std::uint32_t>& extents,
                        bool causal);
// Per-request extents of a bucketing (each request padded to its bucket's extent).
std::vector<std::uint32_t> extents_of(const std::vector<std::uint32_t>& lengths, const std::vector<Bucket>& buckets);

}  // namespace clprobe::attention

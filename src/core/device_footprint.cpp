#include "core/device_footprint.hpp"

#include <algorithm>
#include <limits>

namespace clprobe {

namespace {
constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();
}

void Footprint::add(std::uint64_t bytes) {
    total = total > saturated - bytes ? saturated : total + bytes;
    largest = std::max(largest, bytes);
}

std::uint64_t saturating_product(std::initializer_list<std::uint64_t> factors) {
    std::uint64_t p = 1;
    for (std::uint64_t f : factors) {
        if (f == 0) return 0;
        p = p > saturated / f ? saturated : p * f;
    }
    return p;
}

}  // namespace clprobe

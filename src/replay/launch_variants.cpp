#include "replay/launch_variants.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <sstream>

namespace clprobe::replay {

std::string range_text(const std::optional<Range>& r, unsigned work_dim) {
    if (!r) return "NULL";
    std::string out;
    for (unsigned d = 0; d < work_dim; ++d)
        out += (d ? "x" : "") + std::to_string((*r)[d]);
    return out;
}

namespace {

bool fits(const Range& local, unsigned work_dim, const Range& global, const GroupLimits& limits) {
    std::uint64_t total = 1;
    for (unsigned d = 0; d < work_dim; ++d) {
        if (local[d] == 0 || global[d] % local[d] != 0 || local[d] > limits.max_item_sizes[d]) return false;
        total *= local[d];
    }
    return total <= limits.max_group;
}

// The most balanced split of `total` (the multiple times a power of two) over `work_dim`
// dimensions: x starts with the multiple, then each factor of two goes to the smallest dimension
// (the first of equals), so 64 with a multiple of 4 becomes 8x8, and 16 becomes 4x4.
Range balanced(std::uint64_t total, std::uint64_t multiple, unsigned work_dim) {
    Range r{1, 1, 1};
    r[0] = multiple;
    for (std::uint64_t rest = total / multiple; rest > 1; rest /= 2) {
        unsigned smallest = 0;
        for (unsigned d = 1; d < work_dim; ++d)
            if (r[d] < r[smallest]) smallest = d;
        r[smallest] *= 2;
    }
    return r;
}

}  // namespace

std::vector<LocalSizeVariant> local_size_variants(unsigned work_dim, const Range& global,
                                                  const std::optional<Range>& captured, const GroupLimits& limits) {
    std::vector<LocalSizeVariant> out;
    std::vector<std::optional<Range>> seen{captured};
    auto add = [&](const std::optional<Range>& local) {
        if (local && !fits(*local, work_dim, global, limits)) return;
        if (std::find(seen.begin(), seen.end(), local) != seen.end()) return;
        seen.push_back(local);
        out.push_back({local, local ? range_text(local, work_dim) : std::string("NULL (driver's choice)")});
    };
    add(std::nullopt);
    const std::uint64_t multiple = std::max<std::uint64_t>(1, limits.preferred_multiple);
    for (std::uint64_t total = multiple; total <= limits.max_group; total *= 2) {
        Range along_x{1, 1, 1};
        along_x[0] = total;
        add(along_x);
        if (work_dim > 1) add(balanced(total, multiple, work_dim));
        if (total > limits.max_group / 2) break;  // no overflow of the doubling
    }
    return out;
}

std::vector<std::string> build_option_variants(const std::string& captured_options) {
    std::istringstream words(captured_options);
    std::vector<std::string> present;
    for (std::string w; words >> w;)
        present.push_back(w);
    std::vector<std::string> out;
    for (const char* option : {"-cl-mad-enable", "-cl-no-signed-zeros", "-cl-finite-math-only",
                               "-cl-unsafe-math-optimizations", "-cl-fast-relaxed-math"})
        if (std::find(present.begin(), present.end(), option) == present.end()) out.emplace_back(option);
    return out;
}

std::uint64_t replay_flags(std::uint64_t captured) {
    std::uint64_t f = captured & ~(mem_copy_host_ptr | mem_host_access_bits);
    if (f & mem_use_host_ptr) f = (f & ~mem_use_host_ptr) | mem_alloc_host_ptr;
    return f;
}

std::vector<PlacementVariant> placement_variants(const std::vector<CapturedArg>& args,
                                                 const std::vector<bool>& unchanged) {
    std::vector<PlacementVariant> out;
    PlacementVariant read_only{"read-only inputs (CL_MEM_READ_ONLY)", {}};
    PlacementVariant host{"host-visible (CL_MEM_ALLOC_HOST_PTR)", {}};
    bool read_only_differs = false, host_differs = false;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const auto& a = args[i];
        const std::uint64_t base = a.kind == ArgKind::buffer ? replay_flags(a.flags) : 0;
        std::uint64_t ro = base, hv = base;
        if (a.kind == ArgKind::buffer) {
            const bool read_write = (base & (mem_read_only | mem_write_only)) == 0;  // 0 means READ_WRITE
            if (read_write && i < unchanged.size() && unchanged[i]) {
                ro = (base & ~mem_read_write) | mem_read_only;
                read_only_differs = true;
            }
            if (!(base & mem_alloc_host_ptr)) {
                hv = base | mem_alloc_host_ptr;
                host_differs = true;
            }
        }
        read_only.flags.push_back(ro);
        host.flags.push_back(hv);
    }
    if (read_only_differs) out.push_back(std::move(read_only));
    if (host_differs) out.push_back(std::move(host));
    return out;
}

}  // namespace clprobe::replay

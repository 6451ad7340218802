#include "glm/glm_memory.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>

#include "glm/glm_model.hpp"

namespace clprobe::glm {

namespace {

constexpr std::uint64_t saturated = std::numeric_limits<std::uint64_t>::max();

// a x b x ..., saturating at 2^64 - 1 (a row search tries absurd sizes on its way down).
std::uint64_t product(std::initializer_list<std::uint64_t> factors) {
    std::uint64_t p = 1;
    for (std::uint64_t f : factors) {
        if (f == 0) return 0;
        p = p > saturated / f ? saturated : p * f;
    }
    return p;
}

// A buffer uploaded from host data: at least one byte, as glm_device.cpp's filled() makes it.
std::uint64_t uploaded(std::uint64_t bytes) {
    return std::max<std::uint64_t>(bytes, 1);
}

}  // namespace

void Footprint::add(std::uint64_t bytes) {
    total = total > saturated - bytes ? saturated : total + bytes;
    largest = std::max(largest, bytes);
}

Footprint data_footprint(const DataShape& s) {
    const std::uint64_t e = s.fp64 ? 8 : 4, n = s.rows, p = s.cols;
    Footprint f;
    std::uint64_t ld = leading_dimension(n);
    if (s.format == Format::csr) {  // upload_csr()
        ld = n;
        const std::uint64_t nnz = product({n, csr_nonzeros_per_row(s.cols, s.density)});
        f.add(uploaded(product({nnz, e})));                        // values
        f.add(uploaded(product({n, e})));                          // y
        f.add(uploaded(product({n + 1, sizeof(std::uint32_t)})));  // row pointers
        f.add(uploaded(product({nnz, sizeof(std::uint32_t)})));    // column indices
    } else {  // upload_dense(): the column-major layout pads every column to ld rows
        const std::uint64_t stored = s.layout == Layout::col ? ld : n;
        f.add(uploaded(product({stored, p, e})));  // X
        f.add(uploaded(product({stored, e})));     // y
    }
    // work_buffers(): beta, the residual, one partial gradient per work-item, g.
    f.add(uploaded(product({p, e})));
    f.add(product({std::max(n, ld), e}));
    f.add(product({s.groups, max_partial_wg, p, e}));
    f.add(product({p, e}));
    return f;
}

std::uint64_t max_rows(DataShape shape, const MemoryLimits& limits) {
    // The footprint grows with the rows, so bisect for the last row count that fits; no device
    // holds 2^62 bytes, so 2^60 rows is beyond any answer.
    std::uint64_t lo = 0, hi = std::uint64_t{1} << 60;
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        shape.rows = mid;
        if (data_footprint(shape).fits(limits))
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;  // 0 when not even one row fits
}

}  // namespace clprobe::glm

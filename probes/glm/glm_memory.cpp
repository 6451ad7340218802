#include "glm/glm_memory.hpp"

#include <algorithm>
#include <initializer_list>
#include <limits>

#include "glm/glm_model.hpp"

namespace clprobe::glm {

namespace {

// A buffer uploaded from host data: at least one byte, as glm_device.cpp's filled() makes it.
std::uint64_t uploaded(std::uint64_t bytes) {
    return std::max<std::uint64_t>(bytes, 1);
}

}  // namespace

Footprint data_footprint(const DataShape& s) {
    const std::uint64_t e = s.fp64 ? 8 : 4, n = s.rows, p = s.cols;
    Footprint f;
    std::uint64_t ld = leading_dimension(n);
    if (s.format == Format::csr) {  // upload_csr()
        ld = n;
        const std::uint64_t nnz = saturating_product({n, csr_nonzeros_per_row(s.cols, s.density)});
        f.add(uploaded(saturating_product({nnz, e})));                        // values
        f.add(uploaded(saturating_product({n, e})));                          // y
        f.add(uploaded(saturating_product({n + 1, sizeof(std::uint32_t)})));  // row pointers
        f.add(uploaded(saturating_product({nnz, sizeof(std::uint32_t)})));    // column indices
    } else if (s.storage != Storage::real) {  // upload_stored(): row-major X in reduced storage
        ld = n;                               // no column-major padding
        f.add(uploaded(saturating_product({n, p, storage_bytes(s.storage)})));  // X
        f.add(uploaded(saturating_product({n, e})));                            // y
        f.add(uploaded(saturating_product({p, e})));                            // per-column scales
    } else {  // upload_dense(): the column-major layout pads every column to ld rows
        const std::uint64_t stored = s.layout == Layout::col ? ld : n;
        f.add(uploaded(saturating_product({stored, p, e})));  // X
        f.add(uploaded(saturating_product({stored, e})));     // y
    }
    // work_buffers(): beta, the residual, one partial gradient per work-item, g.
    f.add(uploaded(saturating_product({p, e})));
    f.add(saturating_product({std::max(n, ld), e}));
    f.add(saturating_product({s.groups, max_partial_wg, p, e}));
    f.add(saturating_product({p, e}));
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

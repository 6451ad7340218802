#pragma once
// Device memory of the GLM gradient's data (pure, no OpenCL): the bytes of the buffers one set of
// device data takes exactly as glm_device.cpp creates them, and the largest number of rows whose
// buffers fit a device. "Fits" means every buffer <= the device's largest allocation
// (CL_DEVICE_MAX_MEM_ALLOC_SIZE) and their sum <= its global memory (CL_DEVICE_GLOBAL_MEM_SIZE),
// with no safety margin: the driver, other users of the device and (on a CPU device) the host
// need some of it, so these are upper bounds. clprobe's own probes size their data with a fifth of
// global memory left free (fit_buffer_bytes).
#include <cstddef>
#include <cstdint>

#include "core/device_footprint.hpp"
#include "glm/glm_storage.hpp"

namespace clprobe::glm {

enum class Layout { row, col };
enum class Format { dense, csr };

// Work-items per group the row kernels may use; the partial buffer holds one partial gradient
// per work-item of every group.
inline constexpr std::size_t max_partial_wg = 256;

// Rows the column-major layout pads n to (its leading dimension).
inline std::uint64_t leading_dimension(std::uint64_t rows) {
    return (rows + 15) / 16 * 16;
}

using clprobe::Footprint;
using clprobe::MemoryLimits;

// One set of device data (DeviceData): X in a layout and format, y, beta, the residual r, the
// partial gradients of `groups` work-groups, and g; CSR adds row pointers and column indices.
struct DataShape {
    std::uint64_t rows = 0;
    std::uint32_t cols = 0;
    Layout layout = Layout::row;
    Format format = Format::dense;
    bool fp64 = false;
    double density = 0;      // CSR only: non-zeros per row = csr_nonzeros_per_row(cols, density)
    std::size_t groups = 0;  // work-groups the partial buffer has room for (gradient_groups)
    // Dense row-major only: X in fp16, bf16 or int8 (with p float scales; fp16 and bf16 get p ones),
    // the rest in fp32 (upload_stored()). Storage::real: X in fp32 or fp64 by `fp64`.
    Storage storage = Storage::real;
};

Footprint data_footprint(const DataShape& shape);
// The largest row count (shape.rows is ignored) whose data fits; 0 when not even one row fits.
std::uint64_t max_rows(DataShape shape, const MemoryLimits& limits);

}  // namespace clprobe::glm

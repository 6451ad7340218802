#pragma once
// The app.* measurements of a traced program: what `compare` pairs and renderers list. The rules
// read the facts instead (core/trace_facts.hpp).
#include <optional>
#include <vector>

#include "core/kernel_roofs.hpp"
#include "core/memory_roofs.hpp"
#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

// `launch_seconds[k]`: the device time of each launch of kernel k (facts.kernels order before
// sorting: the trace's kernel-name order); `rates[t]`: each transfer's GB/s of transfer group t;
// `roofs`: this device's measured bandwidth roofs, each kernel held against the roof of the level
// its buffers' bytes live in.
std::vector<Measurement> app_measurements(const TraceFacts& facts,
                                          const std::vector<std::vector<double>>& launch_seconds,
                                          const std::vector<std::vector<double>>& rates, const BandwidthRoofs& roofs);

// The counted kernels of facts.work: their work per launch (app.kernel.flops{precision},
// app.kernel.int_ops, app.kernel.bytes{direction}, app.kernel.intensity{kind}) and their place on
// each roof their work meets (app.kernel.roof_fraction{roof}). For those kernels it removes the
// argument-size estimate's app.kernel.roofline_fraction from `out`.
void add_work_measurements(const TraceFacts& facts, const BandwidthRoofs& roofs, const ComputeRoofs& compute,
                           std::vector<Measurement>& out);

// A fraction of a roof above this is impossible for a measured rate: the count or the roof is wrong.
inline constexpr double impossible_fraction = 1.05;

// At most `limit` of `samples`, evenly strided (the first always kept).
std::vector<double> strided(const std::vector<double>& samples, std::size_t limit);

}  // namespace clprobe

#pragma once
// The app.* measurements of a traced program: what `compare` pairs and renderers list. The rules
// read the facts instead (core/trace_facts.hpp).
#include <optional>
#include <vector>

#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

// `launch_seconds[k]`: the device time of each launch of kernel k (facts.kernels order before
// sorting: the trace's kernel-name order); `rates[t]`: each transfer's GB/s of transfer group t.
std::vector<Measurement> app_measurements(const TraceFacts& facts,
                                          const std::vector<std::vector<double>>& launch_seconds,
                                          const std::vector<std::vector<double>>& rates,
                                          std::optional<double> peak_bandwidth_gbs);

// At most `limit` of `samples`, evenly strided (the first always kept).
std::vector<double> strided(const std::vector<double>& samples, std::size_t limit);

}  // namespace clprobe

#pragma once
// The terminal report: ranked findings first, then each probe with its measurements.
#include <string>

#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {

// Uses verbose and color.
std::string render_text(const RunReport& report, const RenderOptions& options = {});

// "159.3 GFLOP/s ± 1.2%": median and coefficient of variation.
std::string format_measurement_value(const Measurement& m);

// Device description blocks shared by `info` and the report header.
std::string render_device_info(const DeviceInfo& d);

}  // namespace clprobe

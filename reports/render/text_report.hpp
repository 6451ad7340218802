#pragma once
// The terminal report: ranked findings first, then each probe with its measurements.
#include <string>

#include "core/report.hpp"

namespace clprobe {

struct TextOptions {
    bool verbose = false;  // every variant's measurement, not only headlines
    bool color = false;    // ANSI colour; the CLI enables it only on a terminal without NO_COLOR
};

std::string render_text(const RunReport& report, const TextOptions& options = {});

// "159.3 GFLOP/s ± 1.2%": median and coefficient of variation.
std::string format_measurement_value(const Measurement& m);

// Device description blocks shared by `info` and the report header.
std::string render_device_info(const DeviceInfo& d);

}  // namespace clprobe

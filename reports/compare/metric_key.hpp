#pragma once
// How two reports' measurements are paired, shared by `compare` (two reports) and `fleet`
// (many): the metric id plus its labels, less the labels that describe circumstances.
#include <string>

#include "core/report.hpp"

namespace clprobe {

// "metric{label=value,...}" without the volatile labels (driver, driver_version), so that a
// driver update does not unpair every measurement.
std::string pairing_key(const Measurement& m);

// A headline metric: no labels (the figure a reader looks at first) and timed, not a fact.
bool is_headline(const Measurement& m);

}  // namespace clprobe

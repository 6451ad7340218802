#pragma once
// Topology facts as measurements: one sample each, no clock (TimerKind::none), so that `compare`
// lines them up across machines like any other metric.
#include <string>

#include "core/report.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

Measurement fact_measurement(std::string metric, std::string unit, Labels labels, double value);

// topology.pci.link_bandwidth{address=...,link=current|max}, for the parts of `link` that are known.
void add_link_bandwidths(std::vector<Measurement>& out, const std::string& address, const PcieLinkFacts& link);

}  // namespace clprobe

#pragma once
// The compact structured summary of a topology that reports keep (docs/report-schema.md):
// packages, NUMA nodes, cache levels, core and PU counts, PCI devices of interest and the
// upstream links they hang from. A few KB even on large servers.
#include "core/topology_facts.hpp"
#include "topology/hwloc_topology.hpp"

namespace clprobe {

TopologyFacts summarize(const Topology& topology);

}  // namespace clprobe

#pragma once
// Factories for the transfer layer's probes; probes/builtin_probes.cpp lists them in run order.
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

std::unique_ptr<Probe> make_transfer_bandwidth_probe();  // transfer.bandwidth: paths x directions x sizes
std::unique_ptr<Probe> make_transfer_latency_probe();    // transfer.latency: small transfers, host-side cost
std::unique_ptr<Probe> make_transfer_overlap_probe();    // transfer.overlap: copy/compute overlap, transfer.pipeline
std::unique_ptr<Probe> make_transfer_numa_probe();       // transfer.numa: host buffer on each NUMA node

}  // namespace clprobe

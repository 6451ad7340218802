#pragma once
// Factories for the topology layer's probes; probes/builtin_probes.cpp lists them in run order.
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

std::unique_ptr<Probe> make_host_topology_probe();
std::unique_ptr<Probe> make_device_topology_probe();

}  // namespace clprobe

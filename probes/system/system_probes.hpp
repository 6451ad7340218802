#pragma once
// Factories for the system layer's probes; probes/builtin_probes.cpp lists them in run order
// (system.activity last, so its window covers every other probe of the run).
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

std::unique_ptr<Probe> make_host_probe();
std::unique_ptr<Probe> make_limits_probe();
std::unique_ptr<Probe> make_memory_bandwidth_probe();
std::unique_ptr<Probe> make_activity_probe();

}  // namespace clprobe

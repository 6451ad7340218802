#pragma once
// Factories for the kernel layer's probes; probes/builtin_probes.cpp lists them in run order.
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

enum class Precision { fp16, fp32, fp64 };

std::unique_ptr<Probe> make_build_time_probe();
std::unique_ptr<Probe> make_launch_latency_probe();
std::unique_ptr<Probe> make_bandwidth_probe();
std::unique_ptr<Probe> make_memory_levels_probe();
std::unique_ptr<Probe> make_compute_probe(Precision precision);
// The host's OpenBLAS GEMM rate, on a CPU device only: a floor for its compute ceilings.
std::unique_ptr<Probe> make_host_gemm_probe();

}  // namespace clprobe

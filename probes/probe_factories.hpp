#pragma once
// The factory of every probe in the registry (probe_list.inc), declared from its one line there.
// Each probe file includes this for its own factory's declaration; the integration tests include
// it to build a probe alone.
#include <memory>

#include "kernel/kernel_probes.hpp"  // Precision, the parameter of make_compute_probe
#include "runtime/probe.hpp"

namespace clprobe {

#define CLPROBE_PROBE(factory, parameters, arguments) std::unique_ptr<Probe> factory parameters;
#include "probe_list.inc"
#undef CLPROBE_PROBE

}  // namespace clprobe

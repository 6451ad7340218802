#include "builtin_probes.hpp"

#include "kernel/kernel_probes.hpp"

namespace clprobe {

ProbeList make_builtin_probes() {
    ProbeList probes;
    // kernel layer: builds first (its cold builds must not find warmed caches of the same
    // source), then the cheapest probe, then the ceilings.
    probes.push_back(make_build_time_probe());
    probes.push_back(make_launch_latency_probe());
    probes.push_back(make_bandwidth_probe());
    probes.push_back(make_compute_probe(Precision::fp32));
    probes.push_back(make_compute_probe(Precision::fp64));
    probes.push_back(make_compute_probe(Precision::fp16));
    return probes;
}

}  // namespace clprobe

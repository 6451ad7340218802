#include "builtin_probes.hpp"

#include "attention/attention_probes.hpp"
#include "glm/glm_probes.hpp"
#include "kernel/kernel_probes.hpp"
#include "network/network_probes.hpp"
#include "system/system_probes.hpp"
#include "topology/topology_probes.hpp"
#include "transfer/transfer_probes.hpp"

namespace clprobe {

ProbeList make_builtin_probes() {
    ProbeList probes;
    // system layer: facts and the host's memory roof before anything else loads the machine.
    probes.push_back(make_host_probe());
    probes.push_back(make_limits_probe());
    probes.push_back(make_memory_bandwidth_probe());
    // topology layer: reads hwloc and sysfs only (well under a second).
    probes.push_back(make_host_topology_probe());
    probes.push_back(make_device_topology_probe());
    // kernel layer: builds first (its cold builds must not find warmed caches of the same
    // source), then the cheapest probe, then the ceilings.
    probes.push_back(make_build_time_probe());
    probes.push_back(make_launch_latency_probe());
    probes.push_back(make_bandwidth_probe());
    probes.push_back(make_memory_levels_probe());
    probes.push_back(make_compute_probe(Precision::fp32));
    probes.push_back(make_compute_probe(Precision::fp64));
    probes.push_back(make_compute_probe(Precision::fp16));
    probes.push_back(make_host_gemm_probe());
    // transfer layer: after the ceilings, so a CPU device's copies can be held against
    // kernel.peak.bandwidth when the system layer's host.memory.bandwidth is absent.
    probes.push_back(make_transfer_bandwidth_probe());
    probes.push_back(make_transfer_latency_probe());
    probes.push_back(make_transfer_overlap_probe());
    probes.push_back(make_transfer_numa_probe());
    // glm workload: after the ceilings, whose kernel.peak.bandwidth its roofline fractions use.
    probes.push_back(make_glm_gradient_probe());
    probes.push_back(make_glm_fit_probe());
    probes.push_back(make_glm_host_blas_probe());
    probes.push_back(make_glm_pipeline_probe());
    // attention workload: after the ceilings, which its roofline fractions are read against.
    probes.push_back(make_attention_prefill_probe());
    probes.push_back(make_attention_decode_probe());
    probes.push_back(make_attention_decode_fp16_probe());
    probes.push_back(make_attention_batching_probe());
    probes.push_back(make_attention_host_blas_probe());
    probes.push_back(make_attention_step_probe());
    // Last: reads the activity monitor, so its window covers every probe above.
    probes.push_back(make_activity_probe());
    // network layer: after every node-local layer (ranks on one node take turns there, so they
    // arrive here at different times; network.world's barrier lines them up before any timing).
    probes.push_back(make_network_world_probe());
    probes.push_back(make_network_p2p_probe());
    probes.push_back(make_network_allreduce_probe());
    probes.push_back(make_network_device_buffers_probe());
    probes.push_back(make_network_glm_step_probe());
    return probes;
}

}  // namespace clprobe

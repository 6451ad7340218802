#pragma once
// The network layer (MPI between ranks). The registry (probes/probe_list.inc) runs it last, after
// the node-local layers. Built with MPI (CLPROBE_HAVE_MPI) its factories return the measuring
// probes (*_probe.cpp); built without, the same ids report unsupported with the reason
// (unsupported_probes.cpp), so reports of both builds line up. What the two builds share is here.

#include "runtime/probe.hpp"

namespace clprobe {

// What both builds agree on for each probe: id, title, workload and whether it needs the device.
struct NetworkProbeInfo {
    const char* id;
    const char* title;
    const char* workload;  // "" for layer probes
    bool needs_device;
};

inline constexpr NetworkProbeInfo network_world_info{"network.world", "MPI world: ranks, hosts and library", "", false};
inline constexpr NetworkProbeInfo network_p2p_info{
    "network.p2p", "Point-to-point bandwidth and latency between ranks (osu_bw, osu_latency)", "", false};
inline constexpr NetworkProbeInfo network_allreduce_info{
    "network.allreduce", "All-reduce time and bus bandwidth over sizes (nccl-tests busbw)", "", false};
inline constexpr NetworkProbeInfo network_device_buffers_info{
    "network.device_buffers", "All-reduce of device buffers: staged through host memory or not", "", true};
inline constexpr NetworkProbeInfo network_glm_step_info{
    "network.glm_step", "Data-parallel GLM step: local gradient, all-reduce, update", "glm", true};

// The probe base both builds share: identity from a NetworkProbeInfo.
class NetworkProbe : public Probe {
  public:
    explicit NetworkProbe(const NetworkProbeInfo& info) : info_(info) {}
    std::string id() const override { return info_.id; }
    std::string layer() const override { return "network"; }
    std::string title() const override { return info_.title; }
    std::string workload() const override { return info_.workload; }
    bool needs_device() const override { return info_.needs_device; }
    double expected_seconds(RunMode mode) const override { return 1.0 * mode_time_factor(mode); }

  private:
    NetworkProbeInfo info_;
};

}  // namespace clprobe

// The network layer of a build without MPI: every probe id is there, each reporting why it
// cannot run, without asking for the device (the reason is the build, not the device).
#include "network/mpi_session.hpp"
#include "network/network_probes.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

class UnsupportedNetworkProbe final : public NetworkProbe {
  public:
    using NetworkProbe::NetworkProbe;
    bool needs_device() const override { return false; }
    double expected_seconds(RunMode) const override { return 0.0; }
    void run(ProbeContext&, ProbeResult&) override { throw ProbeUnsupported(MpiSession::unavailable_reason()); }
};

}  // namespace

std::unique_ptr<Probe> make_network_world_probe() {
    return std::make_unique<UnsupportedNetworkProbe>(network_world_info);
}
std::unique_ptr<Probe> make_network_p2p_probe() {
    return std::make_unique<UnsupportedNetworkProbe>(network_p2p_info);
}
std::unique_ptr<Probe> make_network_allreduce_probe() {
    return std::make_unique<UnsupportedNetworkProbe>(network_allreduce_info);
}
std::unique_ptr<Probe> make_network_device_buffers_probe() {
    return std::make_unique<UnsupportedNetworkProbe>(network_device_buffers_info);
}
std::unique_ptr<Probe> make_network_glm_step_probe() {
    return std::make_unique<UnsupportedNetworkProbe>(network_glm_step_info);
}

}  // namespace clprobe

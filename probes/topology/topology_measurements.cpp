#include "topology/topology_measurements.hpp"

namespace clprobe {

Measurement fact_measurement(std::string metric, std::string unit, Labels labels, double value) {
    return make_measurement(std::move(metric), std::move(unit), std::move(labels), {value}, TimerKind::none);
}

void add_link_bandwidths(std::vector<Measurement>& out, const std::string& address, const PcieLinkFacts& link) {
    if (link.current.gb_per_s)
        out.push_back(fact_measurement("topology.pci.link_bandwidth", "GB/s",
                                       {{"address", address}, {"link", "current"}}, *link.current.gb_per_s));
    if (link.max.gb_per_s)
        out.push_back(fact_measurement("topology.pci.link_bandwidth", "GB/s", {{"address", address}, {"link", "max"}},
                                       *link.max.gb_per_s));
}

}  // namespace clprobe

// topology.host: the machine's shape (packages, NUMA nodes and their memory, caches, cores, PUs)
// and its PCIe wiring (devices of interest, their links, the root ports they share), live or
// from a saved hwloc XML (--topology). Stored in the report so `compare` can show wiring changes.
#include "probe_factories.hpp"
#include "topology/hwloc_topology.hpp"
#include "topology/topology_input.hpp"
#include "topology/topology_measurements.hpp"
#include "topology/topology_summary.hpp"

namespace clprobe {

namespace {

class HostTopologyProbe final : public Probe {
  public:
    std::string id() const override { return "topology.host"; }
    std::string layer() const override { return "topology"; }
    std::string title() const override { return "Machine topology: packages, NUMA nodes, caches, PCIe devices"; }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const std::string& xml = ctx.options.topology_xml;
        const Topology topology = load_analysed_topology(xml);
        const TopologyFacts facts = summarize(topology);

        out.measurements.push_back(fact_measurement("topology.packages", "count", {}, facts.packages.size()));
        out.measurements.push_back(fact_measurement("topology.numa_nodes", "count", {}, facts.numa_nodes.size()));
        out.measurements.push_back(fact_measurement("topology.cores", "count", {}, facts.cores));
        out.measurements.push_back(fact_measurement("topology.pus", "count", {}, facts.pus));
        for (const auto& d : facts.pci_devices)
            add_link_bandwidths(out.measurements, d.address, d.link);
        for (const auto& u : facts.upstream_links)
            if (!u.is_device_link) add_link_bandwidths(out.measurements, u.address, u.link);

        out.attributes["source"] = xml.empty() ? "live" : xml;
        record_topology_facts(out, facts);
        if (!facts.has_pci)
            out.attributes["pci"] = "the topology holds no PCI information (saved without I/O, or hwloc found none)";
    }
};

}  // namespace

std::unique_ptr<Probe> make_host_topology_probe() {
    return std::make_unique<HostTopologyProbe>();
}

}  // namespace clprobe

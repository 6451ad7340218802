// topology.device: where the selected device sits: its PCI object, the NUMA node(s) and CPUs
// local to it, its PCIe link, and how the process's CPU and memory binding relate to them. With
// --topology it locates the --device-pci address in the saved XML instead (binding unknown).
#include "cl/device_session.hpp"
#include "probe_factories.hpp"
#include "topology/device_locality.hpp"
#include "topology/process_binding.hpp"
#include "topology/topology_input.hpp"
#include "topology/topology_measurements.hpp"

namespace clprobe {

namespace {

DeviceQuery query_for(const ProbeContext& ctx) {
    DeviceQuery q;
    if (!ctx.options.topology_xml.empty()) {
        // The open device belongs to this machine, not to the saved one: only --device-pci names one there.
        if (ctx.options.device_pci.empty())
            throw ProbeSkipped("a saved topology (--topology) without --device-pci: no device to locate in it");
        q.pci_address = ctx.options.device_pci;
        return q;
    }
    if (!ctx.device) throw ProbeSkipped("no OpenCL device is open");
    const DeviceInfo& info = ctx.device->info();
    q.type = info.type;
    q.pci_address = info.pci_address;
    return q;
}

class DeviceTopologyProbe final : public Probe {
  public:
    std::string id() const override { return "topology.device"; }
    std::string layer() const override { return "topology"; }
    std::string title() const override { return "Device placement: NUMA node, PCIe link, process binding"; }
    bool needs_device() const override { return false; }  // a saved topology needs none

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const DeviceQuery query = query_for(ctx);
        const Topology topology = load_analysed_topology(ctx.options.topology_xml);
        const DeviceLocalityFacts facts = locate_device(topology, query, read_process_binding(topology));

        // One NUMA node is a fact to compare across machines; a device local to several has none.
        if (facts.numa_nodes.size() == 1) {
            Measurement node = fact_measurement("topology.device.numa_node", "index", {}, facts.numa_nodes[0]);
            // The text report shows a headline's note: where the device and the process are, in words.
            node.note = facts.note + "; the process: " + facts.binding.relation +
                        (facts.binding.cpuset.empty() ? "" : " (PUs " + facts.binding.cpuset + ")");
            out.measurements.push_back(std::move(node));
        }
        if (facts.pci) {
            const PcieLinkFacts& link = facts.pci->link;
            if (link.current.gb_per_s)
                out.measurements.push_back(
                    fact_measurement("topology.device.link_bandwidth", "GB/s", {}, *link.current.gb_per_s));
            if (link.max.gb_per_s)
                out.measurements.push_back(
                    fact_measurement("topology.device.link_bandwidth", "GB/s", {{"link", "max"}}, *link.max.gb_per_s));
        }
        out.attributes["source"] = ctx.options.topology_xml.empty() ? "live" : ctx.options.topology_xml;
        record_device_locality(out, facts);
    }
};

}  // namespace

std::unique_ptr<Probe> make_device_topology_probe() {
    return std::make_unique<DeviceTopologyProbe>();
}

}  // namespace clprobe

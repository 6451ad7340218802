#include "topology/topology_input.hpp"

#include <fmt/core.h>

#include "topology/pci_address.hpp"
#include "topology/pci_devices.hpp"
#include "topology/pci_links.hpp"

namespace clprobe {

namespace {

// "0000:17:00.0 (gpu), 0000:ca:00.0 (gpu)", so a wrong --device-pci can be corrected at once.
std::string devices_listed(const Topology& t) {
    std::string out;
    for (hwloc_obj_t d : devices_of_interest(t)) {
        const std::string item =
            fmt::format("{} ({})", pci_address_of(d), device_of_interest_kind(d->attr->pcidev.class_id));
        out += (out.empty() ? "" : ", ") + item;
    }
    return out;
}

}  // namespace

Topology load_analysed_topology(const std::string& xml_path) {
    if (!xml_path.empty()) return Topology::from_xml_file(xml_path);
    Topology live = Topology::live();
    if (live.is_live()) annotate_pci_links(live);
    return live;
}

std::optional<std::string> topology_input_problem(const std::string& xml_path, const std::string& device_pci) {
    std::optional<PciAddress> address;
    if (!device_pci.empty()) {
        address = parse_pci_address(device_pci);
        if (!address)
            return fmt::format("--device-pci '{}': not a PCI address (expected DDDD:BB:DD.F, e.g. 0000:17:00.0)",
                               device_pci);
    }
    if (xml_path.empty()) return std::nullopt;
    try {
        const Topology t = Topology::from_xml_file(xml_path);
        if (!address || find_pci_device(t, *address)) return std::nullopt;
        const std::string listed = devices_listed(t);
        if (!hwloc_get_next_pcidev(t.get(), nullptr))
            return fmt::format("--device-pci {}: {} holds no PCI information", address->text(), xml_path);
        return fmt::format("--device-pci {}: no PCI device at this address in {}{}", address->text(), xml_path,
                           listed.empty() ? "" : " (devices of interest there: " + listed + ")");
    } catch (const TopologyError& e) {
        return fmt::format("--topology {}: {}", xml_path, e.what());
    }
}

}  // namespace clprobe

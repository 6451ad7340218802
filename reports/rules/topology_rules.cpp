#include "rules/topology_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <set>

#include "core/pcie_link.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

namespace {

// ---------------------------------------------------------------- reading the layer's facts

constexpr const char* host_probe_id = "topology.host";
constexpr const char* device_probe_id = "topology.device";

// The summary of topology.host, or why it is not there (the rule's inputs, when the probe did not run).
struct HostFacts {
    std::optional<TopologyFacts> facts;
    std::string missing;
};

HostFacts host_facts(const RunReport& r, const RuleSpec& rule) {
    const ProbeResult* p = find_result(r, host_probe_id);
    if (!p || p->status != ProbeStatus::ok) return {std::nullopt, rule.needs()};
    auto facts = topology_facts_of(*p);
    if (!facts) return {std::nullopt, "topology.host holds no readable summary"};
    return {std::move(facts), {}};
}

std::optional<DeviceLocalityFacts> device_facts(const RunReport& r) {
    return device_locality_of(r);
}

// The address of the device the run diagnosed, when the topology located it; "" otherwise.
std::string selected_address(const RunReport& r) {
    const auto d = device_facts(r);
    return d && d->match == "pci" ? d->address : std::string();
}

std::string kind_name(const std::string& kind) {
    if (kind == "gpu") return "GPU";
    if (kind == "nic") return "NIC";
    if (kind == "coprocessor") return "co-processor";
    return kind.empty() ? "device" : kind;
}

const PciDeviceFacts* device_at(const TopologyFacts& f, const std::string& address) {
    for (const auto& d : f.pci_devices)
        if (d.address == address) return &d;
    return nullptr;
}

Evidence link_evidence(const std::string& address, const char* which, double gb_per_s, std::string expectation) {
    return {"topology.pci.link_bandwidth",
            {{"address", address}, {"link", which}},
            gb_per_s,
            "GB/s",
            std::move(expectation)};
}

// ---------------------------------------------------------------- topology.numa_mismatch

bool any_common(const std::vector<unsigned>& a, const std::vector<unsigned>& b) {
    return std::any_of(a.begin(), a.end(), [&](unsigned x) { return std::find(b.begin(), b.end(), x) != b.end(); });
}

std::vector<unsigned> without(const std::vector<unsigned>& a, const std::vector<unsigned>& remove) {
    std::vector<unsigned> out;
    for (unsigned x : a)
        if (std::find(remove.begin(), remove.end(), x) == remove.end()) out.push_back(x);
    return out;
}

// The commands that put a process and its memory on `nodes` (OS indexes, as numactl takes them;
// hwloc-bind takes them with -p).
std::string binding_commands(const std::vector<unsigned>& nodes) {
    const std::string list = index_list(nodes);
    std::string hwloc_nodes;
    for (unsigned n : nodes)
        hwloc_nodes += fmt::format("{}node:{}", hwloc_nodes.empty() ? "" : " ", n);
    return fmt::format(
        "`numactl --cpunodebind={0} --membind={0} <command>` (or `hwloc-bind -p --cpubind {1} "
        "--membind {1} -- <command>`)",
        list, hwloc_nodes);
}

RuleOutcome numa_mismatch(const RunReport& r, const RuleSpec& rule) {
    const auto dev = device_facts(r);
    if (!dev) return rule.missing();
    // A CPU device runs on the CPUs the process runs on: local by construction.
    if (dev->match == "cpu_device") return RuleOutcome::none();
    if (dev->match != "pci") return RuleOutcome::missing("the device is not located in the topology: " + dev->note);
    if (dev->numa_nodes.empty()) return RuleOutcome::missing("the topology gives the device no local NUMA node");
    const HostFacts host = host_facts(r, rule);
    if (host.facts) {
        std::vector<unsigned> all;
        for (const auto& n : host.facts->numa_nodes)
            all.push_back(n.os_index);
        // One NUMA node, or a device local to all of them (hwloc could not place it): nothing to mismatch.
        if (without(all, dev->numa_nodes).empty()) return RuleOutcome::none();
    }
    const ProcessBindingFacts& b = dev->binding;
    if (b.relation == "unknown")
        return RuleOutcome::missing("the process binding is not known" + (b.note.empty() ? "" : " (" + b.note + ")"));

    const std::string device = fmt::format("{} {}", kind_name(dev->pci ? dev->pci->kind : ""), dev->address);
    const std::string device_nodes = index_list(dev->numa_nodes);
    const std::vector<unsigned> remote_cpu_nodes = without(b.numa_nodes, dev->numa_nodes);
    const bool memory_bound = b.memory_policy == "bind" || b.memory_policy == "interleave";
    const bool memory_remote = memory_bound && !b.memory_nodes.empty() && !any_common(b.memory_nodes, dev->numa_nodes);

    // The CPU side, by NUMA node: PUs outside the device's CPU set but on its node are still local.
    Severity severity = Severity::info;
    std::string title;
    if (!remote_cpu_nodes.empty()) {
        if (!any_common(b.numa_nodes, dev->numa_nodes)) {
            severity = Severity::high;
            title = fmt::format("The process runs on NUMA node {} (PUs {}); the {} is local to node {}",
                                index_list(b.numa_nodes), b.cpuset, device, device_nodes);
        } else if (b.relation == "unbound") {
            severity = Severity::low;
            title =
                fmt::format("The process is not bound: the OS may run it on NUMA node {}, away from the {} (node {})",
                            index_list(remote_cpu_nodes), device, device_nodes);
        } else {
            severity = Severity::medium;
            title = fmt::format("The process may run on NUMA node {} as well as on node {}, where the {} is local",
                                index_list(remote_cpu_nodes), device_nodes, device);
        }
    }
    if (memory_remote) {
        const std::string memory =
            fmt::format("its memory is bound ({}) to NUMA node {}", b.memory_policy, index_list(b.memory_nodes));
        title = title.empty() ? fmt::format(
                                    "The process's memory is bound ({}) to NUMA node {}; the {} is local to "
                                    "node {}",
                                    b.memory_policy, index_list(b.memory_nodes), device, device_nodes)
                              : title + ", and " + memory;
        severity = Severity::high;
    }
    if (title.empty()) return RuleOutcome::none();

    Finding f = rule.finding(severity, std::move(title));
    if (const Measurement* node = find_measurement(r, "topology.device.numa_node"))
        f.evidence.push_back(evidence_of(*node, "the NUMA node the process and its memory should be on"));
    f.suggestion = fmt::format(
        "Run the application on the device's NUMA node: {}. In a batch job, request cores of NUMA node {}. clprobe "
        "reads the binding it was started with: run it the way the application runs.",
        binding_commands(dev->numa_nodes), device_nodes);
    f.gain_basis =
        "not estimated: the cost depends on how much of the work crosses the link between NUMA nodes (host copies "
        "to and from the device, host-side work on its buffers)";
    f.confidence = 1.0;  // read from the OS, not measured with noise
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- topology.pcie_link_degraded

struct LinkCheck {
    std::string address;
    std::string what;  // "GPU 0000:51:00.0", "the link below root port 0000:80:01.1"
    const PcieLinkFacts* link;
    bool on_selected_path;
};

// Generation numbers compare the way a user reads them; an unknown rate compares as equal.
int generation_of(std::optional<double> gt_per_s) {
    const auto g = gt_per_s ? pcie_generation(*gt_per_s) : std::nullopt;
    return g ? g->generation : 0;
}

bool comparable(const PcieLinkFacts& l) {
    return l.source == "sysfs" && l.current.gt_per_s && l.current.width && l.max.gt_per_s && l.max.width;
}

bool width_short(const PcieLinkFacts& l) {
    return *l.current.width < *l.max.width;
}

bool speed_short(const PcieLinkFacts& l) {
    return generation_of(l.current.gt_per_s) < generation_of(l.max.gt_per_s);
}

std::vector<LinkCheck> links_to_check(const TopologyFacts& f, const std::string& selected) {
    std::vector<LinkCheck> out;
    for (const auto& d : f.pci_devices)
        out.push_back({d.address, fmt::format("{} {}", kind_name(d.kind), d.address), &d.link, d.address == selected});
    for (const auto& u : f.upstream_links) {
        if (u.is_device_link) continue;  // the same link as a device's own, checked above
        const bool on_path = std::find(u.devices.begin(), u.devices.end(), selected) != u.devices.end();
        out.push_back({u.address, fmt::format("the link below root port {}", u.address), &u.link, on_path});
    }
    return out;
}

// Theoretical gain for the selected device: its path's bottleneck now versus what the path could do.
std::optional<double> path_gain(const std::vector<LinkCheck>& links) {
    std::optional<double> now, possible;
    for (const auto& l : links) {
        if (!l.on_selected_path || !l.link->current.gb_per_s || !l.link->max.gb_per_s) continue;
        now = std::min(now.value_or(*l.link->current.gb_per_s), *l.link->current.gb_per_s);
        possible = std::min(possible.value_or(*l.link->max.gb_per_s), *l.link->max.gb_per_s);
    }
    if (!now || !possible || *possible <= 0 || *now >= *possible) return std::nullopt;
    return 1.0 - *now / *possible;
}

RuleOutcome pcie_link_degraded(const RunReport& r, const RuleSpec& rule) {
    const HostFacts host = host_facts(r, rule);
    if (!host.facts) return RuleOutcome::missing(host.missing);
    if (!host.facts->has_pci) return RuleOutcome::missing("the topology holds no PCI information");
    const std::vector<LinkCheck> links = links_to_check(*host.facts, selected_address(r));

    struct Degraded {
        const LinkCheck* check;
        Severity severity;
    };
    std::vector<Degraded> degraded;
    bool any_comparable = false;
    for (const auto& l : links) {
        if (!comparable(*l.link)) continue;
        any_comparable = true;
        if (width_short(*l.link))
            degraded.push_back({&l, l.on_selected_path ? Severity::high : Severity::medium});
        else if (speed_short(*l.link) && l.on_selected_path)
            // Idle links drop their rate to save power; only the diagnosed device's is worth a word.
            degraded.push_back({&l, Severity::low});
    }
    if (!any_comparable)
        return RuleOutcome::missing(
            "no PCIe link of interest reports both its current and its maximum rate and width (the kernel's "
            "current_link_* and max_link_* files, or clprobe.* infos in a saved topology)");
    if (degraded.empty()) return RuleOutcome::none();
    std::stable_sort(degraded.begin(), degraded.end(),
                     [](const Degraded& a, const Degraded& b) { return a.severity > b.severity; });

    const Degraded& worst = degraded.front();
    const PcieLinkFacts& wl = *worst.check->link;
    Finding f = rule.finding(
        worst.severity,
        fmt::format("{} trained at {}; both ends can do {}{}", worst.check->what,
                    describe_link(wl.current.gt_per_s, wl.current.width), describe_link(wl.max.gt_per_s, wl.max.width),
                    degraded.size() > 1 ? fmt::format(" ({} links below their maximum)", degraded.size()) : ""));
    bool widths = false, speeds = false;
    for (const auto& d : degraded) {
        const PcieLinkFacts& l = *d.check->link;
        const std::string trained = describe_link(l.current.gt_per_s, l.current.width);
        const std::string possible = describe_link(l.max.gt_per_s, l.max.width);
        if (l.current.gb_per_s)
            f.evidence.push_back(link_evidence(d.check->address, "current", *l.current.gb_per_s,
                                               d.check->what + " trained at " + trained));
        if (l.max.gb_per_s)
            f.evidence.push_back(link_evidence(d.check->address, "max", *l.max.gb_per_s, "possible: " + possible));
        widths = widths || width_short(l);
        speeds = speeds || !width_short(l);
    }
    std::string suggestion;
    if (widths)
        suggestion += fmt::format(
            "A link narrower than both ends allow is a physical or firmware matter, not power saving: reseat the card, "
            "check the riser or cable and that the slot is wired for the full width, and the BIOS bifurcation setting "
            "of that slot (x16, not x8x8). Confirm with `lspci -vv -s {} | grep -E 'LnkCap|LnkSta'`.",
            worst.check->address);
    if (speeds)
        suggestion += fmt::format(
            "{}Links lower their rate when idle to save power, so a rate below the maximum needs confirming under "
            "load: "
            "read `lspci -vv -s {} | grep LnkSta` (or /sys/bus/pci/devices/{}/current_link_speed) while a large "
            "transfer runs; if it stays low, check the BIOS PCIe speed setting and the riser.",
            suggestion.empty() ? "" : " ", degraded.back().check->address, degraded.back().check->address);
    f.suggestion = suggestion;
    if (worst.severity == Severity::high) {
        f.estimated_gain = path_gain(links);
        f.gain_basis =
            "time saved by host<->device transfers that saturate the link, from the theoretical rates of "
            "the trained and the possible link";
    } else {
        f.gain_basis = worst.severity == Severity::low
                           ? "not estimated until confirmed under load (idle links downshift)"
                           : "not estimated: the device is not the one diagnosed";
    }
    // A width shortfall is read, not inferred; a rate shortfall may be idle power saving.
    f.confidence = worst.severity == Severity::low ? 0.5 : 1.0;
    return RuleOutcome::found(std::move(f));
}

// ---------------------------------------------------------------- topology.shared_link

// Functions of one card (a dual-port NIC) share its link by design: count physical devices.
std::string physical_device(const std::string& address) {
    return address.substr(0, address.rfind('.'));
}

// What a link can carry: its maximum where known (an idle GPU's link sits at gen1 until a transfer
// starts, and a narrower-than-possible link is pcie_link_degraded's business), else its current state.
const PcieLinkReading& capacity(const PcieLinkFacts& link) {
    return link.max.gb_per_s ? link.max : link.current;
}

const char* capacity_label(const PcieLinkFacts& link) {
    return link.max.gb_per_s ? "max" : "current";
}

struct SharedLink {
    const PciUpstreamLinkFacts* upstream;
    std::vector<const PciDeviceFacts*> devices;  // one per physical device
    std::optional<double> demand;                // sum of the devices' link capacities, when all are known
    bool has_selected = false;

    bool oversubscription_known() const { return demand && capacity(upstream->link).gb_per_s; }
};

std::optional<SharedLink> shared_link_of(const TopologyFacts& f, const PciUpstreamLinkFacts& u,
                                         const std::string& selected) {
    SharedLink s{&u, {}, 0.0, false};
    std::set<std::string> seen;
    for (const auto& address : u.devices) {
        s.has_selected = s.has_selected || address == selected;
        const PciDeviceFacts* d = device_at(f, address);
        if (!d || !seen.insert(physical_device(address)).second) continue;
        s.devices.push_back(d);
        if (s.demand && capacity(d->link).gb_per_s)
            *s.demand += *capacity(d->link).gb_per_s;
        else
            s.demand.reset();
    }
    if (s.devices.size() < 2) return std::nullopt;
    // A shared link at least as wide as everything below it is not a bottleneck (the relative
    // margin absorbs rounding: gen5 x16 is exactly two gen4 x16).
    if (s.oversubscription_known() && *capacity(u.link).gb_per_s >= *s.demand * (1 - 1e-9)) return std::nullopt;
    return s;
}

// Devices of the same kinds as the sharers that have a root port to themselves, to move work to.
std::vector<std::string> devices_with_own_link(const TopologyFacts& f, const SharedLink& s) {
    std::set<std::string> kinds;
    for (const auto* d : s.devices)
        kinds.insert(d->kind);
    std::vector<std::string> out;
    for (const auto& u : f.upstream_links) {
        if (u.address == s.upstream->address || u.devices.size() != 1) continue;
        const PciDeviceFacts* d = device_at(f, u.devices.front());
        if (d && kinds.count(d->kind)) out.push_back(d->address);
    }
    return out;
}

std::string joined(const std::vector<std::string>& items) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : ", ") + item;
    return out;
}

RuleOutcome shared_link(const RunReport& r, const RuleSpec& rule) {
    const HostFacts host = host_facts(r, rule);
    if (!host.facts) return RuleOutcome::missing(host.missing);
    if (!host.facts->has_pci) return RuleOutcome::missing("the topology holds no PCI information");
    const std::string selected = selected_address(r);

    std::vector<SharedLink> shared;
    for (const auto& u : host.facts->upstream_links)
        if (auto s = shared_link_of(*host.facts, u, selected)) shared.push_back(std::move(*s));
    if (shared.empty()) return RuleOutcome::none();
    // The diagnosed device's link first, then known oversubscription.
    std::stable_sort(shared.begin(), shared.end(), [](const SharedLink& a, const SharedLink& b) {
        if (a.has_selected != b.has_selected) return a.has_selected;
        return a.oversubscription_known() && !b.oversubscription_known();
    });
    const SharedLink& s = shared.front();
    const PcieLinkReading& up = capacity(s.upstream->link);
    const bool known = s.oversubscription_known();

    std::vector<std::string> members;
    for (const auto* d : s.devices)
        members.push_back(fmt::format("{} {}", kind_name(d->kind), d->address));
    const std::string upstream_text =
        up.gb_per_s ? fmt::format("one {} link ({:.1f} GB/s)", describe_link(up.gt_per_s, up.width), *up.gb_per_s)
                    : std::string("one link");
    Finding f =
        rule.finding(s.has_selected && known ? Severity::medium : Severity::low,
                     fmt::format("{} devices share {} below root port {}: {}{}", s.devices.size(), upstream_text,
                                 s.upstream->address, joined(members),
                                 known ? fmt::format(" ({:.1f} GB/s of device links behind it)", *s.demand) : ""));
    if (up.gb_per_s)
        f.evidence.push_back(
            link_evidence(s.upstream->address, capacity_label(s.upstream->link), *up.gb_per_s, "the link they share"));
    for (const auto* d : s.devices)
        if (const auto& own = capacity(d->link); own.gb_per_s)
            f.evidence.push_back(
                link_evidence(d->address, capacity_label(d->link), *own.gb_per_s, "this device's own link"));
    const std::vector<std::string> alternatives = devices_with_own_link(*host.facts, s);
    f.suggestion = fmt::format(
        "Host<->device copies that run on these devices at once split the shared link. For transfer-heavy work give "
        "each process devices under different root ports{}, or stagger the copies; peer-to-peer copies between them "
        "stay below the switch and do not use the shared link.",
        alternatives.empty() ? ""
                             : fmt::format(" ({} {} a link of its own)", joined(alternatives),
                                           alternatives.size() == 1 ? "has" : "each have"));
    if (s.has_selected && known) {
        f.estimated_gain = 1.0 - *up.gb_per_s / *s.demand;
        f.gain_basis =
            "time saved by host<->device copies running on all of these devices at once, from the theoretical "
            "rates of the shared link and of the device links";
    } else {
        f.gain_basis = s.has_selected ? "not estimated: the link rates are not all known"
                                      : "not estimated: the diagnosed device is not among them";
    }
    f.confidence = known ? 1.0 : 0.5;
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> topology_rules() {
    // The facts are read, not measured: these rules compare no measurement with a threshold.
    using In = RuleInput;
    const std::string layer = "topology";
    const In device{In::Kind::facts, {device_probe_id}, "the topology layer"};
    const In host{In::Kind::facts, {host_probe_id}, "the topology layer"};
    return {
        {{"topology.numa_mismatch", layer, {device}, {}}, numa_mismatch},
        {{"topology.pcie_link_degraded", layer, {host}, {}}, pcie_link_degraded},
        {{"topology.shared_link", layer, {host}, {}}, shared_link},
    };
}

}  // namespace clprobe

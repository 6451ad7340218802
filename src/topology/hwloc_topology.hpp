#pragma once
// An owned, loaded hwloc topology: the live machine, a saved XML file or buffer, or a synthetic
// description (tests). Loading failures are TopologyError with a one-line message.
#include <hwloc.h>

#include <stdexcept>
#include <string>

namespace clprobe {

class TopologyError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Topology {
  public:
    // This machine, with the PCI devices that matter (GPUs, accelerators, NICs, storage) and the
    // bridges above them, and every PU and NUMA node even where cgroups disallow them (so devices
    // keep their locality inside a restricted container).
    static Topology live();
    // A saved hwloc XML topology (lstopo --of xml, or one clprobe annotated); keeps every object in it.
    static Topology from_xml_file(const std::string& path);
    static Topology from_xml_buffer(const std::string& xml);
    // hwloc's synthetic description, e.g. "pack:2 numa:2 core:8 pu:2" (no I/O objects).
    static Topology synthetic(const std::string& description);

    Topology(Topology&& other) noexcept;
    Topology& operator=(Topology&& other) noexcept;
    Topology(const Topology&) = delete;
    Topology& operator=(const Topology&) = delete;
    ~Topology();

    hwloc_topology_t get() const { return topology_; }
    hwloc_obj_t root() const { return hwloc_get_root_obj(topology_); }
    // True for the live machine only: process binding and sysfs can be asked about this topology.
    // (Tracked here rather than asked of hwloc alone, which HWLOC_THISSYSTEM=1 can talk into
    // calling an XML file this system.)
    bool is_live() const { return live_; }

    // The whole topology as hwloc XML (with any clprobe.* infos added to its objects).
    std::string export_xml() const;

  private:
    Topology(hwloc_topology_t topology, bool live) : topology_(topology), live_(live) {}
    hwloc_topology_t topology_ = nullptr;
    bool live_ = false;
};

}  // namespace clprobe

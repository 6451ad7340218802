#include "topology/hwloc_topology.hpp"

#include <hwloc/export.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <system_error>
#include <utility>

namespace clprobe {

namespace {

// Discovery components clprobe never wants: they start GPU runtimes (OpenCL would enumerate every
// platform from inside hwloc, gl connects to X servers) to name OS devices, which costs time, may
// print, and adds nothing: clprobe matches its device by PCI address. Names this hwloc build
// does not know are refused by hwloc and ignored here.
constexpr const char* unwanted_components[] = {"opencl", "gl", "cuda", "nvml", "rsmi", "levelzero"};

// init, configure, load; destroys the half-made topology and throws `what` on any failure, with
// the system's error text when it is about the system (parse errors only ever say EINVAL).
hwloc_topology_t load_with(const std::function<int(hwloc_topology_t)>& configure, const std::string& what,
                           bool say_errno) {
    hwloc_topology_t t = nullptr;
    if (hwloc_topology_init(&t) != 0) throw TopologyError("hwloc could not initialise a topology");
    errno = 0;
    if (configure(t) != 0 || hwloc_topology_load(t) != 0) {
        const int err = errno;
        hwloc_topology_destroy(t);
        throw TopologyError(what + (say_errno && err ? std::string(" (") + std::strerror(err) + ")" : std::string()));
    }
    return t;
}

}  // namespace

Topology Topology::live() {
    hwloc_topology_t loaded = load_with(
        [](hwloc_topology_t t) {
            for (const char* name : unwanted_components)
                hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, name);
            if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) return -1;
            // Instruction caches are off by default; the summary lists every cache level.
            if (hwloc_topology_set_icache_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) return -1;
            return hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
        },
        "hwloc could not read this machine's topology", true);
    // HWLOC_XMLFILE or HWLOC_SYNTHETIC in the environment make hwloc load something else; then
    // neither this process's binding nor this machine's sysfs describe what was loaded.
    return Topology(loaded, hwloc_topology_is_thissystem(loaded) != 0);
}

Topology Topology::from_xml_buffer(const std::string& xml) {
    return Topology(load_with(
                        [&](hwloc_topology_t t) {
                            if (hwloc_topology_set_flags(t, HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED) != 0) return -1;
                            if (hwloc_topology_set_all_types_filter(t, HWLOC_TYPE_FILTER_KEEP_ALL) != 0) return -1;
                            // The length hwloc wants counts the terminating NUL, as export_xmlbuffer's does.
                            return hwloc_topology_set_xmlbuffer(t, xml.c_str(), static_cast<int>(xml.size() + 1));
                        },
                        "not a valid hwloc XML topology", false),
                    false);
}

Topology Topology::from_xml_file(const std::string& path) {
    // Read the file here rather than through hwloc_topology_set_xml, so that a missing or
    // unreadable file is told apart from a malformed one.
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw TopologyError("it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw TopologyError(std::string("cannot read it: ") + std::strerror(errno));
    std::ostringstream text;
    text << in.rdbuf();
    if (in.bad()) throw TopologyError(std::string("cannot read it: ") + std::strerror(errno));
    if (text.str().empty()) throw TopologyError("the file is empty");
    return from_xml_buffer(text.str());
}

Topology Topology::synthetic(const std::string& description) {
    return Topology(load_with([&](hwloc_topology_t t) { return hwloc_topology_set_synthetic(t, description.c_str()); },
                              "not a valid hwloc synthetic description: " + description, false),
                    false);
}

Topology::Topology(Topology&& other) noexcept
    : topology_(std::exchange(other.topology_, nullptr)), live_(other.live_) {}

Topology& Topology::operator=(Topology&& other) noexcept {
    if (this != &other) {
        if (topology_) hwloc_topology_destroy(topology_);
        topology_ = std::exchange(other.topology_, nullptr);
        live_ = other.live_;
    }
    return *this;
}

Topology::~Topology() {
    if (topology_) hwloc_topology_destroy(topology_);
}

std::string Topology::export_xml() const {
    char* buffer = nullptr;
    int length = 0;
    if (hwloc_topology_export_xmlbuffer(topology_, &buffer, &length, 0) != 0 || !buffer)
        throw TopologyError("hwloc could not export the topology as XML");
    std::string xml(buffer, length > 0 ? static_cast<std::size_t>(length - 1) : 0);
    hwloc_free_xmlbuffer(topology_, buffer);
    return xml;
}

}  // namespace clprobe

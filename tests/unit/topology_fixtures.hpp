#pragma once
// The saved hwloc topologies of tests/fixtures/topology (see make_fixtures.py there).
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "topology/hwloc_topology.hpp"

namespace clprobe::test {

inline std::string topology_fixture_path(const std::string& name) {
    return std::string(CLPROBE_FIXTURES) + "/topology/" + name;
}

inline std::string topology_fixture_text(const std::string& name) {
    std::ifstream in(topology_fixture_path(name));
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

inline Topology topology_fixture(const std::string& name) {
    return Topology::from_xml_file(topology_fixture_path(name));
}

struct FixtureEdit {
    std::string anchor;  // e.g. pci_busid="0000:51:00.0": the edit applies to the first `from` after it
    std::string from, to;
};

// A variant of a fixture: each edit replaces the first `from` after its anchor (which must exist).
inline Topology edited_topology_fixture(const std::string& name, const std::vector<FixtureEdit>& edits) {
    std::string text = topology_fixture_text(name);
    for (const auto& e : edits) {
        const auto anchor = text.find(e.anchor);
        const auto at = anchor == std::string::npos ? anchor : text.find(e.from, anchor);
        if (at == std::string::npos)
            throw std::logic_error("fixture edit does not apply: " + e.anchor + " / " + e.from);
        text.replace(at, e.from.size(), e.to);
    }
    return Topology::from_xml_buffer(text);
}

}  // namespace clprobe::test

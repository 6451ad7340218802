#include "builtin_probes.hpp"

#include "probe_factories.hpp"

namespace clprobe {

ProbeList make_builtin_probes() {
    ProbeList probes;
    // One push_back per line of the registry, in its order (the order the comments there explain).
#define CLPROBE_PROBE(factory, parameters, arguments) probes.push_back(factory arguments);
#include "probe_list.inc"
#undef CLPROBE_PROBE
    return probes;
}

const std::vector<std::string>& builtin_probe_ids() {
    static const std::vector<std::string> ids = [] {
        std::vector<std::string> out;
        for (const auto& p : make_builtin_probes())
            out.push_back(p->id());
        return out;
    }();
    return ids;
}

}  // namespace clprobe

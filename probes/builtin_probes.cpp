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

}  // namespace clprobe

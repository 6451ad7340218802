#pragma once
#include "runtime/probe.hpp"

namespace clprobe {
// Every probe clprobe runs, in run order: the registry, made from probes/probe_list.inc.
// probes/README.md has the checklist for adding one; there is no static-initialisation registration.
ProbeList make_builtin_probes();
}  // namespace clprobe

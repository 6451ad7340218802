#pragma once
#include "runtime/probe.hpp"

namespace clprobe {
// Every probe clprobe runs, in run order: the registry, made from probes/probe_list.inc.
// probes/README.md has the checklist for adding one; there is no static-initialisation registration.
ProbeList make_builtin_probes();
// Their ids, in run order: what --probes, --skip, their completion and `list --probes` accept.
const std::vector<std::string>& builtin_probe_ids();
}  // namespace clprobe

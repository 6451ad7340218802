#pragma once
#include "runtime/probe.hpp"

namespace clprobe {
// Every probe clprobe runs, in run order. Adding a probe means adding it here (and to
// docs/report-schema.md's metric list); there is no static-initialisation registration.
ProbeList make_builtin_probes();
}  // namespace clprobe

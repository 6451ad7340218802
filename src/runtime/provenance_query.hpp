#pragma once
// The provenance of this process: the build (core/provenance) plus the versions of the shared
// libraries actually loaded, which can differ from those clprobe was compiled against.
#include "core/provenance.hpp"

namespace clprobe {

Provenance current_provenance();

}  // namespace clprobe

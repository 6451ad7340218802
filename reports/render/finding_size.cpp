#include "render/finding_size.hpp"

#include <fmt/core.h>

namespace clprobe {

FindingSize finding_size(const Finding& f) {
    if (f.kind == FindingKind::ranked && f.estimated_gain)
        return {FindingSize::Kind::gain, fmt::format("{:.0f}%", 100 * *f.estimated_gain)};
    if (f.factor) return {FindingSize::Kind::factor, fmt::format("{:.3g}x", *f.factor)};
    return {};
}

}  // namespace clprobe

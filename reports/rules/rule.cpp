#include "rules/rule.hpp"

#include <algorithm>
#include <cmath>

namespace clprobe {

double comparison_confidence(const Measurement& better, const Measurement& worse) {
    const double hi = std::max(better.summary.median, worse.summary.median);
    const double lo = std::min(better.summary.median, worse.summary.median);
    if (lo <= 0) return hi > 0 ? 1.0 : 0.0;
    const double gap = hi / lo - 1.0;
    // Noise: the two relative spreads added, with a floor of 1% so that a handful of identical
    // samples (cv 0) does not make any gap look certain.
    const double noise = std::max(0.01, better.summary.cv + worse.summary.cv);
    if (gap <= 2 * noise) return 0.0;
    return std::clamp(1.0 - 2 * noise / gap, 0.0, 1.0);
}

Evidence evidence_of(const Measurement& m, std::string expectation) {
    return {m.metric, m.labels, m.summary.median, m.unit, std::move(expectation)};
}

}  // namespace clprobe

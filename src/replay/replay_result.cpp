#include "replay/replay_result.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

namespace clprobe::replay {

std::string_view to_string(ReplayStatus s) {
    switch (s) {
        case ReplayStatus::replayed:
            return "replayed";
        case ReplayStatus::skipped:
            return "skipped";
        case ReplayStatus::invalid:
            return "invalid";
        case ReplayStatus::device_not_available:
            return "device_not_available";
        case ReplayStatus::build_failed:
            return "build_failed";
        case ReplayStatus::not_reproducible:
            return "not_reproducible";
        case ReplayStatus::failed:
            return "failed";
    }
    return "?";
}

std::string_view to_string(OutputCheck c) {
    switch (c) {
        case OutputCheck::identical:
            return "identical";
        case OutputCheck::within_tolerance:
            return "within_tolerance";
        case OutputCheck::changed:
            return "changed";
        case OutputCheck::not_checked:
            return "not_checked";
    }
    return "?";
}

std::string_view to_string(VariantKind k) {
    switch (k) {
        case VariantKind::as_captured:
            return "as_captured";
        case VariantKind::local_size:
            return "local_size";
        case VariantKind::build_options:
            return "build_options";
        case VariantKind::placement:
            return "placement";
    }
    return "?";
}

void judge_reliability(ReplayResult& result, const std::optional<KernelTotals>& totals) {
    result.reliable = false;
    if (result.status != ReplayStatus::replayed || result.variants.empty() || !result.variants[0].summary) {
        result.reliability = "not replayed";
        return;
    }
    if (!result.traced_ns) {
        result.reliability = "no traced time to check the replay against (the traced queue had no profiling)";
        return;
    }
    const Summary& s = *result.variants[0].summary;
    const double traced = static_cast<double>(*result.traced_ns);
    const double traced_spread = totals ? std::max(0.0, totals->spread) : 0.0;
    // The replay's own spread is not part of the band: a sub-microsecond kernel's outlier sample
    // would widen it to anything, and a replay that noisy must not be called reliable for it.
    const double band = std::max(min_reliability_band, traced_spread);
    const double off = s.median / traced - 1;
    result.reliable = std::isfinite(off) && std::fabs(off) <= band;
    result.reliability = fmt::format(
        "replayed median {:.0f} ns is {:+.0f}% of the traced {:.0f} ns; {} the band of {:.0f}% (max of 25% and "
        "the traced launches' spread {:.0f}%)",
        s.median, off * 100, traced, result.reliable ? "within" : "outside", band * 100, traced_spread * 100);
}

}  // namespace clprobe::replay

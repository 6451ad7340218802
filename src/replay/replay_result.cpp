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

namespace {

// (10th - 90th percentile) / median of sorted times: one outlying launch does not widen it.
double middle_spread(const std::vector<double>& sorted, double median) {
    if (sorted.empty() || median <= 0) return 0;
    const auto at = [&](double q) {
        return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
    };
    return (at(0.9) - at(0.1)) / median;
}

}  // namespace

void find_like_launches(ReplayResult& r, const ReplayContext& context) {
    r.traced_like.reset();
    r.traced_modes.reset();
    r.traced_like_spread = 0;
    const auto totals = context.kernels.find(r.kernel);
    if (totals == context.kernels.end() || totals->second.times_ns.empty()) {
        r.traced_like_basis = "no timed traced launch of this kernel";
        return;
    }
    const KernelTotals& k = totals->second;
    std::vector<double> times;
    const auto order = context.launch_shapes.find({r.pid, r.kernel});
    const std::size_t at = static_cast<std::size_t>(std::max(0LL, r.launch_ordinal - 1));
    if (order != context.launch_shapes.end() && r.launch_ordinal >= 1 && at < order->second.size() &&
        order->second[at] >= 0) {
        const auto shape = static_cast<std::size_t>(order->second[at]);
        times = k.times_ns[shape];
        r.traced_like_basis =
            fmt::format("{} traced launch{} of the captured one's shape (global size {}, {} bytes of buffers bound)",
                        times.size(), times.size() == 1 ? "" : "es", k.shapes[shape].first, k.shapes[shape].second);
    } else {
        for (const auto& t : k.times_ns)
            times.insert(times.end(), t.begin(), t.end());
        r.traced_like_basis = fmt::format(
            "all {} timed traced launches of the kernel (the captured launch is not in the timeline to match)",
            times.size());
    }
    std::sort(times.begin(), times.end());
    r.traced_like = summarize(times);
    r.traced_like_spread = middle_spread(times, r.traced_like->median);
    r.traced_modes = two_modes(times);
}

void judge_reliability(ReplayResult& result) {
    result.reliable = false;
    if (result.status != ReplayStatus::replayed || result.variants.empty() || !result.variants[0].summary) {
        result.reliability = "not replayed";
        return;
    }
    if (!result.traced_like) {
        result.reliability = "no traced time to check the replay against (the traced queue had no profiling)";
        return;
    }
    const Summary& s = *result.variants[0].summary;
    if (result.traced_modes) {
        // Two modes: the median between them says nothing, and their spread would call anything
        // reliable. The replay must land within the band of one mode.
        const auto& m = *result.traced_modes;
        const double fast_off = s.median / m.fast.median - 1, slow_off = s.median / m.slow.median - 1;
        const bool fast = std::fabs(fast_off) <= std::fabs(slow_off);
        const double off = fast ? fast_off : slow_off;
        result.reliable = std::isfinite(off) && std::fabs(off) <= min_reliability_band;
        result.reliability = fmt::format(
            "replayed median {:.0f} ns is {:+.0f}% of the {} mode ({:.0f} ns) of {}, bimodal ({:.0f} ns x {}, "
            "{:.0f} ns x {}); {} the band of {:.0f}%",
            s.median, off * 100, fast ? "fast" : "slow", fast ? m.fast.median : m.slow.median, result.traced_like_basis,
            m.fast.median, m.fast.n, m.slow.median, m.slow.n, result.reliable ? "within" : "outside",
            min_reliability_band * 100);
        return;
    }
    const double traced = result.traced_like->median;
    // The replay's own spread is not part of the band: a sub-microsecond kernel's outlier sample
    // would widen it to anything, and a replay that noisy must not be called reliable for it.
    const double band = std::max(min_reliability_band, result.traced_like_spread);
    const double off = s.median / traced - 1;
    result.reliable = std::isfinite(off) && std::fabs(off) <= band;
    result.reliability = fmt::format(
        "replayed median {:.0f} ns is {:+.0f}% of the median {:.0f} ns of {}; {} the band of {:.0f}% (max of 25% "
        "and those launches' spread {:.0f}%)",
        s.median, off * 100, traced, result.traced_like_basis, result.reliable ? "within" : "outside", band * 100,
        result.traced_like_spread * 100);
}

}  // namespace clprobe::replay

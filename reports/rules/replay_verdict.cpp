#include "rules/replay_verdict.hpp"

#include <fmt/core.h>

#include "rules/replay_findings.hpp"

namespace clprobe::replay {

namespace {

using Slice = std::pair<std::size_t, std::size_t>;  // [from, to) of a variant's samples

std::optional<SpeedupInterval> paired_over(const VariantResult& v, Slice s) {
    if (v.reference_ns.size() != v.samples_ns.size() || s.first >= s.second || s.second > v.samples_ns.size())
        return std::nullopt;
    const auto from = static_cast<std::ptrdiff_t>(s.first), to = static_cast<std::ptrdiff_t>(s.second);
    return paired_speedup({v.reference_ns.begin() + from, v.reference_ns.begin() + to},
                          {v.samples_ns.begin() + from, v.samples_ns.begin() + to}, min_replay_speedup);
}

// Every pair whose reference ran at the fast mode (at or below its split): a pair that straddled
// the two modes averages above the split and is left out with the slow ones.
std::optional<SpeedupInterval> fast_mode_speedup(const VariantResult& v, const TimeModes& modes) {
    std::vector<double> ref, var;
    for (std::size_t i = 0; i < v.samples_ns.size() && i < v.reference_ns.size(); ++i)
        if (v.reference_ns[i] <= modes.split) {
            ref.push_back(v.reference_ns[i]);
            var.push_back(v.samples_ns[i]);
        }
    if (ref.size() < min_fast_mode_pairs) return std::nullopt;
    return paired_speedup(ref, var, min_replay_speedup);
}

}  // namespace

std::string ns_text(double ns) {
    if (ns >= 1e9) return fmt::format("{:.3g} s", ns * 1e-9);
    if (ns >= 1e6) return fmt::format("{:.3g} ms", ns * 1e-6);
    if (ns >= 1e3) return fmt::format("{:.3g} us", ns * 1e-3);
    return fmt::format("{:.0f} ns", ns);
}

std::optional<TimeModes> replay_modes(const ReplayResult& r) {
    if (r.variants.empty()) return std::nullopt;
    return two_modes(r.variants[0].samples_ns);
}

std::string modes_text(const TimeModes& m) {
    return fmt::format("{} ({} launches) and {} ({})", ns_text(m.fast.median), m.fast.n, ns_text(m.slow.median),
                       m.slow.n);
}

std::string interval_text(const SpeedupInterval& s) {
    return fmt::format("{:.2f}x [{:.2f}-{:.2f}]", s.estimate, s.low, s.high);
}

bool worth_confirming(const VariantResult& v) {
    if (!rankable(v)) return false;
    const auto first = paired_over(v, {0, v.first_round});
    return first && first->low >= min_replay_speedup;
}

VariantVerdict judge_variant(const ReplayResult& r, const VariantResult& v) {
    VariantVerdict out;
    auto& s = out.speedups;
    s.first = paired_over(v, {0, v.first_round});
    s.confirmation = paired_over(v, {v.first_round, v.samples_ns.size()});
    s.pooled = paired_over(v, {0, v.samples_ns.size()});
    const auto modes = replay_modes(r);
    if (modes) s.fast_mode = fast_mode_speedup(v, *modes);
    if (!rankable(v)) {
        out.why = !v.failure.empty() ? "it did not run: " + v.failure : "its outputs changed";
        return out;
    }
    if (!s.first) {
        out.why = "not timed side by side with the launch as captured";
        return out;
    }
    if (s.first->low < min_replay_speedup) {
        out.why = fmt::format("within noise: {} over {} pairs, below {}x at its lower bound", interval_text(*s.first),
                              s.first->samples, min_replay_speedup);
        return out;
    }
    if (!s.confirmation) {
        out.why = fmt::format("not confirmed: {} in its first round, no confirmation round", interval_text(*s.first));
        return out;
    }
    if (s.confirmation->low < min_replay_speedup) {
        out.why = fmt::format("not confirmed: {} in its first round, {} in the confirmation round",
                              interval_text(*s.first), interval_text(*s.confirmation));
        return out;
    }
    if (modes && (!s.fast_mode || s.fast_mode->low < min_replay_speedup)) {
        out.why = fmt::format("bimodal as captured, {}: against its fast mode the variant gave {}", modes_text(*modes),
                              s.fast_mode ? interval_text(*s.fast_mode)
                                          : fmt::format("too few pairs ({} needed) to tell", min_fast_mode_pairs));
        return out;
    }
    if (r.traced_modes && !r.variants.empty() && r.variants[0].summary) {
        // The program's launches flip between two modes: the replay must have run the launch as
        // captured at the faster one, or its gain may be the program's slow mode, not the change.
        const double ref = r.variants[0].summary->median, fast = r.traced_modes->fast.median;
        if (ref > fast * (1 + min_reliability_band)) {
            out.why = fmt::format(
                "bimodal in the program, {}: the replay ran the launch as captured at {}, not at the faster mode",
                modes_text(*r.traced_modes), ns_text(ref));
            return out;
        }
    }
    out.ranked = true;
    out.why = fmt::format(
        "{} in its first round, {} confirmed in a second{}", interval_text(*s.first), interval_text(*s.confirmation),
        modes ? fmt::format("; against the fast mode of {}: {}", modes_text(*modes), interval_text(*s.fast_mode))
              : std::string());
    return out;
}

}  // namespace clprobe::replay

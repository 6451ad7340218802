#include "compare/confirmation.hpp"

#include <map>
#include <string>

#include "compare/between_runs.hpp"

namespace clprobe {

namespace {

bool is_difference(Verdict v) {
    return v == Verdict::faster || v == Verdict::slower;
}

// Records one repeat's reading of a difference; true when it confirms the first run's verdict: the
// repeat gave the same verdict or, where `first_band` allows, its ratio moved the same way beyond
// the band the first run's difference cleared. A figure the repeat did not judge (not measured, or
// measured beside other work) confirms nothing. `rate`: a higher ratio is better.
template <typename Judged>
bool confirms(Judged& first, const Judged* repeat, bool rate, bool first_band) {
    if (!repeat || !(is_difference(repeat->verdict) || repeat->verdict == Verdict::within_noise)) return false;
    first.repeat_ratios.push_back(repeat->ratio);
    if (repeat->verdict == first.verdict) return true;
    if (!first_band) return false;
    const bool ratio_falls = (first.verdict == Verdict::slower) == rate;
    return ratio_falls ? repeat->ratio < 1 / (1 + first.band) : repeat->ratio > 1 + first.band;
}

template <typename Judged>
void keep_or_withdraw(Judged& first, bool confirmed) {
    if (confirmed || !is_difference(first.verdict)) return;
    first.unconfirmed = first.verdict;
    first.verdict = Verdict::within_noise;
}

}  // namespace

void confirm_with_repeats(Comparison& first, const std::vector<Comparison>& repeats) {
    first.candidate_runs = 1 + static_cast<int>(repeats.size());
    std::vector<std::map<std::string, const MetricComparison*>> by_figure(repeats.size());
    for (std::size_t r = 0; r < repeats.size(); ++r)
        for (const auto& m : repeats[r].metrics)
            by_figure[r][figure_key(m.metric, m.labels)] = &m;
    for (auto& m : first.metrics) {
        if (!is_difference(m.verdict)) continue;
        bool confirmed = true;
        for (const auto& figures : by_figure) {
            const auto it = figures.find(figure_key(m.metric, m.labels));
            // A metric's repeat must give the verdict itself. Its band is the movement measured between
            // A's runs, the same for every run of B, plus that run's own spread; a repeat whose samples
            // spread widely is no confirmation. Judged by the first run's band instead, a same-machine
            // run's double-buffered GLM step (x1.73, then x2.36 with an interval of 1.67-10.2) was
            // called slower in both runs and failed the gate on the VM.
            confirmed = confirms(m, it == figures.end() ? nullptr : it->second, m.higher_is_better, false) && confirmed;
        }
        keep_or_withdraw(m, confirmed);
    }
    if (!first.machine) return;
    for (auto& shift : first.machine->shifts) {
        if (!is_difference(shift.verdict)) continue;
        bool confirmed = true;
        for (const auto& repeat : repeats) {
            const ReferenceShift* same = nullptr;
            if (repeat.machine)
                for (const auto& s : repeat.machine->shifts)
                    if (s.series == shift.series) same = &s;
            // A shift's band is the runs' own spread of reference checks: a repeat whose checks spread
            // 2x gets a 2x band. By the first run's band: a lost compute unit read x0.59, then x0.62
            // inside the repeat's own band, and was withdrawn by the verdict alone.
            confirmed = confirms(shift, same, true, true) && confirmed;
        }
        keep_or_withdraw(shift, confirmed);
    }
}

std::vector<const MetricComparison*> unconfirmed_metrics(const Comparison& c) {
    std::vector<const MetricComparison*> out;
    for (const auto& m : c.metrics)
        if (m.unconfirmed) out.push_back(&m);
    return out;
}

}  // namespace clprobe

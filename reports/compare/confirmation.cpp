#include "compare/confirmation.hpp"

#include <map>
#include <string>

#include "compare/between_runs.hpp"

namespace clprobe {

namespace {

bool is_difference(Verdict v) {
    return v == Verdict::faster || v == Verdict::slower;
}

// Records one repeat's reading of a difference; true when it confirms the first run's verdict. A
// figure the repeat did not judge (not measured, or measured beside other work) confirms nothing.
template <typename Judged>
bool confirms(Judged& first, const Judged* repeat) {
    if (!repeat || !(is_difference(repeat->verdict) || repeat->verdict == Verdict::within_noise)) return false;
    first.repeat_ratios.push_back(repeat->ratio);
    return repeat->verdict == first.verdict;
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
            confirmed = confirms(m, it == figures.end() ? nullptr : it->second) && confirmed;
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
            confirmed = confirms(shift, same) && confirmed;
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

#include "trace/capture_time.hpp"

#include <algorithm>

namespace clprobe {

namespace {

// Sorted, disjoint, clipped to [begin, end].
TimeCut::Intervals merged(TimeCut::Intervals v, std::uint64_t begin, std::uint64_t end) {
    std::sort(v.begin(), v.end());
    TimeCut::Intervals out;
    for (auto [a, b] : v) {
        a = std::max(a, begin);
        b = std::min(b, end);
        if (b <= a) continue;
        if (!out.empty() && a <= out.back().second) {
            out.back().second = std::max(out.back().second, b);
            continue;
        }
        out.emplace_back(a, b);
    }
    return out;
}

// `from` less `minus` (both sorted and disjoint).
TimeCut::Intervals subtract(const TimeCut::Intervals& from, const TimeCut::Intervals& minus) {
    TimeCut::Intervals out;
    std::size_t j = 0;
    for (auto [a, b] : from) {
        while (j < minus.size() && minus[j].second <= a)
            ++j;
        for (std::size_t k = j; k < minus.size() && minus[k].first < b; ++k) {
            if (minus[k].first > a) out.emplace_back(a, minus[k].first);
            a = std::max(a, minus[k].second);
        }
        if (a < b) out.emplace_back(a, b);
    }
    return out;
}

}  // namespace

TimeCut capture_cut(const ProgramTrace& trace, const AlignedTimes& aligned, const ChildRun& run) {
    TimeCut::Intervals busy;
    if (!trace.captures.empty())
        for (const auto& span : aligned.spans)
            if (span) busy.emplace_back(span->begin, span->end);
    return TimeCut(trace.captures, run.start_ns, std::max(run.start_ns, run.end_ns), std::move(busy));
}

TimeCut::TimeCut(Intervals intervals, std::uint64_t begin, std::uint64_t end, Intervals busy) {
    cuts_ = subtract(merged(std::move(intervals), begin, end), merged(std::move(busy), begin, end));
    for (const auto& [a, b] : cuts_) {
        before_.push_back(total_);
        total_ += b - a;
    }
}

std::uint64_t TimeCut::map(std::uint64_t t) const {
    // The last interval starting at or before t.
    const auto it =
        std::upper_bound(cuts_.begin(), cuts_.end(), t, [](std::uint64_t v, const auto& c) { return v < c.first; });
    if (it == cuts_.begin()) return t;
    const std::size_t i = static_cast<std::size_t>(it - cuts_.begin()) - 1;
    const auto& [a, b] = cuts_[i];
    return t < b ? a - before_[i] : t - before_[i] - (b - a);
}

ProgramTrace TimeCut::apply(const ProgramTrace& trace) const {
    ProgramTrace out = trace;
    const auto m = [this](std::uint64_t& t) {
        if (t) t = map(t);
    };
    for (auto& c : out.commands) {
        m(c.host_begin);
        m(c.host_end);
    }
    for (auto& w : out.waits) {
        m(w.host_begin);
        m(w.host_end);
    }
    for (auto& a : out.allocations) {
        m(a.created_begin);
        m(a.created_end);
        if (a.released_begin) m(*a.released_begin);
        if (a.released_end) m(*a.released_end);
    }
    for (auto& b : out.builds) {
        m(b.host_begin);
        m(b.host_end);
    }
    m(out.last_record);
    m(out.layer_start);
    if (out.layer_end) m(*out.layer_end);
    if (out.fatal_signal_at) m(*out.fatal_signal_at);
    if (out.sampling.since) m(*out.sampling.since);
    out.captures.clear();
    return out;
}

AlignedTimes TimeCut::apply(const AlignedTimes& aligned) const {
    AlignedTimes out = aligned;
    for (auto& span : out.spans)
        if (span) {
            span->begin = map(span->begin);
            span->end = map(span->end);
        }
    return out;
}

ChildRun TimeCut::apply(const ChildRun& run) const {
    ChildRun out = run;
    out.end_ns = map(run.end_ns);
    return out;
}

}  // namespace clprobe

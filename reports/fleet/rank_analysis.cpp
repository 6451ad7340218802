#include "fleet/rank_analysis.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "core/stats.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

bool is_number(const std::string& s) {
    return !s.empty() && s.size() < 10 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Numeric ranks in numeric order, before any that are not numbers (file names), those by name.
bool rank_before(const std::string& a, const std::string& b) {
    const bool na = is_number(a), nb = is_number(b);
    if (na != nb) return na;
    if (na) return std::stoi(a) < std::stoi(b);
    return a < b;
}

RankFigures figures_of(const RankSummary& s) {
    RankFigures f;
    f.rank = s.rank;
    f.source = s.source;
    f.host = s.host;
    f.device = s.device;
    f.wall_seconds = s.wall_seconds;
    f.kernel_seconds = s.stage(AppStage::kernel);
    f.transfer_seconds = s.stage(AppStage::transfer);
    f.build_seconds = s.stage(AppStage::build);
    f.host_wait_seconds = s.stage(AppStage::host_wait);
    f.device_idle_seconds = s.stage(AppStage::device_idle);
    f.host_only_seconds = s.stage(AppStage::host_only);
    f.device_busy_seconds = f.kernel_seconds + f.transfer_seconds;
    f.opencl_seconds = s.opencl_seconds();
    f.opencl_commands = s.opencl_commands;
    f.host_waits = s.host_waits;
    return f;
}

double median_over(const std::vector<RankSummary>& ranks, const std::function<double(const RankSummary&)>& of) {
    std::vector<double> v;
    v.reserve(ranks.size());
    for (const auto& r : ranks)
        v.push_back(of(r));
    return median_of(std::move(v));
}

RankFigures median_figures(const std::vector<RankFigures>& ranks) {
    auto m = [&](double RankFigures::*field) {
        std::vector<double> v;
        for (const auto& r : ranks)
            v.push_back(r.*field);
        return median_of(std::move(v));
    };
    auto mc = [&](std::uint64_t RankFigures::*field) {
        std::vector<double> v;
        for (const auto& r : ranks)
            v.push_back(static_cast<double>(r.*field));
        return static_cast<std::uint64_t>(std::llround(median_of(std::move(v))));
    };
    RankFigures f;
    f.rank = "median";
    for (double RankFigures::*field :
         {&RankFigures::wall_seconds, &RankFigures::device_busy_seconds, &RankFigures::kernel_seconds,
          &RankFigures::transfer_seconds, &RankFigures::build_seconds, &RankFigures::host_wait_seconds,
          &RankFigures::device_idle_seconds, &RankFigures::host_only_seconds, &RankFigures::opencl_seconds})
        f.*field = m(field);
    f.opencl_commands = mc(&RankFigures::opencl_commands);
    f.host_waits = mc(&RankFigures::host_waits);
    return f;
}

// The candidate on one basis: the rank with the largest value, against the other ranks' median.
SlowRank candidate(const std::vector<RankSummary>& ranks, const std::string& basis,
                   const std::function<double(const RankSummary&)>& of, const RankOptions& options,
                   std::size_t& index) {
    index = 0;
    for (std::size_t i = 1; i < ranks.size(); ++i)
        if (of(ranks[i]) > of(ranks[index])) index = i;
    std::vector<double> others;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        if (i != index) others.push_back(of(ranks[i]));
    SlowRank s;
    s.rank = ranks[index].rank;
    s.source = ranks[index].source;
    s.basis = basis;
    s.value = of(ranks[index]);
    s.reference = median_of(others);
    // One rank's wall time is one sample: the others' spread is the noise, once there are enough of them.
    const double spread =
        others.size() >= 3 ? options.mad_k * mad_to_stddev * median_absolute_deviation(others, s.reference) : 0;
    s.threshold = std::max(options.min_relative * s.reference, spread);
    s.slow = s.value > 0 && s.excess() > s.threshold;
    return s;
}

const RankItem* item_of(const RankSummary& r, const std::string& kind, const std::string& name) {
    for (const auto& i : r.items)
        if (i.kind == kind && i.name == name) return &i;
    return nullptr;
}

void explain(SlowRank& s, const std::vector<RankSummary>& ranks, std::size_t index) {
    std::vector<RankSummary> others;
    for (std::size_t i = 0; i < ranks.size(); ++i)
        if (i != index) others.push_back(ranks[i]);
    const RankSummary& slow = ranks[index];
    for (const AppStage stage : all_app_stages) {
        RankCause c{"stage", std::string(to_string(stage))};
        c.seconds = slow.stage(stage);
        c.reference_seconds = median_over(others, [stage](const RankSummary& r) { return r.stage(stage); });
        s.stages.push_back(c);
    }
    std::set<std::pair<std::string, std::string>> keys;
    for (const auto& r : ranks)
        for (const auto& i : r.items)
            keys.emplace(i.kind, i.name);
    for (const auto& key : keys) {
        RankCause c{key.first, key.second};
        const RankItem* mine = item_of(slow, key.first, key.second);
        c.seconds = mine ? mine->seconds : 0;
        c.count = mine ? static_cast<double>(mine->count) : 0;
        const std::string kind = key.first, name = key.second;
        c.reference_seconds = median_over(others, [&kind, &name](const RankSummary& r) {
            const RankItem* i = item_of(r, kind, name);
            return i ? i->seconds : 0.0;
        });
        c.reference_count = median_over(others, [&kind, &name](const RankSummary& r) {
            const RankItem* i = item_of(r, kind, name);
            return i ? static_cast<double>(i->count) : 0.0;
        });
        if (c.excess_seconds() > 0) s.causes.push_back(c);
    }
    RankCause waits{"host_wait", ""};
    waits.seconds = slow.stage(AppStage::host_wait);
    waits.count = static_cast<double>(slow.host_waits);
    waits.reference_seconds = median_over(others, [](const RankSummary& r) { return r.stage(AppStage::host_wait); });
    waits.reference_count = median_over(others, [](const RankSummary& r) { return static_cast<double>(r.host_waits); });
    if (waits.excess_seconds() > 0) s.causes.push_back(waits);
    const auto by_excess = [](const RankCause& a, const RankCause& b) {
        return a.excess_seconds() > b.excess_seconds();
    };
    std::stable_sort(s.stages.begin(), s.stages.end(), by_excess);
    std::stable_sort(s.causes.begin(), s.causes.end(), by_excess);
}

std::string seconds(double s) {
    return units::format(s, "s");
}

std::string count_text(double n) {
    return std::fabs(n - std::round(n)) < 1e-9 ? fmt::format("{:.0f}", n) : fmt::format("{:.1f}", n);
}

std::string cause_text(const RankCause& c) {
    const std::string diff = fmt::format("+{} ({} against {})", seconds(c.excess_seconds()), seconds(c.seconds),
                                         seconds(c.reference_seconds));
    if (c.kind == "kernel")
        return fmt::format("kernel '{}': {} of device time, {} launches against {}", c.name, diff, count_text(c.count),
                           count_text(c.reference_count));
    if (c.kind == "transfer")
        return fmt::format("transfers {}: {} of device time, {} against {}", c.name, diff, count_text(c.count),
                           count_text(c.reference_count));
    return fmt::format("host waits (clFinish, clWaitForEvents, blocking calls): {}, {} waits against {}", diff,
                       count_text(c.count), count_text(c.reference_count));
}

RankFinding slow_finding(const SlowRank& s, std::size_t ranks) {
    RankFinding f;
    f.id = "fleet.rank.slow";
    f.rank = s.rank;
    f.source = s.source;
    const bool wall = s.basis == "wall_time";
    f.title =
        fmt::format("rank {} is the slow rank: {} {} against {} for the median of the other {} rank(s) (+{:.0f}%)",
                    s.rank, seconds(s.value), wall ? "of wall time" : "of OpenCL work and waits", seconds(s.reference),
                    ranks - 1, 100 * s.relative());
    if (!wall)
        f.evidence.push_back(
            "every rank's wall time is alike (the job synchronises its ranks): the others wait for this one "
            "outside OpenCL");
    std::string stages;
    for (const auto& c : s.stages)
        if (c.excess_seconds() > 0 && c.excess_seconds() >= 0.05 * s.excess())
            stages += fmt::format("{}{} +{}", stages.empty() ? "" : ", ", c.name, seconds(c.excess_seconds()));
    if (!stages.empty()) f.evidence.push_back("stages longer than the other ranks': " + stages);
    // The parts worth 1% or more of the difference, up to 4; the rest are listed by the renderers.
    constexpr std::size_t shown = 4;
    std::size_t listed = 0;
    for (const auto& c : s.causes)
        if (listed < shown && c.excess_seconds() >= 0.01 * s.excess()) {
            f.evidence.push_back(cause_text(c));
            ++listed;
        }
    if (s.causes.size() > listed)
        f.evidence.push_back(fmt::format("{} smaller difference(s)", s.causes.size() - listed));
    return f;
}

}  // namespace

RankAnalysis analyze_ranks(std::vector<RankSummary> ranks, std::vector<UnpairedReport> unpaired,
                           const RankOptions& options) {
    RankAnalysis a;
    a.options = options;
    a.unpaired = std::move(unpaired);
    std::stable_sort(ranks.begin(), ranks.end(),
                     [](const RankSummary& x, const RankSummary& y) { return rank_before(x.rank, y.rank); });
    for (const auto& r : ranks)
        a.ranks.push_back(figures_of(r));
    a.median = median_figures(a.ranks);
    std::set<int> sizes;
    for (const auto& r : ranks)
        if (r.size) sizes.insert(*r.size);
    if (sizes.size() == 1) {
        a.size = *sizes.begin();
        for (int i = 0; i < *a.size; ++i) {
            const std::string name = std::to_string(i);
            if (std::none_of(ranks.begin(), ranks.end(), [&name](const RankSummary& r) { return r.rank == name; }))
                a.missing_ranks.push_back(name);
        }
    }
    if (ranks.size() < 2) return a;
    std::size_t index = 0;
    SlowRank s = candidate(
        ranks, "wall_time", [](const RankSummary& r) { return r.wall_seconds; }, options, index);
    if (!s.slow) {
        std::size_t by_work = 0;
        SlowRank w = candidate(
            ranks, "opencl_time", [](const RankSummary& r) { return r.opencl_seconds(); }, options, by_work);
        if (w.slow) {
            s = std::move(w);
            index = by_work;
        }
    }
    explain(s, ranks, index);
    if (s.slow) a.findings.push_back(slow_finding(s, ranks.size()));
    a.slowest = std::move(s);
    return a;
}

}  // namespace clprobe

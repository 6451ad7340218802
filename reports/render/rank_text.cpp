#include "render/rank_text.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "json/rank_json.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

std::string s(double seconds) {
    return units::format(seconds, "s");
}

std::string cause_name(const RankCause& c) {
    if (c.kind == "kernel") return "kernel " + c.name;
    if (c.kind == "transfer") return "transfers " + c.name;
    if (c.kind == "host_wait") return "host waits";
    return c.name;
}

std::string count_of(double n) {
    return fmt::format("{:.6g}", n);
}

std::size_t causes_shown(const SlowRank& r, const RenderOptions& o) {
    return o.verbose ? r.causes.size() : std::min<std::size_t>(r.causes.size(), 8);
}

std::string verdict(const RankAnalysis& a) {
    if (!a.slowest) return "one rank: nothing to compare";
    const SlowRank& r = *a.slowest;
    if (r.slow) return a.findings.front().title;
    return fmt::format(
        "no rank is slow: rank {} ran longest, {} against {} for the median of the others (+{:.1f}%, within "
        "the threshold of {})",
        r.rank, s(r.value), s(r.reference), 100 * r.relative(), s(r.threshold));
}

std::string render_json(const RankAnalysis& a, const RenderOptions&) {
    return ranks_to_json(a).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

constexpr OutputFormat<RankAnalysis> formats[] = {
    {"text", "the terminal view", render_ranks_text},
    {"md", "Markdown tables, for a ticket", render_ranks_markdown},
    {"json", "the analysis as data, docs/fleet.schema.json (of trace reports: docs/fleet-ranks.schema.json)",
     render_json},
    {"html", "one self-contained page", render_ranks_html}};

constexpr FormatTable<RankAnalysis> table(formats, "fleet");

}  // namespace

const FormatTable<RankAnalysis>& rank_formats() {
    return table;
}

std::string render_ranks_text(const RankAnalysis& a, const RenderOptions& o) {
    std::string out = fmt::format("Ranks: {} trace report(s){}; {} report(s) not paired\n", a.ranks.size(),
                                  a.size ? fmt::format(" of a job of {} rank(s)", *a.size) : "", a.unpaired.size());
    if (!a.missing_ranks.empty()) {
        std::string missing;
        for (const auto& m : a.missing_ranks)
            missing += (missing.empty() ? "" : ", ") + m;
        out += fmt::format("Missing: no report of rank(s) {}\n", missing);
    }
    out += fmt::format("\n  {:<8} {:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n", "rank", "host", "wall",
                       "dev busy", "kernel", "transfer", "host wait", "dev idle", "commands");
    auto row = [&](const RankFigures& f) {
        out += fmt::format("  {:<8} {:<16} {:>10} {:>10} {:>10} {:>10} {:>10} {:>10} {:>9}\n", f.rank, f.host,
                           s(f.wall_seconds), s(f.device_busy_seconds), s(f.kernel_seconds), s(f.transfer_seconds),
                           s(f.host_wait_seconds), s(f.device_idle_seconds), f.opencl_commands);
    };
    for (const auto& f : a.ranks)
        row(f);
    row(a.median);
    out += "\n" + verdict(a) + "\n";
    if (!a.findings.empty()) {
        out += fmt::format("  [{}]\n", a.findings.front().id);
        for (const auto& e : a.findings.front().evidence)
            out += "  - " + e + "\n";
    }
    if (a.slowest) {
        const SlowRank& r = *a.slowest;
        out += fmt::format("\nRank {} against the median of the other ranks ({}):\n", r.rank,
                           r.basis == "wall_time" ? "by wall time" : "by OpenCL work and waits");
        out += fmt::format("  {:<40} {:>10} {:>10} {:>10} {:>12} {:>12}\n", "part", "rank " + r.rank, "others",
                           "excess", "count", "others");
        for (const auto& c : r.stages)
            out += fmt::format("  {:<40} {:>10} {:>10} {:>10}\n", "stage " + c.name, s(c.seconds),
                               s(c.reference_seconds), s(c.excess_seconds()));
        for (std::size_t i = 0; i < causes_shown(r, o); ++i) {
            const RankCause& c = r.causes[i];
            out += fmt::format("  {:<40} {:>10} {:>10} {:>10} {:>12} {:>12}\n", cause_name(c), s(c.seconds),
                               s(c.reference_seconds), s(c.excess_seconds()), count_of(c.count),
                               count_of(c.reference_count));
        }
        if (causes_shown(r, o) < r.causes.size())
            out += fmt::format("  ... {} more (-v lists them)\n", r.causes.size() - causes_shown(r, o));
    }
    if (!a.unpaired.empty()) {
        out += fmt::format("\nNot paired: {}\n", a.unpaired.size());
        for (const auto& u : a.unpaired)
            out += fmt::format("  {}: {}\n", u.source, u.reason);
    }
    return out;
}

std::string render_ranks_markdown(const RankAnalysis& a, const RenderOptions& o) {
    std::string out = fmt::format("# {} rank(s) of a traced job\n\n", a.ranks.size());
    out +=
        "| rank | host | wall | device busy | kernel | transfer | host wait | device idle | commands |\n"
        "|---|---|---|---|---|---|---|---|---|\n";
    auto row = [&](const RankFigures& f) {
        out += fmt::format("| {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", f.rank, f.host, s(f.wall_seconds),
                           s(f.device_busy_seconds), s(f.kernel_seconds), s(f.transfer_seconds), s(f.host_wait_seconds),
                           s(f.device_idle_seconds), f.opencl_commands);
    };
    for (const auto& f : a.ranks)
        row(f);
    row(a.median);
    out += "\n## Slowest rank\n\n" + verdict(a) + "\n";
    for (const auto& f : a.findings) {
        out += fmt::format("\n`{}`\n\n", f.id);
        for (const auto& e : f.evidence)
            out += "- " + e + "\n";
    }
    if (a.slowest) {
        const SlowRank& r = *a.slowest;
        out += fmt::format(
            "\n| part | rank {} | others (median) | excess | count | others |\n|---|---|---|---|---|---|\n", r.rank);
        for (const auto& c : r.stages)
            out += fmt::format("| stage {} | {} | {} | {} | | |\n", c.name, s(c.seconds), s(c.reference_seconds),
                               s(c.excess_seconds()));
        for (std::size_t i = 0; i < causes_shown(r, o); ++i) {
            const RankCause& c = r.causes[i];
            out += fmt::format("| {} | {} | {} | {} | {} | {} |\n", cause_name(c), s(c.seconds), s(c.reference_seconds),
                               s(c.excess_seconds()), count_of(c.count), count_of(c.reference_count));
        }
    }
    if (!a.unpaired.empty()) {
        out += "\n## Not paired\n\n";
        for (const auto& u : a.unpaired)
            out += fmt::format("- `{}`: {}\n", u.source, u.reason);
    }
    return out;
}

}  // namespace clprobe

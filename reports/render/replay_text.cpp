#include "render/replay_text.hpp"

#include <fmt/core.h>

#include "json/replay_json.hpp"
#include "rules/replay_findings.hpp"
#include "rules/replay_verdict.hpp"

namespace clprobe::replay {

namespace {

std::string kind_text(VariantKind k) {
    switch (k) {
        case VariantKind::as_captured:
            return "as captured";
        case VariantKind::local_size:
            return "local size";
        case VariantKind::build_options:
            return "build";
        case VariantKind::placement:
            return "placement";
    }
    return "?";
}

std::string outputs_text(const ReplayResult& r, const VariantResult& v) {
    if (!v.failure.empty()) return "did not run: " + v.failure;
    switch (v.check) {
        case OutputCheck::identical:
            return v.kind == VariantKind::as_captured ? "identical to the captured (reference)" : "identical";
        case OutputCheck::within_tolerance:
            return fmt::format("within tolerance {:g}: max abs {:.3g}, max rel {:.3g}", r.tolerance, v.errors->max_abs,
                               v.errors->max_rel);
        case OutputCheck::changed:
            return fmt::format("CHANGED ({}), not ranked", v.errors ? v.errors->where : std::string("differs"));
        case OutputCheck::not_checked:
            return "not checked";
    }
    return "?";
}

// The verdict in a word or two, for a table cell; the whole line is in replay_notes.
std::string short_verdict(const VariantVerdict& verdict) {
    if (verdict.ranked) return "ranked";
    for (const char* word : {"within noise", "not confirmed", "bimodal", "not timed"})
        if (verdict.why.find(word) != std::string::npos) return word;
    return "not ranked";
}

}  // namespace

std::vector<std::string> replay_notes(const ReplayResult& r) {
    std::vector<std::string> notes;
    if (r.status != ReplayStatus::replayed) return notes;
    if (const auto m = replay_modes(r)) notes.push_back("bimodal as captured: " + modes_text(*m));
    if (r.traced_modes) notes.push_back("bimodal in the program: " + modes_text(*r.traced_modes));
    for (const auto& v : r.variants) {
        if (v.kind == VariantKind::as_captured || !v.failure.empty() || !rankable(v)) continue;
        const VariantVerdict verdict = judge_variant(r, v);
        const auto stated = verdict.stated();
        // The variants that looked faster: what ranked them, or what did not.
        if (verdict.ranked || (stated && stated->estimate >= min_replay_speedup))
            notes.push_back(fmt::format("{} {}: {}", kind_text(v.kind), v.label, verdict.why));
    }
    return notes;
}

std::vector<WhatIfRow> what_if_rows(const ReplayResult& r) {
    std::vector<WhatIfRow> rows;
    if (r.variants.empty()) return rows;
    const VariantResult& ref = r.variants[0];
    for (const auto& v : r.variants) {
        // Once per variant: each verdict bootstraps its pairs, and the row shows two sides of it.
        const std::optional<VariantVerdict> verdict =
            v.kind == VariantKind::as_captured ? std::nullopt : std::optional(judge_variant(r, v));
        WhatIfRow row{std::string(kind_text(v.kind)),
                      v.kind == VariantKind::as_captured ? "local " + v.local_size : v.label,
                      "-",
                      "-",
                      "-",
                      "-",
                      outputs_text(r, v),
                      ""};
        if (v.summary) {
            row.median = ns_text(v.summary->median);
            if (v.summary->median > 0)
                row.spread = fmt::format("{:.0f}%", (v.summary->max - v.summary->min) / v.summary->median * 100);
            row.samples = std::to_string(v.summary->n);
            if (!verdict) {
                // the launch as captured: nothing to compare with itself
            } else if (const auto stated = verdict->stated()) {
                row.speedup = interval_text(*stated);
            } else if (const auto ratio = time_ratio(ref, v); ratio && *ratio > 0) {
                row.speedup = fmt::format("{:.2f}x", 1 / *ratio);
            }
        }
        // A changed answer is said in the outputs column; it is never ranked.
        if (verdict && rankable(v)) row.verdict = short_verdict(*verdict);
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string replay_heading(const ReplayResult& r) {
    return fmt::format("Replay of `{}` (capture {}, pid {}){}", r.kernel.empty() ? "?" : r.kernel, r.folder, r.pid,
                       r.device.empty() ? "" : " on " + r.device);
}

std::string replay_verdict(const ReplayResult& r) {
    if (r.status != ReplayStatus::replayed) return fmt::format("{}: {}", to_string(r.status), r.reason);
    return fmt::format("{}: {}", r.reliable ? "reliable" : "UNRELIABLE (no what-if is ranked)", r.reliability);
}

std::string replay_text(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings) {
    std::string out;
    if (results.empty()) return "No captures to replay.\n";
    for (const auto& r : results) {
        out += replay_heading(r) + "\n  " + replay_verdict(r) + "\n";
        if (r.status != ReplayStatus::replayed) {
            for (const auto& v : r.variants)
                if (v.summary)
                    out += fmt::format("  as captured: median {} of {} launches; {}\n", ns_text(v.summary->median),
                                       v.summary->n, outputs_text(r, v));
            out += "\n";
            continue;
        }
        if (r.bandwidth)
            out += fmt::format(
                "  bandwidth: {:.3g} GB/s over {:.3g} MB of its buffers; a copy of them runs at {:.3g} GB/s by {} "
                "({:.0f}% of that roof)\n",
                r.bandwidth->kernel_gbps, r.bandwidth->bytes * 1e-6, r.bandwidth->copy_gbps,
                r.bandwidth->copy_method.empty() ? "clEnqueueCopyBuffer/Image" : r.bandwidth->copy_method,
                r.bandwidth->copy_gbps > 0 ? r.bandwidth->kernel_gbps / r.bandwidth->copy_gbps * 100 : 0);
        out += fmt::format("  {:<12} {:<38} {:>10} {:>8} {:>4} {:>22} {:<13}  {}\n", "what-if", "variant", "median",
                           "spread", "n", "speed-up [95%]", "verdict", "outputs");
        for (auto& row : what_if_rows(r)) {
            if (row.variant.size() > 38) row.variant = row.variant.substr(0, 35) + "...";
            out += fmt::format("  {:<12} {:<38} {:>10} {:>8} {:>4} {:>22} {:<13}  {}\n", row.what_if, row.variant,
                               row.median, row.spread, row.samples, row.speedup, row.verdict, row.outputs);
        }
        for (const auto& note : replay_notes(r))
            out += "  " + note + "\n";
        out += "\n";
    }
    if (!findings.empty()) {
        out += "Measured what-ifs (share of the program's wall time):\n";
        for (const auto& f : findings)
            out += fmt::format("  {} {}{}\n", f.rank > 0 ? fmt::format("{}.", f.rank) : std::string("-"), f.title,
                               !f.not_ranked.empty() ? " (not ranked: " + f.not_ranked + ")"
                               : f.uncertain         ? std::string(" (inside the noise, not ranked)")
                                                     : std::string());
    }
    return out;
}

std::string replay_section_text(const RunReport& report) {
    const ProbeResult* result = find_result(report, replay_probe_id);
    if (!result) return {};
    const std::vector<ReplayResult> results =
        replay_results_from_json(result->attributes.value("replay", nlohmann::json()));
    if (results.empty()) return {};
    // The findings it measured are ranked among the report's own, above.
    return fmt::format("What-if replays ({} in {})\n", results.size(), ns_text(result->wall_seconds * 1e9)) +
           replay_text(results, {});
}

}  // namespace clprobe::replay

// clprobe compare A.json B.json: what moved beyond the noise between two runs or two machines,
// and what in the environment differs.
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "cli/movement_cache.hpp"
#include "compare/between_runs.hpp"
#include "compare/comparison.hpp"
#include "compare/confirmation.hpp"
#include "compare/machine_choice.hpp"
#include "compare/run_passes.hpp"
#include "core/atomic_file.hpp"
#include "core/log.hpp"
#include "json/comparison_json.hpp"
#include "json/machine_choice_json.hpp"
#include "render/comparison_junit.hpp"
#include "render/comparison_text.hpp"
#include "rules/analysis.hpp"

namespace clprobe {

namespace {

struct CompareCliOptions {
    std::string a, b;
    std::vector<std::string> a_repeats;
    std::vector<std::string> b_repeats;
    double threshold_pct = 5;
    bool fail_on_regression = false;
    bool json = false;
    std::string junit;  // --junit FILE
    bool verbose = false;
    bool normalise = false;
};

// Further runs of one report's machine and build. Not analysed: only their measurements are
// compared (the movement between A's runs, the verdicts that confirm B's), never their findings. A
// run on another device or driver would measure that difference, not the noise: a usage error.
std::vector<RunReport> load_repeats(const RunReport& of, const std::vector<std::string>& paths, const char* option,
                                    const char* side) {
    const auto device_name = [](const RunReport& x) { return x.device ? x.device->name : std::string("no device"); };
    std::vector<RunReport> out;
    for (const auto& path : paths) {
        out.push_back(load_report(path));
        const RunReport& r = out.back();
        if (device_name(r) != device_name(of) || driver_change(of, r))
            throw UsageError(fmt::format("{} '{}' ran on {}, not on {}'s device {} with {}'s driver", option, path,
                                         device_name(r), side, device_name(of), side));
    }
    return out;
}

// A report's passes 2..N (diagnose --passes N), then the runs named by `option`: the further runs
// of its machine and build. A pass of another device is a usage error, as a repeat of one is.
std::vector<RunReport> further_runs(const RunReport& of, const std::string& path,
                                    const std::vector<std::string>& repeats, const char* option, const char* side) {
    if (const auto problem = foreign_pass(of))
        throw UsageError(fmt::format("{} '{}' cannot be compared: {}", side, path, *problem));
    std::vector<RunReport> out = further_pass_reports(of);
    for (auto& r : load_repeats(of, repeats, option, side))
        out.push_back(std::move(r));
    return out;
}

// How far A's figures move between runs: measured from A's passes and repeats, and at least as far
// as the last runs of A's host, device and options moved between each other when enough are kept
// (cli/movement_cache.hpp); nullopt when neither is known.
std::optional<BetweenRunNoise> movement_of(const RunReport& a, const std::vector<RunReport>& repeats,
                                           double threshold) {
    std::optional<BetweenRunNoise> measured;
    if (!repeats.empty()) {
        std::vector<const RunReport*> runs{&a};
        for (const auto& r : repeats)
            runs.push_back(&r);
        measured = measure_between_runs(runs, threshold);
    }
    std::string why;
    std::optional<BetweenRunNoise> known = load_known_movement(a, why);
    if (!why.empty()) Log::warn("the machine's known movement between runs is not used: {}", why);
    if (!known) return measured;
    std::string from = known->known_from;
    return with_known_movement(std::move(measured), std::move(*known), std::move(from));
}

// The gate fails on a slower machine (its drift reference, fastest checks) as on a slower headline
// metric or workload; stderr names each, with the environment differences that explain it.
void report_regression(const Comparison& c, double threshold_pct) {
    std::string names;
    auto add = [&](const std::string& n) { names += (names.empty() ? "" : "; ") + n; };
    if (c.machine)
        for (const auto* s : c.machine->regressions())
            add("the machine " + describe(*s));
    for (const auto* m : c.headline_regressions())
        add(m->metric);
    for (const auto& f : c.family_regressions())
        add(fmt::format("{} ({} variants slower, none faster)", f.family, f.variants));
    for (const auto& e : c.explanations)
        add(e);
    fmt::print(stderr, "clprobe: regression beyond {:.0f}%: {}\n", threshold_pct, names);
    if (c.baseline_runs < 2 && c.movement_known_from.empty() && !c.driver)
        fmt::print(stderr,
                   "clprobe: A is a single pass and this machine's movement between runs is not known: these "
                   "verdicts cannot separate a change from it (diagnose --passes 2 on each side)\n");
}

int run_compare(const CompareCliOptions& o) {
    // An unwritable JUnit file fails before any work, as diagnose's outputs do.
    if (!o.junit.empty()) check_output_path(o.junit);
    RunReport a = load_report(o.a), b = load_report(o.b);
    // Both sides judged by the same (current) rules, so "finding only in B" means B's numbers.
    analyze(a);
    analyze(b);
    CompareOptions options;
    options.threshold = o.threshold_pct / 100.0;
    options.normalise = o.normalise;
    // More runs of A's machine and build (its passes, --baseline-repeat): how far its figures move
    // between runs, measured.
    const std::vector<RunReport> repeats = further_runs(a, o.a, o.a_repeats, "--baseline-repeat", "A");
    // More runs of B's (passes, --candidate-repeat): a difference counts only when each shows it.
    const std::vector<RunReport> b_repeats = further_runs(b, o.b, o.b_repeats, "--candidate-repeat", "B");
    const std::optional<BetweenRunNoise> noise = movement_of(a, repeats, options.threshold);
    if (noise) options.between_runs = &*noise;
    Comparison c = compare_reports(a, b, options);
    if (!b_repeats.empty()) {
        std::vector<Comparison> confirmations;
        for (auto& r : b_repeats)
            confirmations.push_back(compare_reports(a, r, options));
        confirm_with_repeats(c, confirmations);
    }
    // Which of the two to run each workload on: best, best value, cheapest.
    const auto choices = choose_machines({{o.a, workload_economics(a)}, {o.b, workload_economics(b)}});
    if (!o.junit.empty()) write_file_atomically(o.junit, render_comparison_junit(c, {o.a, o.b}));
    if (o.json) {
        nlohmann::json doc = comparison_to_json(c);
        doc["machine_choice"] = machine_choices_to_json(choices);
        fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
        fmt::print("{}{}", render_comparison_text(c, {o.verbose, color_stdout()}), render_machine_choices(choices));
    }
    if (o.fail_on_regression && c.regressed()) {
        report_regression(c, o.threshold_pct);
        return exit_code::regression;
    }
    return exit_code::ok;
}

}  // namespace

CommandRunner add_compare_command(CLI::App& app) {
    auto opts = std::make_shared<CompareCliOptions>();
    CLI::App* cmd = app.add_subcommand("compare", "Compare two saved reports, separating real differences from noise");
    cmd->add_option("a", opts->a, "Baseline report (A)")->required();
    cmd->add_option("b", opts->b, "Report to compare with it (B)")->required();
    cmd->add_option("--threshold", opts->threshold_pct, "Smallest change, in percent, that counts as a difference")
        ->check(CLI::Range(0.0, 1000.0))
        ->capture_default_str();
    cmd->add_flag("--fail-on-regression", opts->fail_on_regression,
                  "Exit with code 4 when the machine (its drift reference), a headline metric or (with "
                  "--baseline-repeat) a workload as a whole is significantly worse in B beyond the threshold");
    cmd->add_flag("--normalise", opts->normalise,
                  "Scale timed metrics by the drift reference measured around their probe (off by default: see "
                  "docs/report-schema.md, Machine drift)");
    cmd->add_option("--baseline-repeat", opts->a_repeats,
                    "Another run of A's machine and build (repeatable): each metric's band is at least how far its "
                    "family moved between the runs of A")
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_option("--candidate-repeat", opts->b_repeats,
                    "Another run of B's machine and build (repeatable): a difference is called, and fails the gate, "
                    "only when every run of B shows it")
        ->allow_extra_args(false)
        ->take_all();
    cmd->add_flag("--json", opts->json, "Print the comparison as JSON");
    cmd->add_option("--junit", opts->junit,
                    "Also write the gate's verdicts as JUnit XML to FILE: a test case for the machine, each headline "
                    "metric and each workload, failed where --fail-on-regression fails");
    cmd->add_flag("-v,--verbose", opts->verbose, "List every paired metric");
    return [opts] { return run_compare(*opts); };
}

}  // namespace clprobe

// clprobe compare A.json B.json: what moved beyond the noise between two runs or two machines,
// and what in the environment differs.
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "compare/between_runs.hpp"
#include "compare/comparison.hpp"
#include "compare/confirmation.hpp"
#include "compare/machine_choice.hpp"
#include "json/comparison_json.hpp"
#include "json/machine_choice_json.hpp"
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

int run_compare(const CompareCliOptions& o) {
    RunReport a = load_report(o.a), b = load_report(o.b);
    // Both sides judged by the same (current) rules, so "finding only in B" means B's numbers.
    analyze(a);
    analyze(b);
    CompareOptions options;
    options.threshold = o.threshold_pct / 100.0;
    options.normalise = o.normalise;
    // More runs of A's machine and build: how far its figures move between runs, measured.
    const std::vector<RunReport> repeats = load_repeats(a, o.a_repeats, "--baseline-repeat", "A");
    // More runs of B's: a difference counts only when each of them shows it.
    const std::vector<RunReport> b_repeats = load_repeats(b, o.b_repeats, "--candidate-repeat", "B");
    BetweenRunNoise noise;
    if (!repeats.empty()) {
        std::vector<const RunReport*> runs{&a};
        for (const auto& r : repeats)
            runs.push_back(&r);
        noise = measure_between_runs(runs, options.threshold);
        options.between_runs = &noise;
    }
    Comparison c = compare_reports(a, b, options);
    if (!b_repeats.empty()) {
        std::vector<Comparison> confirmations;
        for (auto& r : b_repeats)
            confirmations.push_back(compare_reports(a, r, options));
        confirm_with_repeats(c, confirmations);
    }
    // Which of the two to run each workload on: best, best value, cheapest.
    const auto choices = choose_machines({{o.a, workload_economics(a)}, {o.b, workload_economics(b)}});
    if (o.json) {
        nlohmann::json doc = comparison_to_json(c);
        doc["machine_choice"] = machine_choices_to_json(choices);
        fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
        fmt::print("{}{}", render_comparison_text(c, {o.verbose, color_stdout()}), render_machine_choices(choices));
    }
    // The gate fails on a slower machine (its drift reference, fastest checks) as on a slower
    // headline metric; each is named, with the environment differences that explain it.
    if (o.fail_on_regression && c.regressed()) {
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
        fmt::print(stderr, "clprobe: regression beyond {:.0f}%: {}\n", o.threshold_pct, names);
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
    cmd->add_flag("-v,--verbose", opts->verbose, "List every paired metric");
    return [opts] { return run_compare(*opts); };
}

}  // namespace clprobe

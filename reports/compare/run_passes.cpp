#include "compare/run_passes.hpp"

#include <fmt/core.h>

namespace clprobe {

namespace {

// The movement between runs is judged as compare judges two runs; its threshold only marks what
// compare would call, and the ratios are pooled whatever it is.
constexpr double pass_threshold = 0.05;

}  // namespace

std::vector<RunReport> further_pass_reports(const RunReport& report) {
    std::vector<RunReport> out;
    for (const auto& pass : report.passes)
        out.push_back(pass_as_report(report, pass));
    return out;
}

std::optional<std::string> foreign_pass(const RunReport& report) {
    const std::string device = report.device ? report.device->name : std::string("no device");
    for (const auto& pass : report.passes)
        if (pass.device != device)
            return fmt::format("its pass {} ran on {}, not on its device {}", pass.number, pass.device, device);
    return std::nullopt;
}

std::optional<BetweenRunNoise> movement_between_passes(const RunReport& report) {
    if (report.passes.empty()) return std::nullopt;
    const std::vector<RunReport> others = further_pass_reports(report);
    std::vector<const RunReport*> runs{&report};
    for (const auto& r : others)
        runs.push_back(&r);
    return measure_between_runs(runs, pass_threshold);
}

}  // namespace clprobe

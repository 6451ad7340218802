#include "compare/run_passes.hpp"

#include <fmt/core.h>

#include <stdexcept>

namespace clprobe {

namespace {

// The movement between runs is judged as compare judges two runs; its threshold only marks what
// compare would call, and the ratios are pooled whatever it is.
constexpr double pass_threshold = 0.05;

nlohmann::json noises_to_json(const std::map<std::string, FamilyNoise>& noises) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, n] : noises)
        out[name] = {{"sigma_log", n.sigma_log}, {"ratios", n.ratios}};
    return out;
}

std::map<std::string, FamilyNoise> noises_from_json(const nlohmann::json& j) {
    if (!j.is_object()) throw std::invalid_argument("expected an object of families or figures");
    std::map<std::string, FamilyNoise> out;
    for (const auto& [name, n] : j.items()) {
        FamilyNoise f;
        f.sigma_log = n.at("sigma_log").get<double>();
        f.ratios = n.at("ratios").get<int>();
        if (!(f.sigma_log >= 0) || f.ratios < 1) throw std::invalid_argument("'" + name + "' is not a movement");
        out[name] = f;
    }
    return out;
}

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

nlohmann::json movement_to_json(const BetweenRunNoise& noise) {
    return {{"runs", noise.runs},
            {"z", noise.z},
            {"family_weight", noise.family_weight},
            {"families", noises_to_json(noise.families)},
            {"figures", noises_to_json(noise.figures)}};
}

BetweenRunNoise movement_from_json(const nlohmann::json& j) {
    try {
        BetweenRunNoise noise;
        noise.runs = j.at("runs").get<int>();
        noise.z = j.at("z").get<double>();
        noise.family_weight = j.at("family_weight").get<double>();
        noise.families = noises_from_json(j.at("families"));
        noise.figures = noises_from_json(j.at("figures"));
        if (noise.runs < 2 || !(noise.z > 0) || !(noise.family_weight >= 0))
            throw std::invalid_argument("runs, z or family_weight out of range");
        return noise;
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(e.what());
    }
}

}  // namespace clprobe

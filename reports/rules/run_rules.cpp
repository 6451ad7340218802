#include "rules/run_rules.hpp"

#include <fmt/core.h>

namespace clprobe {

namespace {

bool lost(const ProbeResult& r) {
    return r.status == ProbeStatus::crashed || r.status == ProbeStatus::timed_out;
}

std::string attribute(const ProbeResult& r, const char* key) {
    const auto it = r.attributes.find("isolation");
    if (it == r.attributes.end() || !it->is_object() || !it->contains(key)) return {};
    const auto& v = (*it)[key];
    return v.is_string() ? v.get<std::string>() : v.dump();
}

Finding lost_probe_finding(const RuleSpec& rule, const ProbeResult& r) {
    const bool crashed = r.status == ProbeStatus::crashed;
    Finding f = rule.finding(Severity::high, crashed ? fmt::format("Probe {} crashed in the driver", r.id)
                                                     : fmt::format("Probe {} hung past its time budget", r.id));
    Evidence e;
    e.metric = r.id;
    e.value = r.wall_seconds;
    e.unit = "s";
    for (const char* key : {"signal", "last_command"})
        if (const std::string v = attribute(r, key); !v.empty()) e.labels[key] = v;
    e.expectation = r.reason;
    f.evidence.push_back(std::move(e));
    const std::string where = attribute(r, "last_command");
    f.suggestion = fmt::format(
        "{} ({}). The rest of the report is unaffected: the probe ran in its own process. Try another "
        "version of the OpenCL driver; reproduce it alone with `clprobe diagnose --probes {}`, or leave it out "
        "with `--skip {}`{}. The end of its output is in the JSON report (results, attributes.isolation).",
        crashed ? "The driver failed while running this probe" : "The driver did not return in time",
        where.empty() ? "no command recorded" : "last command: " + where, r.id, r.id,
        crashed ? "" : "; if the device is only slow, a longer --probe-timeout");
    f.gain_basis = "not a performance gain: a probe's results are missing from this report";
    f.confidence = 1;  // the status is a fact, not a measured gap
    return f;
}

RuleOutcome lost_probes(const RunReport& report, const RuleSpec& rule, ProbeStatus status) {
    RuleOutcome out;
    for (const auto& r : report.results) {
        if (r.status != status) continue;
        if (!out.finding)
            out.finding = lost_probe_finding(rule, r);
        else
            out.also.push_back(lost_probe_finding(rule, r));
    }
    return out;
}

std::string first_word(const std::string& id) {
    return id.substr(0, id.find('.'));
}

}  // namespace

std::string lost_probe_note(const RunReport& report, const RuleInput& input) {
    if (input.kind != RuleInput::Kind::metric) return {};
    const ProbeResult* best = nullptr;
    for (const auto& name : input.names)
        for (const auto& r : report.results) {
            if (!lost(r)) continue;
            if (name.starts_with(r.id + ".") || name == r.id) {
                best = &r;
                break;
            }
            if (best == nullptr && first_word(name) == first_word(r.id)) best = &r;
        }
    if (best == nullptr) return {};
    return fmt::format("{} {} before it could measure it", best->id,
                       best->status == ProbeStatus::crashed ? "crashed" : "timed out");
}

std::vector<Rule> run_rules() {
    const std::string layer = "run";
    return {
        {{"run.probe_crashed", layer, {}, {}},
         [](const RunReport& r, const RuleSpec& rule) { return lost_probes(r, rule, ProbeStatus::crashed); }},
        {{"run.probe_timed_out", layer, {}, {}},
         [](const RunReport& r, const RuleSpec& rule) { return lost_probes(r, rule, ProbeStatus::timed_out); }},
    };
}

}  // namespace clprobe

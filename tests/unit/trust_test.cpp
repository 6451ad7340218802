// assess_trust on synthetic reports: each condition that lowers trust is named, and a quiet,
// profiled, complete run gets no warning.
#include <catch2/catch.hpp>

#include "rules/analysis.hpp"
#include "rules/trust.hpp"

using namespace clprobe;

namespace {

Measurement fact(const std::string& metric, double v) {
    return make_measurement(metric, "%", {}, {v}, TimerKind::none);
}

RunReport quiet_report() {
    RunReport r;
    r.device = DeviceInfo{};
    r.device->profiling = true;
    ProbeResult system;
    system.id = "system.activity";
    system.layer = "system";
    system.measurements = {fact("system.activity.others_cpu", 1.0), fact("system.activity.steal", 0.0)};
    ProbeResult kernel;
    kernel.id = "kernel.compute.fp32";
    kernel.layer = "kernel";
    kernel.measurements = {
        make_measurement("kernel.peak.fp32", "GFLOP/s", {}, {100, 101, 99, 100, 100}, TimerKind::device_profiling)};
    r.results = {system, kernel};
    return r;
}

int warnings(const std::vector<TrustNote>& notes) {
    int n = 0;
    for (const auto& t : notes)
        n += t.warning;
    return n;
}

bool mentions(const std::vector<TrustNote>& notes, const std::string& words, bool warning) {
    for (const auto& t : notes)
        if (t.warning == warning && t.text.find(words) != std::string::npos) return true;
    return false;
}

}  // namespace

TEST_CASE("trust: a quiet, profiled, complete run has no warning", "[trust]") {
    const auto notes = assess_trust(quiet_report());
    CHECK(warnings(notes) == 0);
    CHECK(mentions(notes, "Other processes used 1.0%", false));
}

TEST_CASE("trust: a busy machine, stolen time and an interrupted run are warnings", "[trust]") {
    auto r = quiet_report();
    r.results[0].measurements = {fact("system.activity.others_cpu", 35), fact("system.activity.steal", 4)};
    r.complete = false;
    const auto notes = assess_trust(r);
    CHECK(mentions(notes, "busy", true));
    CHECK(mentions(notes, "35%", true));
    CHECK(mentions(notes, "stole 4.0%", true));
    CHECK(mentions(notes, "interrupted", true));
    // Just below the lines: no warning.
    r.results[0].measurements = {fact("system.activity.others_cpu", 9.9), fact("system.activity.steal", 1.9)};
    r.complete = true;
    CHECK(warnings(assess_trust(r)) == 0);
}

TEST_CASE("trust: clocks below 90% of their maximum under load are a warning", "[trust]") {
    auto r = quiet_report();
    r.results[0].measurements.push_back(
        make_measurement("system.cpu.frequency.max", "MHz", {}, {3000}, TimerKind::none));
    r.results[0].measurements.push_back(
        make_measurement("system.cpu.frequency.loaded", "MHz", {}, {2400}, TimerKind::none));
    CHECK(mentions(assess_trust(r), "80% of their 3000 MHz", true));
    r.results[0].measurements.back() =
        make_measurement("system.cpu.frequency.loaded", "MHz", {}, {2900}, TimerKind::none);
    CHECK(warnings(assess_trust(r)) == 0);
}

TEST_CASE("trust: no profiling is a warning; a missing system layer and noisy samples are named", "[trust]") {
    auto r = quiet_report();
    r.device->profiling = false;
    r.results.erase(r.results.begin());
    r.results[0].measurements.push_back(
        make_measurement("kernel.compute", "GFLOP/s", {{"vector", "1"}}, {50, 100, 150}, TimerKind::device_profiling));
    const auto notes = assess_trust(r);
    CHECK(mentions(notes, "cannot profile", true));
    CHECK(mentions(notes, "system layer did not run", false));
    CHECK(mentions(notes, "1 of 2 timed measurements vary", true));  // half the measurements: a warning
}

TEST_CASE("trust: every note has a stable id, and the analysis stores them in the report", "[trust]") {
    auto r = quiet_report();
    r.complete = false;
    std::vector<std::string> ids;
    for (const auto& n : assess_trust(r))
        ids.push_back(n.id);
    CHECK(ids == std::vector<std::string>{"trust.interrupted", "trust.machine_quiet", "trust.warm_up"});
    CHECK(r.trust_notes.empty());
    analyze(r);
    REQUIRE(r.trust_notes.size() == 3);
    CHECK(r.trust_notes[0].id == "trust.interrupted");
    CHECK(r.trust_notes[0].warning);
    // Re-analysing replaces them, never appends.
    r.complete = true;
    analyze(r);
    CHECK(r.trust_notes.size() == 2);
}

// Network rules on synthetic reports: each fires above its threshold, stays silent below it and
// inside the noise, and says what is missing when its inputs are absent.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/network_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

// A rule whose inputs are missing gives the "needs ..." sentence derived from its declaration,
// and that sentence names what the test removed.
void check_needs(const RunReport& r, const std::string& rule_id, const std::string& names) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(network_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

}  // namespace

namespace {

// The data-parallel step's stages in seconds: compute, download, allreduce, update, upload.
std::vector<Measurement> step(double compute, double allreduce, double rest = 0.001) {
    std::vector<Measurement> out;
    const std::pair<const char*, double> stages[] = {
        {"compute", compute}, {"download", rest}, {"allreduce", allreduce}, {"update", rest}, {"upload", rest}};
    for (const auto& [name, s] : stages)
        out.push_back(
            seconds("network.glm_step.stage_time", {{"stage", name}}, steady(s), TimerKind::host_steady_clock));
    return out;
}

Measurement gbs(const std::string& metric, Labels labels, std::vector<double> v) {
    return make_measurement(metric, "GB/s", std::move(labels), std::move(v), TimerKind::host_steady_clock);
}

RunReport network_report(std::vector<Measurement> ms) {
    return report_with("network.synthetic", "network", std::move(ms));
}

std::vector<Measurement> with(std::vector<Measurement> a, const std::vector<Measurement>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

TEST_CASE("network rules: ids are unique, in the network layer", "[rules][network]") {
    const auto rules = network_rules();
    CHECK(rules.size() == 3);
    for (const auto& r : rules) {
        CHECK(r.id.rfind("network.", 0) == 0);
        CHECK(r.layer == "network");
    }
}

TEST_CASE("network.allreduce.not_overlapped ranks by the all-reduce's share of the step", "[rules][network]") {
    const std::string id = "network.allreduce.not_overlapped";
    // compute 0.010, allreduce 0.005, three stages of 0.001: total 0.018.
    const auto fired = analyzed(network_report(step(0.010, 0.005)), network_rules(), id);
    const Finding& f = ranked_finding(fired, id, "network");
    REQUIRE(f.target);
    CHECK(f.target->pipeline == "network.glm_step");
    CHECK(f.target->stage == "allreduce");
    CHECK(f.target->stage_gain == Approx(1.0));  // compute is longer: all of it could hide
    CHECK(*f.estimated_gain == Approx(0.005 / 0.018));
    CHECK(f.measured_share);
    // Compute shorter than the all-reduce: only the compute's worth can hide.
    const auto partial = analyzed(network_report(step(0.002, 0.008)), network_rules(), id);
    CHECK(only_finding(partial, id).target->stage_gain == Approx(0.25));
    // Under a tenth of the step: silent.
    check_silent(analyzed(network_report(step(0.100, 0.005)), network_rules(), id));
    check_needs(analyzed(network_report({}), network_rules(), id), id, "network.glm_step.stage_time");
}

TEST_CASE("network.allreduce.below_p2p compares busbw with the link at the largest common size", "[rules][network]") {
    const std::string id = "network.allreduce.below_p2p";
    const std::vector<Measurement> p2p = {
        gbs("network.p2p.bandwidth", {{"size", "1024"}, {"pair", "0-1"}}, steady(1)),
        gbs("network.p2p.bandwidth", {{"size", "4194304"}, {"pair", "0-1"}}, steady(10))};
    const auto bus = [](double small, double large) {
        return std::vector<Measurement>{gbs("network.allreduce.busbw", {{"size", "1024"}}, steady(small)),
                                        gbs("network.allreduce.busbw", {{"size", "4194304"}}, steady(large))};
    };
    const auto fired = analyzed(network_report(with(with(p2p, bus(1, 2)), step(0.01, 0.01))), network_rules(), id);
    const Finding& f = only_finding(fired, id, "network");
    CHECK_THAT(f.title, Catch::Contains("4194304"));
    REQUIRE(f.target);
    CHECK(f.target->stage_gain == Approx(0.8));  // busbw 2 against 10 GB/s
    // The small size is far below, but the largest common size is what counts: silent.
    check_silent(analyzed(network_report(with(p2p, bus(0.1, 8))), network_rules(), id));
    // Inside the noise: silent.
    const std::vector<Measurement> noisy = {gbs("network.p2p.bandwidth", {{"size", "4194304"}}, spread(10, 0.6)),
                                            gbs("network.allreduce.busbw", {{"size", "4194304"}}, spread(4.5, 0.6))};
    check_silent(analyzed(network_report(noisy), network_rules(), id));
    check_needs(analyzed(network_report(bus(1, 2)), network_rules(), id), id, "network.p2p.bandwidth");
}

TEST_CASE("network.pair.slow_link names the slow pair among three or more", "[rules][network]") {
    const std::string id = "network.pair.slow_link";
    const auto pairs = [](double slow) {
        std::vector<Measurement> out;
        const std::pair<const char*, double> figures[] = {{"0-1", 10}, {"0-2", 10}, {"1-2", slow}};
        for (const auto& [pair, v] : figures)
            out.push_back(gbs("network.pair.bandwidth", {{"pair", pair}, {"size", "1048576"}}, steady(v)));
        return out;
    };
    const auto fired = analyzed(network_report(with(pairs(2), step(0.01, 0.01))), network_rules(), id);
    const Finding& f = only_finding(fired, id, "network");
    CHECK_THAT(f.title, Catch::Contains("1-2"));
    CHECK_THAT(f.suggestion, Catch::Contains("1-2"));
    REQUIRE(f.target);
    CHECK(f.target->stage_gain == Approx(0.8));
    check_silent(analyzed(network_report(pairs(6)), network_rules(), id));  // above half the median
    // One pair (two ranks): nothing to compare with.
    check_needs(
        analyzed(network_report({gbs("network.pair.bandwidth", {{"pair", "0-1"}}, steady(1))}), network_rules(), id),
        id, "3 or more rank pairs");
}

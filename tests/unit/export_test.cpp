// The CSV and google-benchmark exports on synthetic reports: CSV quoting and the label columns,
// which measurements become google-benchmark times and how, and the entries compare.py reads.
#include <catch2/catch.hpp>

#include <sstream>
#include <string>
#include <vector>

#include "render/csv_export.hpp"
#include "render/gbench_export.hpp"
#include "rule_test_support.hpp"

using namespace clprobe;
using clprobe::test::probe_result;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line, '\n');)
        out.push_back(line);
    return out;
}

RunReport two_probes() {
    RunReport r;
    r.results.push_back(
        probe_result("kernel.bandwidth", "kernel",
                     {make_measurement("kernel.bandwidth", "GB/s", {{"access", "read"}, {"vector", "4"}}, {10, 20, 40},
                                       TimerKind::device_profiling)}));
    r.results.push_back(probe_result("kernel.launch", "kernel",
                                     {make_measurement("kernel.launch.latency", "us", {{"kind", "round_trip"}}, {5, 6},
                                                       TimerKind::host_steady_clock, false)}));
    r.results.push_back(probe_result("kernel.compute.fp16", "kernel"));  // unsupported: no rows
    return r;
}

}  // namespace

TEST_CASE("csv: fields are quoted only when they must be", "[export]") {
    CHECK(csv_field("plain") == "plain");
    CHECK(csv_field("") == "");
    CHECK(csv_field("a,b") == "\"a,b\"");
    CHECK(csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
    CHECK(csv_field("two\nlines") == "\"two\nlines\"");
    CHECK(csv_field("cr\r") == "\"cr\r\"");
}

TEST_CASE("csv: numbers read back as the same double", "[export]") {
    for (const double v : {0.1, 1.0 / 3.0, 1733050000123456789.0, 1e-7, 20.0, 0.0}) {
        const std::string text = csv_number(v);
        CHECK(std::stod(text) == v);
    }
    CHECK(csv_number(20) == "20");
    CHECK(csv_number(0.5) == "0.5");
}

TEST_CASE("csv: one column per label key over the whole report, empty where a row lacks it", "[export]") {
    const RunReport r = two_probes();
    CHECK(label_keys(r) == std::set<std::string>{"access", "kind", "vector"});
    const auto lines = lines_of(render_csv(r));
    REQUIRE(lines.size() == 3);  // header + two measurements; the probe without any gives no row
    CHECK(lines[0].rfind("probe,metric,label.access,label.kind,label.vector,unit,median,cv,n,", 0) == 0);
    CHECK(lines[1].rfind("kernel.bandwidth,kernel.bandwidth,read,,4,GB/s,20,", 0) == 0);
    CHECK(lines[2].rfind("kernel.launch,kernel.launch.latency,,round_trip,,us,5.5,", 0) == 0);
    for (const auto& line : lines)
        CHECK(line.back() == '\r');  // RFC 4180 line ends
}

TEST_CASE("csv: a label value or note with a comma stays one field", "[export]") {
    RunReport r;
    Measurement m = make_measurement("app.kernel.time", "ms", {{"kernel", "gemm<float, 4>"}}, {1}, TimerKind::none);
    m.note = "best of 3, \"warm\"";
    r.results.push_back(probe_result("app", "trace", {m}));
    const auto lines = lines_of(render_csv(r));
    REQUIRE(lines.size() == 2);
    CHECK(lines[1].find(",\"gemm<float, 4>\",") != std::string::npos);
    CHECK(lines[1].find(",\"best of 3, \"\"warm\"\"\"\r") != std::string::npos);
}

TEST_CASE("gbench: durations become nanoseconds, rates the time per unit of work", "[export]") {
    const auto ms = make_measurement("kernel.build.time", "ms", {}, {2}, TimerKind::host_steady_clock, false);
    const auto time = gbench_mapping_of(ms);
    REQUIRE(time);
    CHECK(time->kind == GbenchMapping::Kind::time);
    CHECK(gbench_time_ns(*time, 2) == Approx(2e6));

    const auto bw = make_measurement("kernel.bandwidth", "GB/s", {}, {20}, TimerKind::device_profiling);
    const auto rate = gbench_mapping_of(bw);
    REQUIRE(rate);
    CHECK(rate->kind == GbenchMapping::Kind::time_per_work);
    CHECK(rate->rate_counter == "GB/s");
    CHECK(gbench_time_ns(*rate, 20) == Approx(5e7));  // 1 GB at 20 GB/s: 50 ms
    // A faster rate is a smaller time: compare.py's "lower is better" keeps its meaning.
    CHECK(gbench_time_ns(*rate, 40) < gbench_time_ns(*rate, 20));
}

TEST_CASE("gbench: what compare.py cannot read as a time is left out", "[export]") {
    using clprobe::test::rate;
    // Untimed facts, units that are neither durations nor rates, and directions a time cannot carry.
    CHECK_FALSE(gbench_mapping_of(make_measurement("system.cpus", "count", {}, {4}, TimerKind::none)));
    CHECK_FALSE(gbench_mapping_of(rate("kernel.occupancy", "fraction", {}, {0.5})));
    CHECK_FALSE(gbench_mapping_of(rate("kernel.size", "bytes", {}, {64})));
    CHECK_FALSE(gbench_mapping_of(rate("app.uptime", "s", {}, {3})));  // a duration where higher is better
    CHECK_FALSE(gbench_mapping_of(
        make_measurement("system.swap", "MiB/s", {}, {1}, TimerKind::host_steady_clock, false)));  // lower-better rate
    CHECK_FALSE(gbench_mapping_of(rate("kernel.bandwidth", "GB/s", {}, {0, 10})));  // infinite time per GB
    CHECK(gbench_mapping_of(rate("workload.tokens", "tokens/s", {}, {100})));
}

TEST_CASE("gbench: one iteration entry per sample and the four aggregates", "[export]") {
    const auto j = report_to_gbench(two_probes());
    const auto& b = j.at("benchmarks");
    REQUIRE(b.size() == 3 + 4 + 2 + 4);
    const std::string name = "kernel.bandwidth/access:read/vector:4";
    CHECK(b[0].at("name") == name);
    CHECK(b[0].at("run_name") == name);
    CHECK(b[0].at("run_type") == "iteration");
    CHECK(b[0].at("repetitions") == 3);
    CHECK(b[2].at("repetition_index") == 2);
    CHECK(b[0].at("time_unit") == "ns");
    CHECK(b[0].at("real_time").get<double>() == Approx(1e8));  // 10 GB/s
    CHECK(b[0].at("cpu_time") == b[0].at("real_time"));
    CHECK(b[0].at("GB/s").get<double>() == 10);
    CHECK(b[3].at("name") == name + "_mean");
    CHECK(b[3].at("run_type") == "aggregate");
    CHECK(b[3].at("real_time").get<double>() == Approx((1e8 + 5e7 + 2.5e7) / 3));
    CHECK(b[4].at("aggregate_name") == "median");
    CHECK(b[4].at("real_time").get<double>() == Approx(5e7));
    CHECK(b[4].at("GB/s").get<double>() == 20);  // the rate's own median, kept as a counter
    CHECK(b[6].at("aggregate_name") == "cv");
    CHECK(b[6].at("aggregate_unit") == "percentage");
    // The second metric is a family of its own.
    CHECK(b[7].at("name") == "kernel.launch.latency/kind:round_trip");
    CHECK(b[7].at("family_index") == 1);
    CHECK(b[7].at("real_time").get<double>() == Approx(5000));
    CHECK(b[7].at("iterations") == 1);
    CHECK_FALSE(b[7].contains("us"));  // durations need no counter
    CHECK(j.at("context").at("clprobe_measurements_exported") == 2);
}

TEST_CASE("gbench: a single sample has no aggregates", "[export]") {
    RunReport r;
    r.results.push_back(
        probe_result("kernel.build", "kernel",
                     {make_measurement("kernel.build.time", "ms", {}, {7}, TimerKind::host_steady_clock, false)}));
    const auto b = report_to_gbench(r).at("benchmarks");
    REQUIRE(b.size() == 1);
    CHECK(b[0].at("run_type") == "iteration");
}

TEST_CASE("gbench: names stay unique when two probes report the same measurement", "[export]") {
    RunReport r;
    for (const char* probe : {"a.first", "b.second", "c.third"})
        r.results.push_back(probe_result(
            probe, "kernel",
            {make_measurement("kernel.peak.bandwidth", "GB/s", {}, {10, 12}, TimerKind::device_profiling)}));
    const auto b = report_to_gbench(r).at("benchmarks");
    REQUIRE(b.size() == 18);
    CHECK(b[0].at("name") == "kernel.peak.bandwidth");
    CHECK(b[6].at("name") == "kernel.peak.bandwidth/probe:b.second");
    CHECK(b[6].at("per_family_instance_index") == 1);
    CHECK(b[12].at("name") == "kernel.peak.bandwidth/probe:c.third");
}

TEST_CASE("gbench: the context names the host, the device and what was left out", "[export]") {
    RunReport r = two_probes();
    r.created_at = "2024-01-02T03:04:05Z";
    r.host.hostname = "box";
    r.host.logical_cpus = 16;
    r.tool_version = "0.1.0";
    r.device = clprobe::test::synthetic_device("gpu");
    r.results.push_back(probe_result("x", "system", {make_measurement("x.count", "count", {}, {3}, TimerKind::none)}));
    const auto c = report_to_gbench(r).at("context");
    CHECK(c.at("date") == "2024-01-02T03:04:05Z");
    CHECK(c.at("host_name") == "box");
    CHECK(c.at("num_cpus") == 16);
    CHECK(c.at("device") == "Synthetic device");
    CHECK(c.at("clprobe_version") == "0.1.0");
    CHECK(c.at("clprobe_measurements_not_exported") == 1);
}

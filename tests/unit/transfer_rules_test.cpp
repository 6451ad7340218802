// Transfer rules on synthetic measurements: each rule just above and below its threshold, with
// noisy inputs (a gap inside the noise is no finding) and with an input missing.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "core/report.hpp"
#include "rule_test_support.hpp"
#include "rules/transfer_rules.hpp"

using namespace clprobe;
using namespace clprobe::test;

namespace {

// A rule whose inputs are missing gives the "needs ..." sentence derived from its declaration,
// and that sentence names what the test removed.
void check_needs(const RunReport& r, const std::string& rule_id, const std::string& names) {
    const std::string reason = skipped_rule(r, rule_id).reason;
    CHECK(reason == rule_named(transfer_rules(), rule_id).needs());
    CHECK_THAT(reason, Catch::Contains(names));
}

}  // namespace

namespace {

RunReport report_of(std::vector<Measurement> measurements, const std::string& type = "gpu") {
    RunReport r = report_with("transfer.synthetic", "transfer", std::move(measurements));
    r.device = synthetic_device(type);
    r.device->profiling = true;
    return r;
}

// Every transfer finding quotes the measurements it rests on.
const Finding& single(const RunReport& r, const std::string& id) {
    const Finding& f = only_finding(r, id, "transfer");
    CHECK_FALSE(f.evidence.empty());
    return f;
}

// Headlines of the bandwidth probe.
std::vector<Measurement> headlines(double pinned, double pageable, double cv = 0) {
    return {rate("transfer.h2d.pinned.bandwidth", "GB/s", {}, cv ? spread(pinned, cv) : steady(pinned)),
            rate("transfer.h2d.pageable.bandwidth", "GB/s", {}, cv ? spread(pageable, cv) : steady(pageable))};
}

// A serial stand-in pipeline whose upload is half of the step.
std::vector<Measurement> pipeline() {
    return {seconds("transfer.pipeline.stage_time", {{"stage", "upload"}, {"variant", "serial"}}, steady(0.5),
                    TimerKind::host_steady_clock),
            seconds("transfer.pipeline.stage_time", {{"stage", "compute"}, {"variant", "serial"}}, steady(0.3),
                    TimerKind::host_steady_clock),
            seconds("transfer.pipeline.stage_time", {{"stage", "download"}, {"variant", "serial"}}, steady(0.2),
                    TimerKind::host_steady_clock)};
}

std::vector<Measurement> with(std::vector<Measurement> a, const std::vector<Measurement>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}  // namespace

// ---------------------------------------------------------------- transfer.pageable_slow

TEST_CASE("transfer.pageable_slow: pinned 2x pageable on a GPU targets the upload stage", "[rules][transfer]") {
    const RunReport r =
        analyzed(report_of(with(headlines(20, 10), pipeline())), transfer_rules(), "transfer.pageable_slow");
    const Finding& f = single(r, "transfer.pageable_slow");
    CHECK(f.severity == Severity::high);
    REQUIRE(f.target);
    CHECK(f.target->stage == "upload");
    CHECK(f.target->pipeline == "transfer.pipeline");
    CHECK(f.target->stage_gain == Approx(0.5));
    CHECK(*f.target->pipeline_share == Approx(0.5));
    CHECK(*f.estimated_gain == Approx(0.25));
    CHECK_THAT(f.suggestion, Catch::Contains("CL_MEM_ALLOC_HOST_PTR"));
}

TEST_CASE("transfer.pageable_slow: below 1.25x, noisy, or a CPU device: no finding", "[rules][transfer]") {
    check_silent(analyzed(report_of(headlines(12, 10)), transfer_rules(), "transfer.pageable_slow"));
    check_silent(analyzed(report_of(headlines(20, 10, 0.3)), transfer_rules(), "transfer.pageable_slow"));
    // A CPU device's "transfer" is a memcpy: pinning cannot help, so it is never suggested.
    check_silent(analyzed(report_of(headlines(20, 10), "cpu"), transfer_rules(), "transfer.pageable_slow"));
}

TEST_CASE("transfer.pageable_slow: missing headlines are reported", "[rules][transfer]") {
    check_needs(analyzed(report_of({}), transfer_rules(), "transfer.pageable_slow"), "transfer.pageable_slow",
                "transfer.h2d.pinned.bandwidth");
}

// ---------------------------------------------------------------- transfer.small_transfers

std::vector<Measurement> sweep(double small, double large, double cv = 0) {
    const Labels base{{"path", "pageable"}, {"blocking", "true"}};
    Labels s = base, l = base;
    s["size"] = "4096";
    l["size"] = "268435456";
    return {rate("transfer.h2d.pageable.bandwidth", "GB/s", s, cv ? spread(small, cv) : steady(small)),
            rate("transfer.h2d.pageable.bandwidth", "GB/s", l, cv ? spread(large, cv) : steady(large)),
            make_measurement("transfer.half_peak_size", "bytes",
                             {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}}, {262144},
                             TimerKind::none, false)};
}

TEST_CASE("transfer.small_transfers: a 4 KiB copy at a tenth of the peak names the half-peak size",
          "[rules][transfer]") {
    const RunReport r = analyzed(report_of(sweep(1, 10)), transfer_rules(), "transfer.small_transfers");
    const Finding& f = single(r, "transfer.small_transfers");
    CHECK_FALSE(f.estimated_gain);  // depends on the sizes the user's code moves
    CHECK_THAT(f.suggestion, Catch::Contains("256 KiB"));
    CHECK(f.evidence.size() == 3);
}

TEST_CASE("transfer.small_transfers: below 4x or noisy: no finding; one size: missing", "[rules][transfer]") {
    check_silent(analyzed(report_of(sweep(3, 10)), transfer_rules(), "transfer.small_transfers"));
    check_silent(analyzed(report_of(sweep(2.2, 10, 0.5)), transfer_rules(),
                          "transfer.small_transfers"));  // 4.5x, confidence 0.44
    auto one = sweep(1, 10);
    one.erase(one.begin());
    check_needs(analyzed(report_of(one), transfer_rules(), "transfer.small_transfers"), "transfer.small_transfers",
                "at two sizes or more");
}

// ---------------------------------------------------------------- transfer.no_overlap

std::vector<Measurement> overlap(double serial, double overlapped, double efficiency, double cv = 0) {
    return {seconds("transfer.pipeline.step_time", {{"variant", "serial"}}, cv ? spread(serial, cv) : steady(serial),
                    TimerKind::host_steady_clock),
            seconds("transfer.pipeline.step_time", {{"variant", "overlapped"}},
                    cv ? spread(overlapped, cv) : steady(overlapped), TimerKind::host_steady_clock),
            make_measurement("transfer.overlap.efficiency", "fraction", {}, steady(efficiency),
                             TimerKind::host_steady_clock)};
}

TEST_CASE("transfer.no_overlap: a device that overlaps gets the measured step gain", "[rules][transfer]") {
    const RunReport r = analyzed(report_of(overlap(1.0, 0.6, 0.8)), transfer_rules(), "transfer.no_overlap");
    const Finding& f = single(r, "transfer.no_overlap");
    CHECK(*f.estimated_gain == Approx(0.4));
    CHECK_THAT(f.suggestion, Catch::Contains("queues"));
}

TEST_CASE("transfer.no_overlap: a device that cannot overlap is told to copy less", "[rules][transfer]") {
    const RunReport r = analyzed(report_of(overlap(1.0, 1.0, 0.02), "cpu"), transfer_rules(), "transfer.no_overlap");
    const Finding& f = single(r, "transfer.no_overlap");
    CHECK_FALSE(f.estimated_gain);
    CHECK_THAT(f.suggestion, Catch::Contains("zero-copy"));
    CHECK_THAT(f.suggestion, !Catch::Contains("PCIe"));
}

TEST_CASE("transfer.no_overlap: partial overlap inside the noise, or missing inputs", "[rules][transfer]") {
    // Efficiency 30%, gap inside the noise: neither claim can be made.
    check_silent(analyzed(report_of(overlap(1.0, 0.8, 0.3, 0.2)), transfer_rules(), "transfer.no_overlap"));
    // No overlap measured, but the step times are too noisy to say so.
    check_silent(analyzed(report_of(overlap(1.0, 1.0, 0.0, 0.3)), transfer_rules(), "transfer.no_overlap"));
    check_needs(analyzed(report_of({}), transfer_rules(), "transfer.no_overlap"), "transfer.no_overlap",
                "transfer.pipeline.step_time");
}

// ---------------------------------------------------------------- transfer.numa_penalty

std::vector<Measurement> numa(double node0, double node1, double cv = 0) {
    return {rate("transfer.numa.h2d.bandwidth", "GB/s", {{"node", "0"}, {"local", "yes"}},
                 cv ? spread(node0, cv) : steady(node0)),
            rate("transfer.numa.h2d.bandwidth", "GB/s", {{"node", "1"}, {"local", "no"}},
                 cv ? spread(node1, cv) : steady(node1))};
}

TEST_CASE("transfer.numa_penalty: the slow node costs upload time; the command binds to the fast one",
          "[rules][transfer]") {
    const RunReport r = analyzed(report_of(with(numa(20, 12), pipeline())), transfer_rules(), "transfer.numa_penalty");
    const Finding& f = single(r, "transfer.numa_penalty");
    REQUIRE(f.target);
    CHECK(f.target->stage_gain == Approx(0.4));
    CHECK_THAT(f.suggestion, Catch::Contains("numactl --cpunodebind=0 --membind=0"));
}

TEST_CASE("transfer.numa_penalty: below 1.15x or noisy: no finding; one node: missing", "[rules][transfer]") {
    check_silent(analyzed(report_of(numa(20, 18)), transfer_rules(), "transfer.numa_penalty"));
    check_silent(analyzed(report_of(numa(20, 12, 0.25)), transfer_rules(), "transfer.numa_penalty"));
    auto one = numa(20, 12);
    one.pop_back();
    check_needs(analyzed(report_of(one), transfer_rules(), "transfer.numa_penalty"), "transfer.numa_penalty",
                "two NUMA nodes or more");
}

// ---------------------------------------------------------------- transfer.link_underused

std::vector<Measurement> link(double link_gbps, double pinned, double cv = 0) {
    auto m = headlines(pinned, pinned / 2, cv);
    m.push_back(make_measurement("topology.device.link_bandwidth", "GB/s", {}, {link_gbps}, TimerKind::none));
    return m;
}

TEST_CASE("transfer.link_underused: pinned at a quarter of the link", "[rules][transfer]") {
    const RunReport r = analyzed(report_of(link(31.5, 8)), transfer_rules(), "transfer.link_underused");
    const Finding& f = single(r, "transfer.link_underused");
    CHECK(f.severity == Severity::high);
    REQUIRE(f.target);
    CHECK(f.target->stage_gain == Approx(1 - 8 / 31.5));
    CHECK_THAT(f.suggestion, Catch::Contains("iommu"));
}

TEST_CASE("transfer.link_underused: above half the link, noisy, CPU device, or no link", "[rules][transfer]") {
    check_silent(analyzed(report_of(link(31.5, 20)), transfer_rules(), "transfer.link_underused"));
    check_silent(analyzed(report_of(link(31.5, 14, 0.4)), transfer_rules(), "transfer.link_underused"));
    check_silent(analyzed(report_of(link(31.5, 8), "cpu"), transfer_rules(), "transfer.link_underused"));
    check_needs(analyzed(report_of(headlines(8, 4)), transfer_rules(), "transfer.link_underused"),
                "transfer.link_underused", "topology.device.link_bandwidth");
}

// ---------------------------------------------------------------- transfer.zero_copy_available

// The bandwidth probe's zero-copy row (map + unmap time, us) and the pageable copy at the same
// size (GB/s), 256 MiB by default; a smaller pageable row the rule must not pair with it.
std::vector<Measurement> zero_copy(double zero_us, double pageable_gbs, double cv = 0,
                                   const std::string& size = "268435456") {
    const Labels zero_labels{{"path", "use_host_ptr"}, {"blocking", "true"}, {"size", size}};
    const Labels copy_labels{{"path", "pageable"}, {"blocking", "true"}, {"size", size}};
    return {make_measurement("transfer.h2d.zero_copy.time", "us", zero_labels,
                             cv ? spread(zero_us, cv) : steady(zero_us), TimerKind::host_steady_clock, false),
            rate("transfer.h2d.pageable.bandwidth", "GB/s", copy_labels,
                 cv ? spread(pageable_gbs, cv) : steady(pageable_gbs)),
            rate("transfer.h2d.pageable.bandwidth", "GB/s",
                 {{"path", "pageable"}, {"blocking", "true"}, {"size", "4096"}}, steady(0.5))};
}

// 256 MiB at 10 GB/s: one copy takes 26.8 ms.
constexpr double copy_us = 268435456.0 / 10e9 * 1e6;

TEST_CASE("transfer.zero_copy_available: on a CPU device mapping beats copying; the factor is the step's",
          "[rules][transfer]") {
    // Map + unmap in 34.3 us against a 26.8 ms copy: 783x per transfer, which is no rate of anything.
    const RunReport r = analyzed(report_of(with(zero_copy(34.3, 10), pipeline()), "cpu"), transfer_rules(),
                                 "transfer.zero_copy_available");
    const Finding& f = single(r, "transfer.zero_copy_available");
    const double stage_gain = 1 - 34.3 / copy_us;
    REQUIRE(f.target);
    CHECK(f.target->stage == "upload");
    CHECK(f.target->stage_gain == Approx(stage_gain));
    CHECK(*f.estimated_gain == Approx(stage_gain * 0.5));
    // The stand-in step (1 s, upload 0.5 s) would take 1 - 0.5 x stage_gain: its factor, not 783x.
    REQUIRE(f.factor);
    CHECK(*f.factor == Approx(1.0 / (1.0 - 0.5 * stage_gain)));
    CHECK(*f.factor < 2.0);
    CHECK_THAT(f.title, Catch::Contains("makes 256 MiB available in 34.3 us; copying it takes 26.8 ms"));
    CHECK_THAT(f.title, !Catch::Contains("GB/s"));
    CHECK_THAT(f.gain_basis, Catch::Contains("transfer.pipeline"));
    CHECK_THAT(f.suggestion, Catch::Contains("clEnqueueMapBuffer"));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "transfer.h2d.zero_copy.time");
    CHECK(f.evidence[0].unit == "us");
    CHECK(f.evidence[1].labels.at("size") == "268435456");  // the copy of the same size
}

TEST_CASE("transfer.zero_copy_available: without a step, the factor is the two measured transfer times'",
          "[rules][transfer]") {
    const RunReport r =
        analyzed(report_of(zero_copy(34.3, 10), "cpu"), transfer_rules(), "transfer.zero_copy_available");
    const Finding& f = single(r, "transfer.zero_copy_available");
    REQUIRE(f.factor);
    CHECK(*f.factor == Approx(copy_us / 34.3));
    CHECK_THAT(f.gain_basis, Catch::Contains("copy's time over the map + unmap's"));
}

TEST_CASE("transfer.zero_copy_available: below 1.25x, noisy, or a discrete GPU: no finding", "[rules][transfer]") {
    check_silent(
        analyzed(report_of(zero_copy(copy_us / 1.2, 10), "cpu"), transfer_rules(), "transfer.zero_copy_available"));
    check_silent(
        analyzed(report_of(zero_copy(copy_us / 2, 10, 0.4), "cpu"), transfer_rules(), "transfer.zero_copy_available"));
    check_silent(analyzed(report_of(zero_copy(34.3, 10), "gpu"), transfer_rules(), "transfer.zero_copy_available"));
    check_needs(analyzed(report_of({}, "cpu"), transfer_rules(), "transfer.zero_copy_available"),
                "transfer.zero_copy_available", "transfer.h2d.zero_copy.time");
    // A zero-copy time at a size no copy was measured at cannot be compared.
    auto unpaired = zero_copy(34.3, 10);
    unpaired.erase(unpaired.begin() + 1);
    check_needs(analyzed(report_of(unpaired, "cpu"), transfer_rules(), "transfer.zero_copy_available"),
                "transfer.zero_copy_available", "path=pageable at the same size");
}

// ---------------------------------------------------------------- transfer.kernel_copy_faster

// Headlines of one direction: the kernel copy, the pinned and the pageable driver copies.
std::vector<Measurement> kernel_copy(const std::string& dir, double kernel, double pinned, double pageable,
                                     double cv = 0) {
    const auto samples = [cv](double v) { return cv ? spread(v, cv) : steady(v); };
    return {rate("transfer." + dir + ".kernel_copy.bandwidth", "GB/s", {}, samples(kernel)),
            rate("transfer." + dir + ".pinned.bandwidth", "GB/s", {}, samples(pinned)),
            rate("transfer." + dir + ".pageable.bandwidth", "GB/s", {}, samples(pageable))};
}

TEST_CASE("transfer.kernel_copy_faster: a kernel copy 2x the best driver copy targets the upload stage",
          "[rules][transfer]") {
    // The best driver copy is the pageable one here: the gap is taken against it, not against pinned.
    const RunReport r = analyzed(report_of(with(kernel_copy("h2d", 40, 15, 20), pipeline()), "cpu"), transfer_rules(),
                                 "transfer.kernel_copy_faster");
    const Finding& f = single(r, "transfer.kernel_copy_faster");
    REQUIRE(f.target);
    CHECK(f.target->stage == "upload");
    CHECK(f.target->stage_gain == Approx(0.5));
    CHECK(*f.estimated_gain == Approx(0.5 * 0.5));
    REQUIRE(f.evidence.size() == 2);
    CHECK(f.evidence[0].metric == "transfer.h2d.kernel_copy.bandwidth");
    CHECK(f.evidence[1].metric == "transfer.h2d.pageable.bandwidth");
    CHECK_THAT(f.suggestion, Catch::Contains("CL_MEM_ALLOC_HOST_PTR"));
    CHECK_THAT(f.suggestion, Catch::Contains("PCIe"));
}

TEST_CASE("transfer.kernel_copy_faster: both directions faster: the one saving more of the step names the stage",
          "[rules][transfer]") {
    // d2h has the larger gap (4x against 1.5x), but uploads are 50% of the step and downloads 20%:
    // 0.33 x 0.5 beats 0.67 x 0.2 (a fast download of a small result saves little).
    const auto both = with(kernel_copy("h2d", 30, 20, 20), kernel_copy("d2h", 60, 20, 15));
    const RunReport r = analyzed(report_of(with(both, pipeline())), transfer_rules(), "transfer.kernel_copy_faster");
    const Finding& f = single(r, "transfer.kernel_copy_faster");
    REQUIRE(f.target);
    CHECK(f.target->stage == "upload");
    CHECK(*f.estimated_gain == Approx((1 - 20.0 / 30) * 0.5));
    CHECK(f.evidence.size() == 4);
    // Without a measured step the larger gap decides.
    const RunReport alone = analyzed(report_of(both), transfer_rules(), "transfer.kernel_copy_faster");
    CHECK(single(alone, "transfer.kernel_copy_faster").target->stage == "download");
}

TEST_CASE("transfer.kernel_copy_faster: slower, below 1.25x or inside the noise: no finding", "[rules][transfer]") {
    check_silent(
        analyzed(report_of(kernel_copy("h2d", 10, 20, 15), "cpu"), transfer_rules(), "transfer.kernel_copy_faster"));
    check_silent(
        analyzed(report_of(kernel_copy("h2d", 22, 20, 15), "cpu"), transfer_rules(), "transfer.kernel_copy_faster"));
    // 1.5x, but with 20% spread on each side the gap is noise (confidence 0).
    check_silent(analyzed(report_of(kernel_copy("h2d", 30, 20, 15, 0.2), "cpu"), transfer_rules(),
                          "transfer.kernel_copy_faster"));
}

TEST_CASE("transfer.kernel_copy_faster: without a kernel copy or a driver copy it is not evaluated",
          "[rules][transfer]") {
    check_needs(analyzed(report_of({}, "cpu"), transfer_rules(), "transfer.kernel_copy_faster"),
                "transfer.kernel_copy_faster", "transfer.h2d.kernel_copy.bandwidth");
    // Driver headlines alone (a report from before the kernel copy path existed).
    check_needs(analyzed(report_of(headlines(20, 10), "cpu"), transfer_rules(), "transfer.kernel_copy_faster"),
                "transfer.kernel_copy_faster", "transfer.d2h.kernel_copy.bandwidth");
    // A kernel copy with no driver copy of its direction.
    check_needs(analyzed(report_of({rate("transfer.d2h.kernel_copy.bandwidth", "GB/s", {}, steady(40))}, "cpu"),
                         transfer_rules(), "transfer.kernel_copy_faster"),
                "transfer.kernel_copy_faster", "a headline of the kernel copy's direction");
}

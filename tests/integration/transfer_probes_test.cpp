// The transfer layer's probes on the test device, on small sizes: every path and direction runs
// and its data is verified (a failed check would end the probe in error), sizes the device cannot
// hold are skipped with the reason, and a compute kernel that gets the arithmetic wrong makes the
// overlap probe fail instead of reporting a time.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <set>

#include "probe_factories.hpp"
#include "runtime/runner.hpp"
#include "session_fixture.hpp"

using namespace clprobe;

namespace {

ProbeResult run_with(Probe& probe, DeviceSession& session, const RunOptions& options) {
    std::vector<ProbeResult> earlier;
    ProbeContext ctx{&session, options, earlier, nullptr};
    return run_probe(probe, ctx);
}

RunOptions small_sweep() {
    RunOptions o;
    o.mode = RunMode::quick;
    o.transfer.min_bytes = 4096;
    o.transfer.max_bytes = 1u << 20;  // quick steps x32: 4 KiB, 128 KiB, 1 MiB
    return o;
}

const Measurement* headline(const ProbeResult& r, const std::string& metric) {
    for (const auto& m : r.measurements)
        if (m.metric == metric && m.labels.empty()) return &m;
    return nullptr;
}

}  // namespace

TEST_CASE("transfer.bandwidth runs every path and direction at every size, verified", "[transfer]") {
    auto probe = make_transfer_bandwidth_probe();
    const ProbeResult r = run_with(*probe, test::shared_session(), small_sweep());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    test::check_samples(r);
    CHECK(r.attributes.at("skipped_sizes").empty());
    const std::vector<std::string> sizes{"4096", "131072", "1048576"};
    struct Expected {
        std::string metric, path, blocking;
    };
    std::vector<Expected> expected;
    for (const std::string dir : {"h2d", "d2h"}) {
        for (const std::string blocking : {"true", "false"}) {
            expected.push_back({"transfer." + dir + ".pageable.bandwidth", "pageable", blocking});
            expected.push_back({"transfer." + dir + ".pinned.bandwidth", "pinned", blocking});
        }
        expected.push_back({"transfer." + dir + ".pinned.bandwidth", "map", "true"});
        expected.push_back({"transfer." + dir + ".zero_copy.time", "use_host_ptr", "true"});
        expected.push_back({"transfer." + dir + ".kernel_copy.bandwidth", "kernel_copy", "false"});
    }
    for (const auto& e : expected)
        for (const auto& size : sizes) {
            INFO(e.metric << " path=" << e.path << " blocking=" << e.blocking << " size=" << size);
            const auto* m = find_measurement(r, e.metric, {{"path", e.path}, {"blocking", e.blocking}, {"size", size}});
            REQUIRE(m != nullptr);
            CHECK(m->summary.median > 0);
        }
    for (const auto& size : sizes)
        CHECK(find_measurement(r, "transfer.d2d.bandwidth", {{"size", size}}) != nullptr);
    // Headlines: label-free, from the largest size, never above the best variant they come from.
    for (const char* metric :
         {"transfer.h2d.pageable.bandwidth", "transfer.h2d.pinned.bandwidth", "transfer.d2h.pageable.bandwidth",
          "transfer.d2h.pinned.bandwidth", "transfer.h2d.kernel_copy.bandwidth", "transfer.d2h.kernel_copy.bandwidth",
          "transfer.d2d.bandwidth"}) {
        INFO(metric);
        const auto* h = headline(r, metric);
        REQUIRE(h != nullptr);
        CHECK_THAT(h->note, Catch::Contains("size=1048576"));
    }
    const auto* half = find_measurement(r, "transfer.half_peak_size",
                                        {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}});
    REQUIRE(half != nullptr);
    CHECK(half->summary.median >= 4096);
    CHECK(half->summary.median <= 1 << 20);
    CHECK(r.attributes.at("efficiency").contains("applies"));
    // The copy kernel is the fastest of a trial of both patterns, each with its rate; every size
    // uses a plain-store kernel here (1 MiB is below any cache-size threshold of a real device).
    const auto& kc = r.attributes.at("kernel_copy");
    CHECK(kc.at("trial").at("copy_chunked_gb_per_s").get<double>() > 0);
    CHECK(kc.at("trial").at("copy_interleaved_gb_per_s").get<double>() > 0);
    REQUIRE_FALSE(kc.at("kernels_used").empty());
    const std::string first = kc.at("kernels_used")[0].at("kernel");
    CHECK((first == "copy_chunked" || first == "copy_interleaved"));
    // With a memory ceiling measured earlier in the run, the pinned headlines are held against it.
    ProbeResult earlier_result;
    earlier_result.id = "system.memory_bandwidth";
    earlier_result.measurements.push_back(
        make_measurement("host.memory.bandwidth", "GB/s", {}, {20.0}, TimerKind::host_steady_clock));
    const std::vector<ProbeResult> earlier{earlier_result};
    const RunOptions options = small_sweep();
    ProbeContext ctx{&test::shared_session(), options, earlier, nullptr};
    const ProbeResult with_ref = run_probe(*probe, ctx);
    REQUIRE(with_ref.status == ProbeStatus::ok);
    const auto& eff = with_ref.attributes.at("efficiency");
    if (eff.at("applies") == "memory_copy") {
        CHECK(eff.at("reference_metric") == "host.memory.bandwidth");
        CHECK(eff.at("reference_gb_per_s").get<double>() == Approx(10.0));
        CHECK(eff.contains("h2d_pinned_fraction"));
    }
}

TEST_CASE("a copy kernel that copies the wrong bytes fails verification", "[transfer][verification]") {
    // The first copy in the file is copy_chunked's, which the pattern trial runs and checks first.
    const auto dir = test::patched_kernel_dir("transfer/copy.cl", "dst[i] = src[i];", "dst[i] = src[i] + 1;");
    auto session = test::session_with_kernels(dir);
    auto probe = make_transfer_bandwidth_probe();
    const ProbeResult r = run_with(*probe, *session, small_sweep());
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK_THAT(r.reason, Catch::Contains("kernel copy"));
    CHECK(r.measurements.empty());
    std::filesystem::remove_all(dir);
}

TEST_CASE("transfer.bandwidth reports sizes the device cannot hold as skipped, with the reason", "[transfer]") {
    const DeviceInfo& info = test::shared_session().info();
    RunOptions o = small_sweep();
    const std::uint64_t too_big = (info.max_alloc_bytes ? info.max_alloc_bytes : (1ull << 40)) * 2;
    o.transfer.min_bytes = too_big;
    o.transfer.max_bytes = too_big;
    auto probe = make_transfer_bandwidth_probe();
    const ProbeResult r = run_with(*probe, test::shared_session(), o);
    CHECK(r.status == ProbeStatus::skipped);
    CHECK_THAT(r.reason, Catch::Contains("max allocation") || Catch::Contains("not enough memory"));
    CHECK(r.measurements.empty());
    REQUIRE(r.attributes.at("skipped_sizes").size() == 1);
    CHECK(r.attributes["skipped_sizes"][0].at("size").get<std::uint64_t>() == too_big);
}

TEST_CASE("transfer.latency measures small transfers and the host-side cost", "[transfer]") {
    auto probe = make_transfer_latency_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    test::check_samples(r);
    for (const char* path : {"pageable", "pinned"}) {
        CHECK(find_measurement(r, "transfer.h2d.latency", {{"path", path}}) != nullptr);
        CHECK(find_measurement(r, "transfer.d2h.latency", {{"path", path}}) != nullptr);
    }
    REQUIRE(headline(r, "transfer.h2d.latency") != nullptr);
    CHECK(find_measurement(r, "transfer.host.finish_time") != nullptr);
    if (test::shared_session().profiling()) CHECK(find_measurement(r, "transfer.host.enqueue_overhead") != nullptr);
    for (const auto& m : r.measurements)
        CHECK_FALSE(m.higher_is_better);
}

TEST_CASE("transfer.overlap times the stand-in pipeline serially and overlapped", "[transfer]") {
    auto probe = make_transfer_overlap_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    test::check_samples(r);
    // The serial variant comes first: it is the pipeline's baseline.
    std::vector<std::string> stages;
    for (const auto& m : r.measurements)
        if (m.metric == "transfer.pipeline.stage_time") {
            CHECK(m.labels.at("variant") == "serial");
            stages.push_back(m.labels.at("stage"));
        }
    CHECK(stages == std::vector<std::string>{"upload", "compute", "download"});
    CHECK(find_measurement(r, "transfer.pipeline.step_time", {{"variant", "serial"}}) != nullptr);
    CHECK(find_measurement(r, "transfer.pipeline.step_time", {{"variant", "overlapped"}}) != nullptr);
    const auto* eff = headline(r, "transfer.overlap.efficiency");
    REQUIRE(eff != nullptr);
    CHECK(eff->summary.min >= 0);
    CHECK(eff->summary.max <= 1);
}

TEST_CASE("transfer.numa ends Ok, or Unsupported on a single-node host", "[transfer]") {
    auto probe = make_transfer_numa_probe();
    RunOptions o;
    o.mode = RunMode::quick;
    const ProbeResult r = run_with(*probe, test::shared_session(), o);
    INFO(r.reason);
    if (r.status == ProbeStatus::unsupported) {
        CHECK_THAT(r.reason, Catch::Contains("NUMA node"));
        CHECK(r.measurements.empty());
    } else {
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        CHECK(find_measurement(r, "transfer.numa.h2d.bandwidth") != nullptr);
    }
}

TEST_CASE("an overlap kernel that computes the wrong thing fails verification", "[transfer][verification]") {
    const auto dir = test::patched_kernel_dir("transfer/overlap.cl", "x = fma(x, a, b);", "x = fma(x, a, b + 1.0f);");
    auto session = test::session_with_kernels(dir);
    auto probe = make_transfer_overlap_probe();
    const ProbeResult r = test::run_quick(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK(r.measurements.empty());
    std::filesystem::remove_all(dir);
}

// Each kernel-layer probe, in quick mode on the test device: it ends Ok (or Unsupported with a
// reason), every sample is finite and positive, the headline ceilings exist, and a kernel that
// computes the wrong thing makes its probe fail instead of reporting a time.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>

#include "core/memory_roofs.hpp"
#include "probe_factories.hpp"
#include "session_fixture.hpp"

using namespace clprobe;

namespace {

std::size_t count(const ProbeResult& r, const std::string& metric) {
    std::size_t n = 0;
    for (const auto& m : r.measurements)
        n += m.metric == metric;
    return n;
}

}  // namespace

TEST_CASE("kernel.bandwidth measures 14 verified variants and a peak", "[probes]") {
    auto probe = make_bandwidth_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    // read and copy at widths 1, 4, 16 in both patterns outside --full, and two-stream reads of
    // float4 and float16
    CHECK(count(r, "kernel.bandwidth") == 14);
    for (const char* w : {"4", "16"})
        CHECK(find_measurement(r, "kernel.bandwidth", {{"access", "read"}, {"streams", "2"}, {"vector", w}}) !=
              nullptr);
    // A lookup without the streams label finds the one-stream variant.
    const auto* one =
        find_measurement(r, "kernel.bandwidth", {{"access", "read"}, {"pattern", "chunked"}, {"vector", "1"}});
    REQUIRE(one != nullptr);
    CHECK(one->labels.count("streams") == 0);
    const auto* peak = find_measurement(r, "kernel.peak.bandwidth");
    REQUIRE(peak != nullptr);
    CHECK(peak->labels.empty());
    CHECK_THAT(peak->note, Catch::Contains("best of 14 variants"));
    // The peak is the best variant's median, not something larger.
    for (const auto& m : r.measurements)
        CHECK(m.summary.median <= peak->summary.median);
    test::check_samples(r);
    CHECK(r.attributes.at("buffer_bytes").get<std::uint64_t>() >= (64u << 20));
}

TEST_CASE("kernel.compute.fp32 measures every vector width and chain count, and a peak", "[probes]") {
    auto probe = make_compute_probe(Precision::fp32);
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    CHECK(count(r, "kernel.compute") == 6);  // --full adds float2 and scalar with 16 chains
    for (const char* chains : {"4", "8", "16"})
        CHECK(find_measurement(r, "kernel.compute", {{"vector", "16"}, {"chains", chains}}) != nullptr);
    CHECK(find_measurement(r, "kernel.compute", {{"vector", "1"}, {"chains", "8"}}) != nullptr);
    const Measurement* peak = find_measurement(r, "kernel.peak.fp32");
    REQUIRE(peak != nullptr);
    // The headline names the winning shape, and the attribute its kernel.
    CHECK_THAT(peak->note, Catch::Contains("chains="));
    CHECK_THAT(r.attributes.at("peak_kernel").get<std::string>(), Catch::StartsWith("fma_v"));
    // Only half measures mad and a*b+c: fp32 variants carry no op label.
    for (const auto& m : r.measurements)
        CHECK(m.labels.count("op") == 0);
    CHECK_FALSE(r.attributes.contains("fma_slowdown"));
    test::check_samples(r);
}

TEST_CASE("kernel.compute.fp16 measures fma, mad and a*b+c, each verified, and keeps the fastest", "[probes]") {
    auto probe = make_compute_probe(Precision::fp16);
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    if (r.status == ProbeStatus::unsupported) {
        // PoCL's CPU device has no half precision.
        CHECK_FALSE(r.reason.empty());
        return;
    }
    REQUIRE(r.status == ProbeStatus::ok);
    // The 6 fma shapes, and mad and a*b+c at scalar and half8 with 8 chains.
    CHECK(count(r, "kernel.compute") == 10);
    CHECK(find_measurement(r, "kernel.compute", {{"op", "fma"}, {"vector", "16"}, {"chains", "4"}}) != nullptr);
    for (const char* op : {"fma", "mad", "mul_add"})
        for (const char* width : {"1", "8"})
            CHECK(find_measurement(r, "kernel.compute", {{"op", op}, {"vector", width}, {"chains", "8"}}) != nullptr);
    const Measurement* peak = find_measurement(r, "kernel.peak.fp16");
    REQUIRE(peak != nullptr);
    CHECK_THAT(peak->note, Catch::Contains("op="));
    for (const auto& m : r.measurements) {
        if (m.metric != "kernel.compute") continue;
        CHECK(m.labels.count("op") == 1);
        CHECK(m.summary.median <= peak->summary.median);
    }
    // fma against the faster spellings, and a note when fma takes a slow path.
    const double slowdown = r.attributes.at("fma_slowdown").get<double>();
    CHECK(slowdown > 0);
    CHECK(r.attributes.contains("fma_note") == (slowdown >= 2.0));
    test::check_samples(r);
}

TEST_CASE("a half mad kernel that gets the arithmetic wrong fails verification", "[probes][verification]") {
    // a*b + c becomes a*b + b*b: it converges to 1/2, not 1.
    const auto dir =
        test::patched_kernel_dir("peak/compute.cl", "a##j = mad(a##j, vb, vc);", "a##j = mad(a##j, vb, vb * vb);");
    auto session = test::session_with_kernels(dir);
    auto probe = make_compute_probe(Precision::fp16);
    const ProbeResult r = test::run_quick(*probe, *session);
    std::filesystem::remove_all(dir);
    if (r.status == ProbeStatus::unsupported) return;  // no half precision on this device
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK_THAT(r.reason, Catch::Contains("mad_v"));
    CHECK(count(r, "kernel.peak.fp16") == 0);
}

TEST_CASE("kernel.compute.fp64 and fp16 end Ok, or Unsupported with a reason", "[probes]") {
    for (auto precision : {Precision::fp64, Precision::fp16}) {
        auto probe = make_compute_probe(precision);
        const ProbeResult r = test::run_quick(*probe, test::shared_session());
        INFO(probe->id() << ": " << r.reason);
        if (r.status == ProbeStatus::unsupported) {
            CHECK_FALSE(r.reason.empty());
            CHECK(r.measurements.empty());
        } else {
            REQUIRE(r.status == ProbeStatus::ok);
            test::check_samples(r);
        }
    }
    // PoCL's CPU device does double precision: there, fp64 must be measured.
    if (test::shared_session().info().fp64) {
        auto probe = make_compute_probe(Precision::fp64);
        CHECK(test::run_quick(*probe, test::shared_session()).status == ProbeStatus::ok);
    }
}

TEST_CASE("kernel.host_gemm measures sgemm and dgemm on a CPU device, and only there", "[probes]") {
    auto probe = make_host_gemm_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
#ifndef CLPROBE_HAVE_OPENBLAS
    CHECK(r.status == ProbeStatus::unsupported);
    CHECK(r.reason == "built without OpenBLAS");
    return;
#endif
    if (test::shared_session().info().type != "cpu") {
        CHECK(r.status == ProbeStatus::unsupported);
        CHECK_THAT(r.reason, Catch::StartsWith("the device is not this host's CPU"));
        return;
    }
    REQUIRE(r.status == ProbeStatus::ok);
    CHECK(count(r, "kernel.host_gemm.gflops") == 2);
    for (const char* precision : {"fp32", "fp64"})
        CHECK(find_measurement(r, "kernel.host_gemm.gflops", {{"precision", precision}}) != nullptr);
    test::check_samples(r);
}

TEST_CASE("kernel.launch measures round trip, back-to-back and enqueue-to-start latency", "[probes]") {
    auto probe = make_launch_latency_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    CHECK(find_measurement(r, "kernel.launch.latency", {{"kind", "round_trip"}}) != nullptr);
    CHECK(find_measurement(r, "kernel.launch.latency", {{"kind", "back_to_back"}}) != nullptr);
    if (test::shared_session().profiling())
        CHECK(find_measurement(r, "kernel.launch.latency", {{"kind", "enqueue_to_start"}}) != nullptr);
    for (const auto& m : r.measurements)
        CHECK_FALSE(m.higher_is_better);
    test::check_samples(r);
}

TEST_CASE("kernel.build measures cold, driver-cached and binary-cached builds", "[probes]") {
    auto probe = make_build_time_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    CHECK(find_measurement(r, "kernel.build.time", {{"path", "cold"}}) != nullptr);
    CHECK(find_measurement(r, "kernel.build.time", {{"path", "driver_cache"}}) != nullptr);
    test::check_samples(r);
}

TEST_CASE("a compute kernel that gets the arithmetic wrong fails verification", "[probes][verification]") {
    // a*b + c becomes a*b: fast, and wrong.
    const auto dir = test::patched_kernel_dir("peak/compute.cl", "a##j = fma(a##j, vb, vc);", "a##j = a##j * vb;");
    auto session = test::session_with_kernels(dir);
    auto probe = make_compute_probe(Precision::fp32);
    const ProbeResult r = test::run_quick(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK(count(r, "kernel.peak.fp32") == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a copy kernel that skips data fails verification", "[probes][verification]") {
    // The chunked copy moves only the first half of each chunk.
    const auto dir = test::patched_kernel_dir("peak/bandwidth.cl",
                                              "for (uint k = 0; k < per_item; ++k) out[base + k] = in[base + k];",
                                              "for (uint k = 0; k < per_item / 2; ++k) out[base + k] = in[base + k];");
    auto session = test::session_with_kernels(dir);
    auto probe = make_bandwidth_probe();
    const ProbeResult r = test::run_quick(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::Contains("verification failed: copy_chunked"));
    CHECK(count(r, "kernel.peak.bandwidth") == 0);
    std::filesystem::remove_all(dir);
}

TEST_CASE("kernel.memory_levels measures a verified curve and its roofs", "[probes]") {
    auto probe = make_memory_levels_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    test::check_samples(r);
    const auto facts = memory_roof_facts_of({r});
    REQUIRE(facts.has_value());
    // One point per working set, doubling up to at least 64 MiB.
    REQUIRE(facts->curve.size() >= 5);
    CHECK(count(r, "kernel.memory_levels.bandwidth") == facts->curve.size());
    CHECK(facts->curve.back().working_set_bytes >= (64u << 20));
    for (const auto& point : facts->curve) {
        const Labels at{{"working_set", std::to_string(point.working_set_bytes)}};
        const Measurement* m = find_measurement(r, "kernel.memory_levels.bandwidth", at);
        REQUIRE(m != nullptr);
        CHECK(m->summary.median == point.gb_per_s);
    }
    CHECK(count(r, "kernel.roof.bandwidth") == facts->roofs.size());
    for (const auto& roof : facts->roofs)
        CHECK(find_measurement(r, "kernel.roof.bandwidth", {{"level", roof.level}}) != nullptr);
    // Without the topology layer the capacities come from the device, and the note says so.
    if (!facts->caches.empty()) CHECK_THAT(facts->note, Catch::Contains("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE"));
}

TEST_CASE("a level kernel that reads the wrong data fails verification", "[probes][verification]") {
    // The chunked kernel reads one vector twice and skips another.
    const auto dir = test::patched_kernel_dir("peak/memory_levels.cl", "a7 += p[k + 7];", "a7 += p[k + 6];");
    auto session = test::session_with_kernels(dir);
    auto probe = make_memory_levels_probe();
    const ProbeResult r = test::run_quick(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::Contains("verification failed: memory_levels chunked"));
    CHECK(count(r, "kernel.roof.bandwidth") == 0);
    std::filesystem::remove_all(dir);
}

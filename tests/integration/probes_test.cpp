// Each kernel-layer probe, in quick mode on the test device: it ends Ok (or Unsupported with a
// reason), every sample is finite and positive, the headline ceilings exist, and a kernel that
// computes the wrong thing makes its probe fail instead of reporting a time.
#include <fmt/core.h>
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <vector>

#include "core/memory_roofs.hpp"
#include "kernel/int_mix.hpp"
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

TEST_CASE("kernel.bandwidth measures its verified variants and a peak", "[probes]") {
    auto probe = make_bandwidth_probe();
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    // read and copy at widths 1, 4, 16 in both patterns outside --full (a quick run on a CPU device:
    // the interleaved pattern at 16 only), and two-stream reads of float4 and float16
    const bool cpu = test::shared_session().info().type == "cpu";
    const std::size_t variants = cpu ? 10 : 14;
    CHECK(count(r, "kernel.bandwidth") == variants);
    CHECK(find_measurement(r, "kernel.bandwidth", {{"access", "read"}, {"pattern", "interleaved"}, {"vector", "16"}}) !=
          nullptr);
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
    CHECK_THAT(peak->note, Catch::Contains(fmt::format("best of {} variants", variants)));
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

TEST_CASE("kernel.compute.int32 measures every mix and shape, each checked bit for bit, and a peak in GIOP/s",
          "[probes]") {
    auto probe = make_int_compute_probe();
    CHECK(probe->id() == "kernel.compute.int32");
    const ProbeResult r = test::run_quick(*probe, test::shared_session());
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    // mul at 6 shapes (--full adds uint2 and scalar with 16 chains), md5 and md5xor at 3 each, arx
    // at 2 (--full: 8 each)
    CHECK(count(r, "kernel.compute") == 14);
    for (const char* chains : {"4", "8", "16"})
        CHECK(find_measurement(r, "kernel.compute",
                               {{"precision", "int32"}, {"mix", "mul"}, {"vector", "16"}, {"chains", chains}}) !=
              nullptr);
    for (const char* width : {"1", "4", "8"})
        CHECK(find_measurement(r, "kernel.compute",
                               {{"precision", "int32"}, {"mix", "mul"}, {"vector", width}, {"chains", "8"}}) !=
              nullptr);
    for (const char* mix : {"md5", "md5xor", "arx"})
        for (const char* width : {"1", "16"})
            CHECK(find_measurement(r, "kernel.compute",
                                   {{"precision", "int32"}, {"mix", mix}, {"vector", width}, {"chains", "8"}}) !=
                  nullptr);
    for (const char* mix : {"md5", "md5xor"})
        CHECK(find_measurement(r, "kernel.compute",
                               {{"precision", "int32"}, {"mix", mix}, {"vector", "16"}, {"chains", "4"}}) != nullptr);
    // Every variant names its mix.
    for (const auto& m : r.measurements)
        if (m.metric == "kernel.compute") CHECK(m.labels.count("mix") == 1);
    const Measurement* peak = find_measurement(r, "kernel.peak.int32");
    REQUIRE(peak != nullptr);
    CHECK(peak->unit == "GIOP/s");
    CHECK(peak->labels.empty());
    CHECK(peak->summary.median > 0);
    CHECK_THAT(peak->note, Catch::Contains("best of 14 variants"));
    CHECK_THAT(peak->note, Catch::Contains("chains="));
    // The peak is the fastest variant of any mix, and its note and attributes name that mix.
    double fastest = 0;
    const Measurement* winner = nullptr;
    for (const auto& m : r.measurements) {
        CHECK(m.unit == "GIOP/s");
        CHECK(m.summary.median <= peak->summary.median);
        if (m.metric == "kernel.compute" && m.summary.median > fastest) {
            fastest = m.summary.median;
            winner = &m;
        }
    }
    REQUIRE(winner != nullptr);
    CHECK(peak->summary.median == fastest);
    const std::string mix = winner->labels.at("mix");
    CHECK(r.attributes.at("peak_mix").get<std::string>() == mix);
    CHECK_THAT(peak->note, Catch::Contains("mix=" + mix));
    CHECK(r.attributes.at("peak_kernel").get<std::string>() ==
          mix + "_v" + winner->labels.at("vector") + "_c" + winner->labels.at("chains"));
    // Each mix's best median, the winner's the peak.
    const auto& mix_peaks = r.attributes.at("mix_peaks");
    for (const char* m : {"mul", "md5", "md5xor", "arx"}) {
        REQUIRE(mix_peaks.contains(m));
        CHECK(mix_peaks.at(m).get<double>() > 0);
        CHECK(mix_peaks.at(m).get<double>() <= peak->summary.median);
    }
    CHECK(mix_peaks.at(mix).get<double>() == peak->summary.median);
    CHECK_THAT(r.attributes.at("ops_counted").get<std::string>(), Catch::Contains("mul 8 a step"));
    CHECK_THAT(r.attributes.at("ops_counted").get<std::string>(), Catch::Contains("md5 9 a step, 4 steps a trip"));
    CHECK_THAT(r.attributes.at("ops_counted").get<std::string>(), Catch::Contains("md5xor 8 a step"));
    CHECK_THAT(r.attributes.at("ops_counted").get<std::string>(), Catch::Contains("arx 12"));
    test::check_samples(r);
}

TEST_CASE("an integer mix kernel that rotates by the wrong amount fails verification", "[probes][verification]") {
    // A rotation off by one bit (mul, arx; md5 and md5xor share theirs, and md5 is checked first)
    // or md5xor's F selecting the wrong word: as fast, and every value differs. Each mix's kernels
    // are checked after every earlier mix's passed.
    struct Planted {
        const char* from;
        const char* to;
        const char* kernel;
    };
    const Planted planted[] = {{"vr = (vec_t)7u", "vr = (vec_t)8u", "mul_v"},
                               {"b##j, 17u)", "b##j, 18u)", "md5_v"},
                               {"(z ^ (x & (y ^ z)))", "(y ^ (x & (y ^ z)))", "md5xor_v"},
                               {"(vec_t)8u)", "(vec_t)9u)", "arx_v"}};
    for (const Planted& p : planted) {
        INFO(p.kernel);
        const auto dir = test::patched_kernel_dir("peak/int32.cl", p.from, p.to);
        auto session = test::session_with_kernels(dir);
        auto probe = make_int_compute_probe();
        const ProbeResult r = test::run_quick(*probe, *session);
        std::filesystem::remove_all(dir);
        CHECK(r.status == ProbeStatus::error);
        CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
        CHECK_THAT(r.reason, Catch::Contains(p.kernel));
        CHECK(count(r, "kernel.peak.int32") == 0);
    }
}

TEST_CASE("the host's integer mixes match independent references and catch one wrong bit", "[verification]") {
    using int_mix::Mix;
    // One step of each, against independent implementations: the mul step from Python, the first
    // step of MD5("") (m = M[0] = 0x80, k = K[0] = 0xd76aa478, from a Python MD5 that matches
    // hashlib), and RFC 8439's quarter-round test vector (section 2.1.1).
    static_assert(int_mix::step(0, int_mix::coef_b, int_mix::coef_c) == 0xa42f77a0u);
    static_assert(int_mix::md5_step(0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0x80u, 0xd76aa478u, 7) ==
                  0xa5202774u);
    static_assert(int_mix::arx_trip({0x11111111u, 0x01020304u, 0x9b8d6f43u, 0x01234567u}) ==
                  int_mix::Words{0xea2a92f4u, 0xcb1cf8ceu, 0x4581472eu, 0x5881c4bbu});
    // Lane sums of work-item 5 of <mix>_v4_c8 after 3 trips, from a separate Python implementation
    // of kernels/peak/int32.cl's recurrences (md5xor computes md5's values).
    struct Reference {
        Mix mix;
        std::uint32_t item5[4];
    };
    const Reference references[] = {{Mix::mul, {0x090fa54eu, 0x30335aa0u, 0xfc94e0b6u, 0x82d3e983u}},
                                    {Mix::md5, {0xa2c4927au, 0x3956ebb9u, 0x04c1ef2au, 0x52523eafu}},
                                    {Mix::md5xor, {0xa2c4927au, 0x3956ebb9u, 0x04c1ef2au, 0x52523eafu}},
                                    {Mix::arx, {0x5c93d026u, 0x267399ffu, 0x0af1e850u, 0xc5354490u}}};
    constexpr std::size_t items = 10, width = 4;
    constexpr int w = static_cast<int>(width), chains = 8;
    for (const Reference& ref : references) {
        INFO(int_mix::name(ref.mix));
        std::vector<std::uint32_t> device(items * width);
        for (std::size_t item = 0; item < items; ++item)
            for (std::size_t lane = 0; lane < width; ++lane)
                for (int j = 0; j < chains; ++j) {
                    const int l = static_cast<int>(lane);
                    if (ref.mix == Mix::mul) {
                        std::uint32_t a = int_mix::start_value(item, j, l);
                        for (int t = 0; t < 3; ++t)
                            a = int_mix::step(a, int_mix::coef_b, int_mix::coef_c);
                        device[item * width + lane] += a;
                    } else {
                        int_mix::Words v = int_mix::start_words(item, j, l);
                        for (int t = 0; t < 3; ++t)
                            v = ref.mix == Mix::arx ? int_mix::arx_trip(v)
                                                    : int_mix::md5_trip(v, int_mix::coef_b, int_mix::coef_c);
                        device[item * width + lane] += v[0] + v[1] + v[2] + v[3];
                    }
                }
        for (std::size_t lane = 0; lane < width; ++lane)
            CHECK(device[5 * width + lane] == ref.item5[lane]);
        CHECK_FALSE(int_mix::check(ref.mix, device, items, w, chains, 3).has_value());
        // One bit off in one lane of one work-item: every work-item is checked here (10 < 64).
        device[5 * width + 2] ^= 1u << 17;
        const auto wrong = int_mix::check(ref.mix, device, items, w, chains, 3);
        REQUIRE(wrong.has_value());
        CHECK_THAT(*wrong, Catch::Contains("item 5 lane 2"));
        device[5 * width + 2] ^= 1u << 17;
        // The same buffer after another trip count, or read as a mix of other values, is wrong.
        CHECK(int_mix::check(ref.mix, device, items, w, chains, 4).has_value());
        const auto family = [](Mix m) { return m == Mix::md5xor ? Mix::md5 : m; };
        for (const Mix other : int_mix::all_mixes)
            if (family(other) != family(ref.mix)) CHECK(int_mix::check(other, device, items, w, chains, 3).has_value());
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

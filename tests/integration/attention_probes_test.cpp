// The attention workload on the test device: every kernel variant against the double-precision
// reference on small random shapes (sequence lengths that are not multiples of any tile, head_dim
// 64 and 128, causal and not), each probe ending Ok on tiny --attn-* shapes, and kernels that
// compute the wrong thing failing verification instead of reporting a time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <random>

#include "attention/attention_device.hpp"
#include "attention/attention_memory.hpp"
#include "attention/request_lengths.hpp"
#include "probe_factories.hpp"
#include "rules/analysis.hpp"
#include "rules/attention_rules.hpp"
#include "runtime/runner.hpp"
#include "session_fixture.hpp"

using namespace clprobe;
using namespace clprobe::attention;

namespace {

RunOptions::AttentionShape tiny_shape(std::uint32_t head_dim = 64, bool causal = false) {
    RunOptions::AttentionShape a;
    a.batch = 1;
    a.heads = 2;
    a.seq = 77;  // not a multiple of any tile
    a.head_dim = head_dim;
    a.kv_len = 300;
    a.causal = causal;
    return a;
}

ProbeResult run_tiny(Probe& probe, DeviceSession& s, RunOptions::AttentionShape shape = tiny_shape(),
                     std::vector<ProbeResult> earlier = {}) {
    RunOptions options;
    options.mode = RunMode::quick;
    options.attention = shape;
    ProbeContext ctx{&s, options, earlier, nullptr};
    return run_probe(probe, ctx);
}

// Bytes the buffers take on the device (CL_MEM_SIZE).
std::uint64_t bytes_of(std::initializer_list<const cl::Buffer*> buffers) {
    std::uint64_t sum = 0;
    for (const cl::Buffer* b : buffers)
        sum += b->getInfo<CL_MEM_SIZE>();
    return sum;
}

}  // namespace

TEST_CASE("fused tiles: row blocks on CPU devices, never when that kernel does not build", "[attention]") {
    DeviceInfo cpu = test::shared_session().info();
    cpu.type = "cpu";
    DeviceInfo gpu = cpu;
    gpu.type = "gpu";
    CHECK(fused_tiles(cpu, 64, false, true).front().rows_per_item == 16);
    CHECK(fused_tiles(gpu, 64, false, true).front().rows_per_item == 1);
    CHECK(fused_tiles(cpu, 64, false, false).front().rows_per_item == 1);
    const auto swept = fused_tiles(cpu, 64, true, false);
    CHECK_FALSE(swept.empty());
    for (const auto& t : swept)
        CHECK(t.rows_per_item == 1);
    CHECK(fused_tiles(cpu, 64, true, true).size() > swept.size());
}

TEST_CASE("every prefill variant matches the reference on random shapes", "[attention]") {
    DeviceSession& s = test::shared_session();
    std::mt19937 rng(42);
    for (std::uint32_t d : {64u, 128u}) {
        FusedKernels fused(s, d);
        REQUIRE(fused.has_row_block());  // PoCL builds it: its tiles must be among those checked
        for (bool causal : {false, true}) {
            // 1..2 sequences of 2..3 heads, 9..150 tokens: never a whole number of tiles.
            const std::uint32_t batch = 1 + rng() % 2, heads = 2 + rng() % 2;
            std::uint32_t seq = 9 + rng() % 142;
            if (seq % 8 == 0) ++seq;
            INFO("head_dim " << d << " causal " << causal << " batch " << batch << " heads " << heads << " seq "
                             << seq);
            const PrefillProblem p = uniform_problem(batch, heads, seq, d, causal, rng());
            DeviceTensors t = upload(s, p);
            std::vector<std::uint32_t> all(p.heads());
            for (std::uint32_t h = 0; h < p.heads(); ++h)
                all[h] = h;
            const HeadSet set = make_head_set(s, p, all, 0);
            for (const FusedTile& tile : fused_tiles(s.info(), d, true, true)) {
                INFO("tile " << tile.label());
                s.queue().enqueueFillBuffer(t.o, 0.0f, 0, p.q.size() * 4);
                enqueue_fused(s.queue(), fused, t, set, p, tile);
                CHECK(verify_prefill(s.queue(), t.o, p, seq, 1e-4, "fused") < 1e-4);
            }
            UnfusedKernels u = make_unfused(s, p);
            // The footprint model counts exactly the buffers these calls created.
            const PrefillShape shape{batch, heads, seq, d};
            const std::uint64_t tensors = bytes_of({&t.q, &t.k, &t.v, &t.o});
            CHECK(tensors + bytes_of({&set.starts, &set.lens}) == prefill_footprint(shape, PrefillPath::fused).total);
            CHECK(tensors + bytes_of({&u.s}) == prefill_footprint(shape, PrefillPath::unfused).total);
            std::vector<cl::Event> events;
            s.queue().enqueueFillBuffer(t.o, 0.0f, 0, p.q.size() * 4);
            enqueue_unfused(s.queue(), u, t, p, events);
            CHECK(verify_prefill(s.queue(), t.o, p, seq, 1e-4, "unfused") < 1e-4);

            // Variable lengths: padded to the longest, bucketed, packed.
            const auto lengths = skewed_lengths(5, seq, rng());
            const PrefillProblem padded = packed_problem(lengths, heads, d, causal, rng(), seq);
            const PrefillProblem packed = packed_problem(lengths, heads, d, causal, rng());
            for (const auto* prob : {&padded, &packed}) {
                DeviceTensors tv = upload(s, *prob);
                std::vector<std::uint32_t> members(prob->heads());
                for (std::uint32_t h = 0; h < prob->heads(); ++h)
                    members[h] = h;
                const std::uint32_t pad_to = prob == &padded ? seq : 0;
                enqueue_fused(s.queue(), fused, tv, make_head_set(s, *prob, members, pad_to), *prob,
                              fused_tiles(s.info(), d, false, true).front());
                CHECK(verify_prefill(s.queue(), tv.o, *prob, seq, 1e-4, "varlen") < 1e-4);
            }
        }
    }
}

TEST_CASE("attention probes end Ok on tiny shapes with verified, well-formed measurements", "[attention][probes]") {
    DeviceSession& s = test::shared_session();
    SECTION("prefill: unfused first, fused, their errors and the score-matrix traffic") {
        auto probe = make_attention_prefill_probe();
        CHECK(probe->workload() == "attention");
        const ProbeResult r = run_tiny(*probe, s);
        INFO(r.reason);
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        const auto* unfused = find_measurement(r, "attention.prefill.time", {{"variant", "unfused"}});
        REQUIRE(unfused != nullptr);
        CHECK(unfused->labels.at("seq") == "77");
        CHECK(unfused->labels.at("head_dim") == "64");
        CHECK(find_measurement(r, "attention.prefill.gflops", {{"variant", "fused"}}) != nullptr);
        CHECK(find_measurement(r, "attention.prefill.error", {{"variant", "fused"}})->summary.median < 1e-4);
        CHECK(find_measurement(r, "attention.prefill.score_bytes") != nullptr);
        CHECK(r.attributes.at("roofline_points").size() >= 2);
        // Device memory: Q, K, V, O of 2 heads x 77 rows x 64 floats, plus the 2 x 77 x 77 score
        // matrix (unfused) or two head offsets (fused); and the largest prompt each path fits here.
        const auto* unfused_bytes = find_measurement(r, "attention.memory.device_bytes", {{"variant", "unfused"}});
        REQUIRE(unfused_bytes != nullptr);
        CHECK(unfused_bytes->summary.median == 4.0 * 2 * 77 * 64 * 4 + 2.0 * 77 * 77 * 4);
        CHECK(unfused_bytes->timer == TimerKind::none);
        CHECK(find_measurement(r, "attention.memory.device_bytes", {{"variant", "fused"}})->summary.median ==
              4.0 * 2 * 77 * 64 * 4 + 2 * 2 * 4);
        CHECK(find_measurement(r, "attention.memory.largest_buffer", {{"variant", "unfused"}})->summary.median ==
              2.0 * 77 * 77 * 4);
        const auto* fused_cap = find_measurement(r, "attention.memory.max_batch_seq", {{"path", "fused"}});
        const auto* unfused_cap = find_measurement(r, "attention.memory.max_batch_seq", {{"path", "unfused"}});
        REQUIRE(fused_cap != nullptr);
        REQUIRE(unfused_cap != nullptr);
        CHECK(unfused_cap->summary.median >= 77);
        CHECK(fused_cap->summary.median > unfused_cap->summary.median);
        // No ceiling ran before it here: the fraction is reported missing, not invented.
        CHECK(find_measurement(r, "attention.prefill.peak_fraction") == nullptr);
        CHECK(r.attributes.contains("peak_fraction_missing"));
    }
    SECTION("decode: fp32 and int8, one group per head and split, with errors; fp16 Ok or Unsupported") {
        auto probe = make_attention_decode_probe();
        const ProbeResult r = run_tiny(*probe, s, tiny_shape(128));
        INFO(r.reason);
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        for (const char* precision : {"fp32", "int8"})
            for (const char* split : {"single", "split"})
                CHECK(find_measurement(r, "attention.decode.bandwidth",
                                       {{"precision", precision}, {"split", split}, {"kv_len", "300"}}) != nullptr);
        CHECK(find_measurement(r, "attention.decode.error", {{"precision", "fp32"}})->summary.median < 1e-4);
        CHECK(find_measurement(r, "attention.decode.error", {{"precision", "int8"}})->summary.median < 5e-2);
        // The int8 cache takes about a quarter of the fp32 one's memory.
        const auto* fp32_bytes =
            find_measurement(r, "attention.memory.device_bytes", {{"variant", "decode"}, {"precision", "fp32"}});
        const auto* int8_bytes =
            find_measurement(r, "attention.memory.device_bytes", {{"variant", "decode"}, {"precision", "int8"}});
        REQUIRE(fp32_bytes != nullptr);
        REQUIRE(int8_bytes != nullptr);
        CHECK(fp32_bytes->summary.median > 2 * 300 * 128 * 4 * 2);  // batch 1 x 2 heads, K and V
        CHECK(int8_bytes->summary.median < fp32_bytes->summary.median / 2);

        auto fp16 = make_attention_decode_fp16_probe();
        const ProbeResult h = run_tiny(*fp16, s);
        INFO(h.reason);
        if (h.status == ProbeStatus::unsupported) {
            CHECK_THAT(h.reason, Catch::Contains("fp16"));
        } else {
            REQUIRE(h.status == ProbeStatus::ok);
            test::check_samples(h);
        }
    }
    SECTION("decode in memory: the memory roof is read again beside it and raises a roof it beats") {
        // A memory roof far below anything real (no level sweep: every working set is "memory").
        ProbeResult peak;
        peak.id = "kernel.bandwidth";
        peak.layer = "kernel";
        peak.status = ProbeStatus::ok;
        peak.measurements.push_back(
            make_measurement("kernel.peak.bandwidth", "GB/s", {}, {1e-6, 1e-6, 1e-6}, TimerKind::device_profiling));
        auto probe = make_attention_decode_probe();
        const ProbeResult r = run_tiny(*probe, s, tiny_shape(), {peak});
        INFO(r.reason);
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        const auto* paired = find_measurement(r, "attention.decode.memory_roof", {{"kv_len", "300"}});
        REQUIRE(paired != nullptr);
        CHECK(paired->unit == "GB/s");
        CHECK(paired->summary.median > 1e-6);
        const auto* fraction = find_measurement(r, "attention.decode.peak_fraction", {{"precision", "fp32"}});
        REQUIRE(fraction != nullptr);
        CHECK_THAT(fraction->note, Catch::Contains("attention.decode.memory_roof{kv_len=300}"));
        // Without a placed roof at the memory level nothing is read again.
        const ProbeResult plain = run_tiny(*probe, s);
        CHECK(find_measurement(plain, "attention.decode.memory_roof") == nullptr);
    }
    SECTION("batching: three strategies, padding fractions ordered") {
        auto probe = make_attention_batching_probe();
        const ProbeResult r = run_tiny(*probe, s, tiny_shape(64, true));
        INFO(r.reason);
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        auto waste = [&](const char* st) {
            return find_measurement(r, "attention.batching.padding_fraction", {{"strategy", st}})->summary.median;
        };
        CHECK(waste("packed") == 0.0);
        CHECK(waste("bucketed") <= waste("padded"));
        CHECK(find_measurement(r, "attention.batching.throughput", {{"strategy", "bucketed"}}) != nullptr);
    }
    SECTION("host BLAS prefill needs no device") {
        auto probe = make_attention_host_blas_probe();
        CHECK_FALSE(probe->needs_device());
        const ProbeResult r = run_tiny(*probe, s);
        INFO(r.reason);
#ifdef CLPROBE_HAVE_OPENBLAS
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        CHECK(find_measurement(r, "attention.host_blas.prefill.time") != nullptr);
#else
        CHECK(r.status == ProbeStatus::unsupported);
        CHECK(r.reason == "built without OpenBLAS");
#endif
    }
    SECTION("serving step: the baseline pipeline first, every stage, and step times") {
        auto probe = make_attention_step_probe();
        const ProbeResult r = run_tiny(*probe, s);
        INFO(r.reason);
        REQUIRE(r.status == ProbeStatus::ok);
        test::check_samples(r);
        const auto& first = r.measurements.front();
        CHECK(first.metric == "attention.pipeline.stage_time");
        CHECK(first.labels.at("variant") == "baseline");
        for (const char* v : {"baseline", "tuned"}) {
            for (const char* stage : {"upload", "prefill", "decode", "download"})
                CHECK(find_measurement(r, "attention.pipeline.stage_time", {{"variant", v}, {"stage", stage}}));
            CHECK(find_measurement(r, "attention.pipeline.step_time", {{"variant", v}}));
        }
    }
}

TEST_CASE("attention prefill of a prompt too large for the device: skipped, its memory recorded, the finding explains",
          "[attention][memory]") {
    DeviceSession& s = test::shared_session();
    auto shape = tiny_shape();
    shape.seq = 1u << 31;  // Q alone: 2 heads x 2^31 tokens x 64 floats = 1 TiB
    auto probe = make_attention_prefill_probe();
    const ProbeResult r = run_tiny(*probe, s, shape);
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::unsupported);
    CHECK(r.attributes.contains("shape_skipped"));
    CHECK(find_measurement(r, "attention.memory.device_bytes", {{"variant", "fused"}})->summary.median ==
          4.0 * 2 * 2147483648.0 * 64 * 4 + 2 * 2 * 4);
    const auto* fits = find_measurement(r, "attention.memory.max_batch_seq", {{"path", "fused"}});
    REQUIRE(fits != nullptr);
    CHECK(fits->summary.median < 2147483648.0);

    RunReport report;
    report.device = s.info();
    report.results.push_back(r);
    analyze(report, attention_rules());
    const auto shape_finding = std::find_if(report.findings.begin(), report.findings.end(), [](const Finding& f) {
        return f.id == "attention.memory.shape_does_not_fit";
    });
    REQUIRE(shape_finding != report.findings.end());
    CHECK(shape_finding->severity == Severity::high);
    CHECK_THAT(shape_finding->title, Catch::Contains("attention.prefill was skipped"));
}

TEST_CASE("an attention kernel that gets the softmax wrong fails verification", "[attention][verification]") {
    // The fused kernel a CPU device runs by default double-counts the softmax denominator of
    // its first eight rows.
    const auto dir = test::patched_kernel_dir("attention/attention.cl", "la += pa;", "la += 2.0f * pa;");
    auto session = test::session_with_kernels(dir);
    auto probe = make_attention_prefill_probe();
    const ProbeResult r = run_tiny(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed") && Catch::Contains("fused prefill"));
    CHECK(find_measurement(r, "attention.prefill.time") == nullptr);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a decode kernel that drops the scales fails verification", "[attention][verification]") {
    // int8 values without their group scales: fast, and wrong.
    const auto dir =
        test::patched_kernel_dir("attention/attention.cl", "* sc[(row) * GROUPS_PER_ROW + (w) * 8 / KV_GROUP]", "");
    auto session = test::session_with_kernels(dir);
    auto probe = make_attention_decode_probe();
    const ProbeResult r = run_tiny(*probe, *session);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed") && Catch::Contains("decode int8"));
    std::filesystem::remove_all(dir);
}

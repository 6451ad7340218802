// Which roof a workload variant is held against (pure logic over earlier results; it lives in the
// probes library, so it is tested here), and the decode length that makes decode memory-bound.
#include <catch2/catch.hpp>

#include "attention/attention_config.hpp"
#include "common/paired_memory_roof.hpp"
#include "common/roof_placement.hpp"
#include "core/memory_roofs.hpp"

using namespace clprobe;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

ProbeResult ok_result(std::string id) {
    ProbeResult r;
    r.id = std::move(id);
    r.layer = "kernel";
    r.status = ProbeStatus::ok;
    return r;
}

ProbeResult memory_peak(double gbs) {
    ProbeResult r = ok_result("kernel.bandwidth");
    r.measurements.push_back(
        make_measurement("kernel.peak.bandwidth", "GB/s", {}, {gbs, gbs, gbs}, TimerKind::device_profiling));
    return r;
}

ProbeResult levels() {
    MemoryRoofFacts f;
    f.caches = {{"L1", 64 * 1024}, {"L2", 2 * MiB}, {"L3", 32 * MiB}};
    f.roofs = {{"L1", 16 * 1024, 32 * 1024, 400, 2},
               {"L2", 256 * 1024, 1 * MiB, 150, 3},
               {"L3", 4 * MiB, 16 * MiB, 60, 3},
               {"memory", 128 * MiB, 256 * MiB, 20, 2}};
    ProbeResult r = ok_result(memory_levels_probe_id);
    r.attributes["facts"] = to_json(f);
    return r;
}

}  // namespace

TEST_CASE("roof placement: a cache-resident working set gets its level's roof", "[roofline][placement]") {
    const std::vector<ProbeResult> earlier{memory_peak(25), levels()};
    const auto l3 = bandwidth_roof_for(earlier, 16 * MiB);
    REQUIRE(l3);
    CHECK(l3->level == "L3");
    CHECK(l3->gb_per_s == Approx(60));
    CHECK(l3->metric == "kernel.roof.bandwidth{level=L3}");
    const auto memory = bandwidth_roof_for(earlier, 512 * MiB);
    REQUIRE(memory);
    CHECK(memory->level == "memory");
    CHECK(memory->gb_per_s == Approx(25));  // kernel.peak.bandwidth stands for the memory level
    CHECK(memory->metric == "kernel.peak.bandwidth");
}

TEST_CASE("roof placement: without the level sweep the memory roof bounds everything", "[roofline][placement]") {
    const std::vector<ProbeResult> earlier{memory_peak(25)};
    const auto roof = bandwidth_roof_for(earlier, 16 * MiB);
    REQUIRE(roof);
    CHECK(roof->level == "memory");
    CHECK(roof->gb_per_s == Approx(25));
    CHECK_FALSE(bandwidth_roof_for({}, 16 * MiB));
    ProbeResult failed = memory_peak(25);
    failed.status = ProbeStatus::error;
    CHECK_FALSE(bandwidth_roof_for({failed}, 16 * MiB));  // a failed probe's numbers do not count
}

TEST_CASE("roof placement: fractions and points name the roof they were held against", "[roofline][placement]") {
    const PlacedRoof roof{"L3", 60, "kernel.roof.bandwidth{level=L3}"};
    const Measurement rate = make_measurement("x.bandwidth", "GB/s", {}, {30, 45, 60}, TimerKind::device_profiling);
    const Measurement f = fraction_of_roof("x.peak_fraction", {{"v", "1"}}, rate, roof);
    CHECK(f.samples == std::vector<double>{0.5, 0.75, 1.0});
    CHECK(f.summary.median == Approx(0.75));
    CHECK(f.note.find("L3") != std::string::npos);
    const RooflinePoint p = placed_point("x", 0.5, 22.5, 16 * MiB, roof);
    CHECK(p.level == "L3");
    CHECK(*p.roof_gb_per_s == Approx(60));
    CHECK(placed_point("y", 0.5, 1, 0, std::nullopt).level.empty());
}

TEST_CASE("decode length: the fewest steps of 4096 tokens four times past the last cache", "[attention][config]") {
    const std::uint64_t per_token = 8 * 64 * 2 * 4;  // 8 heads, head_dim 64, K and V in fp32: 4 KiB
    // 32 MiB L3: 128 MiB of cache = 32768 tokens.
    CHECK(attention::memory_bound_kv_len({512, 4096}, per_token, 32 * MiB, 1ull << 40) == 32768u);
    // A configured length that already reaches it: nothing added.
    CHECK_FALSE(attention::memory_bound_kv_len({512, 32768}, per_token, 32 * MiB, 1ull << 40));
    // Unknown cache: nothing to size against.
    CHECK_FALSE(attention::memory_bound_kv_len({512}, per_token, 0, 1ull << 40));
    // K alone (64 MiB) would exceed a 32 MiB allocation limit.
    CHECK_FALSE(attention::memory_bound_kv_len({512}, per_token, 32 * MiB, 32 * MiB));
    // A 260 MiB L3 (this project's 2026-12 VM): 1,040 MiB = 266,240 tokens, 65 steps, not the
    // 524,288 (2 GiB) a doubling asked for.
    CHECK(attention::memory_bound_kv_len({512, 4096}, per_token, 260 * MiB, 1ull << 40) == 266240u);
    // One byte past a step: the next step, no more.
    CHECK(attention::memory_bound_kv_len({}, per_token, 32 * MiB + 1, 1ull << 40) == 32768u + 4096u);
    // Not a power of two cache: at least 4x, within one step of it.
    const auto len = attention::memory_bound_kv_len({}, per_token, 3 * MiB, 1ull << 40);
    REQUIRE(len);
    CHECK(*len % attention::kv_len_step == 0);
    CHECK(std::uint64_t{*len} * per_token >= 12 * MiB);
    CHECK(std::uint64_t{*len - attention::kv_len_step} * per_token < 12 * MiB);
}

TEST_CASE("roof placement: the memory roof read beside a workload raises a roof it beats", "[roofline][placement]") {
    const Measurement paired =
        make_measurement("w.memory_roof", "GB/s", {{"kv_len", "32768"}}, {36, 38, 37}, TimerKind::device_profiling);
    // kernel.peak.bandwidth measured in a slower phase: the paired read's fastest sample stands in.
    const auto raised = raised_roof(PlacedRoof{"memory", 33.9, "kernel.peak.bandwidth"}, paired);
    REQUIRE(raised);
    CHECK(raised->gb_per_s == Approx(38));
    CHECK(raised->level == "memory");
    CHECK(raised->metric == "w.memory_roof{kv_len=32768}");
    // Above the paired read's median, below its fastest sample: raised.
    CHECK(raised_roof(PlacedRoof{"memory", 37.5, "kernel.peak.bandwidth"}, paired)->gb_per_s == Approx(38));
    // A roof the paired read does not reach stays as it was.
    const auto kept = raised_roof(PlacedRoof{"memory", 40, "kernel.peak.bandwidth"}, paired);
    REQUIRE(kept);
    CHECK(kept->gb_per_s == Approx(40));
    CHECK(kept->metric == "kernel.peak.bandwidth");
    // Nothing placed: the paired read is the roof.
    const auto alone = raised_roof(std::nullopt, paired);
    REQUIRE(alone);
    CHECK(alone->gb_per_s == Approx(38));
}

TEST_CASE("roof placement: the memory roof is read again only where its buffer fits", "[roofline][placement]") {
    DeviceInfo small;
    small.max_alloc_bytes = 256 * MiB;
    small.global_mem_bytes = 1024 * MiB;
    CHECK(PairedMemoryRoof::fits(small, 128 * MiB));        // three of 128 MiB fit in 4/5 of 1 GiB
    CHECK_FALSE(PairedMemoryRoof::fits(small, 512 * MiB));  // above the allocation limit
    small.global_mem_bytes = 256 * MiB;
    CHECK_FALSE(PairedMemoryRoof::fits(small, 128 * MiB));  // three would not fit
    small.global_mem_bytes = 1;
    CHECK_FALSE(PairedMemoryRoof::fits(small, 128 * MiB));  // not even one byte each: no throw
}

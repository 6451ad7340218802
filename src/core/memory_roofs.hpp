#pragma once
// A bandwidth roof per memory level: the kernel.memory_levels probe measures read bandwidth over
// working-set sizes from inside the first cache level to several times the last one, finds the
// plateaus of that curve and names them after the cache they fit in (L1, L2, L3, memory).
// Workload probes, the rules and the renderers read these facts back (attribute "facts" of the
// kernel.memory_levels result) to place each workload against the roof of the level its working
// set lives in. Plain data and pure functions, like topology_facts: saved reports can be analysed
// without the machine.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct RunReport;
struct ProbeResult;
struct TopologyFacts;

// One cache level as the device's work sees it: the capacity summed over the instances the device
// spans (two cores' 1 MiB L2s hold 2 MiB between them).
struct CacheCapacity {
    std::string level;  // "L1", "L2", "L3"; "LLC": a CPU driver's global-memory cache, level unknown
    std::uint64_t bytes = 0;
};

// One point of the measured curve.
struct BandwidthPoint {
    std::uint64_t working_set_bytes = 0;
    double gb_per_s = 0;  // median
    // The samples' relative spread: their coefficient of variation, or (kernel.memory_levels) the
    // robust equivalent 1.4826 MAD / median, which one disturbed sample does not inflate.
    double cv = 0;
};

// A plateau of the curve: consecutive working sets whose bandwidth stays within the noise band.
struct MemoryRoof {
    std::string level;  // a CacheCapacity's level or "memory"; "cache" when no capacity is known
    std::uint64_t first_bytes = 0;
    std::uint64_t last_bytes = 0;
    double gb_per_s = 0;  // the plateau's bandwidth (median of its points)
    std::size_t points = 0;
};

struct MemoryRoofFacts {
    std::vector<CacheCapacity> caches;  // smallest level first
    std::vector<BandwidthPoint> curve;  // by working set, ascending
    std::vector<MemoryRoof> roofs;      // by working set, ascending; the last may be "memory"
    std::string note;                   // why a level has no roof (no clear plateau), or ""
};

// Plateaus of a curve (points ascending by working set). A plateau is at least `min_points`
// consecutive points whose spread (fastest minus slowest) stays within max(tolerance, 2 cv) of
// their median, cv being the noisiest point's (2 cv counts up to 2 x tolerance: one wild point
// must not merge two levels). A spread rather than a distance from the median, so that a curve
// falling steadily by more than the tolerance per step forms no plateau. Runs are taken longest
// first, so a point half-way between two levels cannot start or end one. Points between the last
// cache's capacity and four times it (partly cached) belong to no plateau. Each plateau is named
// after the smallest cache whose capacity holds its largest working set, "memory" when it starts
// at four or more times the last cache's capacity, "cache" when no capacity is known. When two
// plateaus get one name the faster stays. A curve without such runs gives no roofs.
std::vector<MemoryRoof> detect_plateaus(const std::vector<BandwidthPoint>& curve,
                                        const std::vector<CacheCapacity>& caches, double tolerance = 0.15,
                                        std::size_t min_points = 2);

// Why levels the curve covers have no roof ("no clear plateau for L2, L3: ..."), or "" when every
// covered level has one. A level is covered by points that fit in it but not in a smaller one;
// memory by points at four or more times the last cache.
std::string missing_roofs_note(const MemoryRoofFacts& facts);

// From this many times the last cache's capacity on a working set is memory-level; between the
// capacity and this many times it, partly cached.
inline constexpr std::uint64_t memory_level_factor = 4;

// The fewest items, a multiple of `step`, whose working set (`bytes_per_item` each) holds
// memory_level_factor times the last cache: the memory-level shape of a workload sized in steps
// (GLM rows, KV-cache tokens). Steps, not doublings, so the point is no larger than it must be
// (one step of slack at most). 0 when the cache or the item size is 0.
std::uint64_t memory_level_items(std::uint64_t last_cache_bytes, std::uint64_t bytes_per_item, std::uint64_t step);

// The caches a CPU device's work can fill, from the topology layer's facts: data and unified
// caches only, each level's size times the instances the device spans. A device of N compute
// units on a machine of P processing units spans about N/P of each level's instances (at least
// one): on PoCL the compute units are the cores the process may use.
// The largest capacity (the last level); 0 when none is known.
std::uint64_t last_cache_bytes(const std::vector<CacheCapacity>& caches);

std::vector<CacheCapacity> device_cache_capacities(const TopologyFacts& topology, unsigned compute_units);

// Where a working set lives: the smallest cache that holds it, else "memory" (a working set
// larger than the last cache does not fit in it, however much of it stays cached). With no
// capacity known, "memory" (the roof every working set was drawn against before).
std::string level_of(const std::vector<CacheCapacity>& caches, std::uint64_t working_set_bytes);

// The measured sweep at a working set: interpolated linearly in log(working set) between the two
// curve points around it (the point itself when one sits there); nullopt outside the curve.
std::optional<double> sweep_at(const std::vector<BandwidthPoint>& curve, std::uint64_t working_set_bytes);

// What a placed roof is: a cache level's plateau, the memory roof (kernel.peak.bandwidth or the
// memory plateau), the sweep measured at the working set's own size (between the last cache and
// memory), or a read measured beside the workload (raised_roof, probes/common/paired_memory_roof).
enum class RoofBasis { level, memory, sweep, paired };

// The roof a working set of this size is drawn against. Inside a cache: the roof of its level,
// else the nearest measured level above it (a faster level bounds a slower one's traffic too).
// Beyond the last cache (capacities known), never a cache's roof: between the last cache and four
// times it (partly cached) the sweep interpolated at its size; from four times on `memory_roof`
// (kernel.peak.bandwidth) when given, else the memory plateau, else the sweep at its size or its
// largest point. nullopt when nothing applies.
struct PlacedRoof {
    std::string level;
    double gb_per_s = 0;
    // where it comes from: kernel.peak.bandwidth, kernel.roof.bandwidth{level=..}, or
    // "kernel.memory_levels.bandwidth at 64 MiB (...)" for the sweep at the working set's size
    std::string metric;
    RoofBasis basis = RoofBasis::level;
};
std::optional<PlacedRoof> roof_for(const MemoryRoofFacts& facts, std::uint64_t working_set_bytes,
                                   std::optional<double> memory_roof = std::nullopt);

// Every bandwidth roof a run measured, to place any working set: the level roofs when
// kernel.memory_levels ran, and the memory roof (kernel.peak.bandwidth).
struct BandwidthRoofs {
    std::optional<MemoryRoofFacts> levels;
    std::optional<double> memory_gb_per_s;

    // The level roof (roof_for) when levels were measured, else the memory roof as "memory".
    std::optional<PlacedRoof> for_working_set(std::uint64_t working_set_bytes) const;
};

// Which sample of kernel.peak.bandwidth is the memory roof: its median (the rules of diagnose and
// of uncounted kernels), or its fastest sample, which counted work is judged against
// (core/kernel_roofs): every sample is a rate the device reached, and a median taken while the
// machine was busy put a counted copy at 1.3 of it.
enum class RoofSample { median, fastest };

// The roofs among these results (ok probes only).
BandwidthRoofs bandwidth_roofs_of(const std::vector<ProbeResult>& results, RoofSample sample = RoofSample::median);

nlohmann::json to_json(const MemoryRoofFacts& facts);
// nullopt when the JSON is not in this shape (rules never throw on a hand-edited report).
std::optional<MemoryRoofFacts> memory_roof_facts_from_json(const nlohmann::json& j);

// The facts stored by the kernel.memory_levels probe in this report or these earlier results.
inline constexpr const char* memory_levels_probe_id = "kernel.memory_levels";
std::optional<MemoryRoofFacts> memory_roof_facts_of(const std::vector<ProbeResult>& results);

}  // namespace clprobe

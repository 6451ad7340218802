#include "core/memory_roofs.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "core/byte_size.hpp"
#include "core/report.hpp"
#include "core/stats.hpp"
#include "core/topology_facts.hpp"

namespace clprobe {

using nlohmann::json;

namespace {

constexpr const char* memory_level = "memory";
constexpr const char* unknown_cache_level = "cache";

// Levels from fastest to slowest: L1 < L2 < ... < an unnamed cache < memory.
int level_rank(const std::string& level) {
    if (level == memory_level) return 1000;
    if (level == unknown_cache_level) return 100;
    if (level.size() < 2 || level.size() > 3 || level[0] != 'L') return 500;
    int n = 0;
    for (std::size_t i = 1; i < level.size(); ++i) {
        if (level[i] < '0' || level[i] > '9') return 500;
        n = n * 10 + (level[i] - '0');
    }
    return n;
}

// Points [first, last) form a plateau when their spread fits the band around their median.
bool is_plateau(const std::vector<BandwidthPoint>& c, std::size_t first, std::size_t last, double tolerance,
                double* spread_ratio) {
    double lo = c[first].gb_per_s, hi = lo, cv = 0;
    std::vector<double> rates;
    for (std::size_t i = first; i < last; ++i) {
        lo = std::min(lo, c[i].gb_per_s);
        hi = std::max(hi, c[i].gb_per_s);
        cv = std::max(cv, c[i].cv);
        rates.push_back(c[i].gb_per_s);
    }
    const double median = median_of(rates);
    if (!(median > 0)) return false;
    const double band = std::max(tolerance, std::min(2 * cv, 2 * tolerance));
    *spread_ratio = (hi - lo) / median;
    return *spread_ratio <= band;
}

struct Run {
    std::size_t first = 0, last = 0;  // [first, last)
};

// Longest plateau first, then the longest in what is left on either side of it: a point half-way
// between two levels joins neither when each level has points enough of its own.
void segment(const std::vector<BandwidthPoint>& c, std::size_t lo, std::size_t hi, double tolerance,
             std::size_t min_points, std::vector<Run>& runs) {
    std::optional<Run> best;
    double best_spread = 0;
    for (std::size_t first = lo; first < hi; ++first)
        for (std::size_t last = first + std::max<std::size_t>(min_points, 1); last <= hi; ++last) {
            double spread = 0;
            if (!is_plateau(c, first, last, tolerance, &spread)) continue;
            const std::size_t len = last - first;
            const std::size_t best_len = best ? best->last - best->first : 0;
            if (len > best_len || (len == best_len && spread < best_spread)) {
                best = Run{first, last};
                best_spread = spread;
            }
        }
    if (!best) return;
    segment(c, lo, best->first, tolerance, min_points, runs);
    runs.push_back(*best);
    segment(c, best->last, hi, tolerance, min_points, runs);
}

std::string plateau_name(const std::vector<CacheCapacity>& caches, std::uint64_t first, std::uint64_t last) {
    if (caches.empty()) return unknown_cache_level;
    if (first >= memory_level_factor * last_cache_bytes(caches)) return memory_level;
    return level_of(caches, last);
}

MemoryRoof roof_of(const std::vector<BandwidthPoint>& c, const Run& run, std::string level) {
    std::vector<double> rates;
    for (std::size_t i = run.first; i < run.last; ++i)
        rates.push_back(c[i].gb_per_s);
    return {std::move(level), c[run.first].working_set_bytes, c[run.last - 1].working_set_bytes, median_of(rates),
            run.last - run.first};
}

// Index ranges of the curve that a plateau may not cross: the cached part, the partly cached
// transition (left out) and memory. One range when no capacity is known.
std::vector<Run> zones_of(const std::vector<BandwidthPoint>& c, const std::vector<CacheCapacity>& caches) {
    if (caches.empty()) return {{0, c.size()}};
    const std::uint64_t llc = last_cache_bytes(caches);
    std::size_t cached_end = 0;
    while (cached_end < c.size() && c[cached_end].working_set_bytes <= llc)
        ++cached_end;
    std::size_t memory_begin = cached_end;
    while (memory_begin < c.size() && c[memory_begin].working_set_bytes < memory_level_factor * llc)
        ++memory_begin;
    return {{0, cached_end}, {memory_begin, c.size()}};
}

// Every level the curve's points fall in, fastest first (transition points count for no level).
std::vector<std::string> covered_levels(const MemoryRoofFacts& f) {
    std::vector<std::string> levels;
    const std::uint64_t llc = last_cache_bytes(f.caches);
    for (const auto& p : f.curve) {
        std::string level;
        if (f.caches.empty())
            level = unknown_cache_level;
        else if (p.working_set_bytes > llc && p.working_set_bytes < memory_level_factor * llc)
            continue;
        else
            level = level_of(f.caches, p.working_set_bytes);
        if (std::find(levels.begin(), levels.end(), level) == levels.end()) levels.push_back(level);
    }
    return levels;
}

// A measured plateau as a placed roof, named after its measurement.
PlacedRoof level_roof(const MemoryRoof& r) {
    return {r.level, r.gb_per_s, fmt::format("kernel.roof.bandwidth{{level={}}}", r.level),
            r.level == memory_level ? RoofBasis::memory : RoofBasis::level};
}

// A hand-edited report may hold anything: a count must be a non-negative integer, a rate a
// finite non-negative number (JSON has no NaN, but a writer may put null in its place).
template <typename T>
T number_at(const json& j, const char* key) {
    const json& v = j.at(key);
    if constexpr (std::is_floating_point_v<T>) {
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < 0) throw std::invalid_argument(key);
    } else {
        if (!v.is_number_unsigned()) throw std::invalid_argument(key);
    }
    return v.get<T>();
}

const json& array_at(const json& j, const char* key) {
    const json& v = j.at(key);
    if (!v.is_array()) throw std::invalid_argument(key);
    return v;
}

}  // namespace

std::vector<MemoryRoof> detect_plateaus(const std::vector<BandwidthPoint>& curve,
                                        const std::vector<CacheCapacity>& caches, double tolerance,
                                        std::size_t min_points) {
    std::vector<BandwidthPoint> c = curve;
    std::stable_sort(c.begin(), c.end(),
                     [](const auto& a, const auto& b) { return a.working_set_bytes < b.working_set_bytes; });
    std::vector<Run> runs;
    for (const Run& zone : zones_of(c, caches))
        segment(c, zone.first, zone.last, tolerance, min_points, runs);

    std::vector<MemoryRoof> roofs;
    for (const Run& run : runs) {
        MemoryRoof roof =
            roof_of(c, run, plateau_name(caches, c[run.first].working_set_bytes, c[run.last - 1].working_set_bytes));
        auto same = std::find_if(roofs.begin(), roofs.end(), [&](const auto& r) { return r.level == roof.level; });
        if (same == roofs.end())
            roofs.push_back(std::move(roof));
        else if (roof.gb_per_s > same->gb_per_s)
            *same = std::move(roof);
    }
    return roofs;
}

std::string missing_roofs_note(const MemoryRoofFacts& facts) {
    std::vector<std::string> missing;
    for (const auto& level : covered_levels(facts))
        if (std::none_of(facts.roofs.begin(), facts.roofs.end(), [&](const auto& r) { return r.level == level; }))
            missing.push_back(level);
    if (missing.empty()) return {};
    std::string list;
    for (const auto& m : missing)
        list += (list.empty() ? "" : ", ") + m;
    return fmt::format(
        "no clear plateau for {}: the bandwidth kept changing across those working sets (or they had too few "
        "points), so their work is drawn against the nearest faster level's roof, where there is one",
        list);
}

std::uint64_t last_cache_bytes(const std::vector<CacheCapacity>& caches) {
    std::uint64_t llc = 0;
    for (const auto& c : caches)
        llc = std::max(llc, c.bytes);
    return llc;
}

std::uint64_t memory_level_items(std::uint64_t last_cache_bytes, std::uint64_t bytes_per_item, std::uint64_t step) {
    if (!last_cache_bytes || !bytes_per_item || !step) return 0;
    const std::uint64_t items = (memory_level_factor * last_cache_bytes + bytes_per_item - 1) / bytes_per_item;
    return (items + step - 1) / step * step;
}

std::vector<CacheCapacity> device_cache_capacities(const TopologyFacts& topology, unsigned compute_units) {
    std::map<unsigned, std::uint64_t> by_level;
    for (const auto& c : topology.caches) {
        if (c.type != "data" && c.type != "unified") continue;
        if (c.level == 0 || c.size_bytes == 0 || c.count == 0) continue;
        std::uint64_t spanned = c.count;
        if (topology.pus > 0 && compute_units > 0) {
            // ceil(count * units / pus): two cores of a machine with one shared L3 still span that L3.
            const std::uint64_t share =
                (std::uint64_t{c.count} * compute_units + topology.pus - 1) / std::uint64_t{topology.pus};
            spanned = std::clamp<std::uint64_t>(share, 1, c.count);
        }
        by_level[c.level] += c.size_bytes * spanned;
    }
    std::vector<CacheCapacity> out;
    for (const auto& [level, bytes] : by_level)
        out.push_back({fmt::format("L{}", level), bytes});
    return out;
}

std::string level_of(const std::vector<CacheCapacity>& caches, std::uint64_t working_set_bytes) {
    if (caches.empty()) return memory_level;
    const CacheCapacity* smallest = nullptr;
    for (const auto& c : caches)
        if (c.bytes >= working_set_bytes && (!smallest || c.bytes < smallest->bytes)) smallest = &c;
    return smallest ? smallest->level : memory_level;
}

std::optional<double> sweep_at(const std::vector<BandwidthPoint>& curve, std::uint64_t working_set_bytes) {
    const BandwidthPoint* below = nullptr;
    const BandwidthPoint* above = nullptr;
    for (const auto& p : curve) {
        if (!(p.gb_per_s > 0)) continue;
        if (p.working_set_bytes <= working_set_bytes && (!below || p.working_set_bytes > below->working_set_bytes))
            below = &p;
        if (p.working_set_bytes >= working_set_bytes && (!above || p.working_set_bytes < above->working_set_bytes))
            above = &p;
    }
    if (!below || !above) return std::nullopt;
    if (below->working_set_bytes == above->working_set_bytes) return below->gb_per_s;
    // Linear in the logarithm of the working set: the sweep doubles its size point by point.
    const double t =
        std::log(static_cast<double>(working_set_bytes) / static_cast<double>(below->working_set_bytes)) /
        std::log(static_cast<double>(above->working_set_bytes) / static_cast<double>(below->working_set_bytes));
    return below->gb_per_s + t * (above->gb_per_s - below->gb_per_s);
}

namespace {

// A working set beyond the last cache: its data lives in memory, partly cached up to four times
// the last cache's capacity. It is held against what the sweep measured at its size, never
// against a cache roof it does not fit in.
std::optional<PlacedRoof> memory_roof_for(const MemoryRoofFacts& facts, std::uint64_t working_set_bytes,
                                          std::optional<double> memory_roof) {
    const std::uint64_t llc = last_cache_bytes(facts.caches);
    if (working_set_bytes < memory_level_factor * llc)
        if (const auto rate = sweep_at(facts.curve, working_set_bytes))
            return PlacedRoof{memory_level, *rate,
                              fmt::format("kernel.memory_levels.bandwidth at {} (the sweep interpolated at this "
                                          "working set, between the last cache ({}) and memory)",
                                          format_bytes(working_set_bytes), format_bytes(llc)),
                              RoofBasis::sweep};
    if (memory_roof) return PlacedRoof{memory_level, *memory_roof, "kernel.peak.bandwidth", RoofBasis::memory};
    for (const auto& r : facts.roofs)
        if (r.level == memory_level) return level_roof(r);
    // No memory roof: the sweep at this size, or its largest point beyond the last cache.
    if (const auto rate = sweep_at(facts.curve, working_set_bytes))
        return PlacedRoof{memory_level, *rate,
                          fmt::format("kernel.memory_levels.bandwidth at {} (the sweep interpolated at this working "
                                      "set)",
                                      format_bytes(working_set_bytes)),
                          RoofBasis::sweep};
    const BandwidthPoint* largest = nullptr;
    for (const auto& p : facts.curve)
        if (p.working_set_bytes > llc && p.gb_per_s > 0 &&
            (!largest || p.working_set_bytes > largest->working_set_bytes))
            largest = &p;
    if (largest)
        return PlacedRoof{memory_level, largest->gb_per_s,
                          fmt::format("kernel.memory_levels.bandwidth at {} (the sweep's largest working set)",
                                      format_bytes(largest->working_set_bytes)),
                          RoofBasis::sweep};
    return std::nullopt;
}

}  // namespace

std::optional<PlacedRoof> roof_for(const MemoryRoofFacts& facts, std::uint64_t working_set_bytes,
                                   std::optional<double> memory_roof) {
    const std::string level = level_of(facts.caches, working_set_bytes);
    if (level == memory_level && !facts.caches.empty()) return memory_roof_for(facts, working_set_bytes, memory_roof);
    if (level == memory_level && memory_roof)
        return PlacedRoof{level, *memory_roof, "kernel.peak.bandwidth", RoofBasis::memory};
    for (const auto& r : facts.roofs)
        if (r.level == level) return level_roof(r);
    // The nearest faster level that has a roof: a faster cache bounds a slower one's traffic too.
    const MemoryRoof* nearest = nullptr;
    for (const auto& r : facts.roofs)
        if (level_rank(r.level) < level_rank(level) && (!nearest || level_rank(r.level) > level_rank(nearest->level)))
            nearest = &r;
    if (nearest) return level_roof(*nearest);
    return std::nullopt;
}

json to_json(const MemoryRoofFacts& f) {
    json caches = json::array();
    for (const auto& c : f.caches)
        caches.push_back({{"level", c.level}, {"bytes", c.bytes}});
    json curve = json::array();
    for (const auto& p : f.curve)
        curve.push_back({{"working_set_bytes", p.working_set_bytes}, {"gb_per_s", p.gb_per_s}, {"cv", p.cv}});
    json roofs = json::array();
    for (const auto& r : f.roofs)
        roofs.push_back({{"level", r.level},
                         {"first_bytes", r.first_bytes},
                         {"last_bytes", r.last_bytes},
                         {"gb_per_s", r.gb_per_s},
                         {"points", r.points}});
    return {{"caches", caches}, {"curve", curve}, {"roofs", roofs}, {"note", f.note}};
}

std::optional<MemoryRoofFacts> memory_roof_facts_from_json(const json& j) {
    if (!j.is_object()) return std::nullopt;
    try {
        MemoryRoofFacts f;
        for (const auto& c : array_at(j, "caches"))
            f.caches.push_back({c.at("level").get<std::string>(), number_at<std::uint64_t>(c, "bytes")});
        for (const auto& p : array_at(j, "curve"))
            f.curve.push_back({number_at<std::uint64_t>(p, "working_set_bytes"), number_at<double>(p, "gb_per_s"),
                               number_at<double>(p, "cv")});
        for (const auto& r : array_at(j, "roofs"))
            f.roofs.push_back({r.at("level").get<std::string>(), number_at<std::uint64_t>(r, "first_bytes"),
                               number_at<std::uint64_t>(r, "last_bytes"), number_at<double>(r, "gb_per_s"),
                               number_at<std::size_t>(r, "points")});
        f.note = j.value("note", std::string());
        return f;
    } catch (const json::exception&) {
        return std::nullopt;
    } catch (const std::invalid_argument&) {
        return std::nullopt;
    }
}

std::optional<MemoryRoofFacts> memory_roof_facts_of(const std::vector<ProbeResult>& results) {
    for (const auto& r : results) {
        if (r.id != memory_levels_probe_id || r.status != ProbeStatus::ok) continue;
        const auto it = r.attributes.find("facts");
        if (it == r.attributes.end()) return std::nullopt;
        return memory_roof_facts_from_json(*it);
    }
    return std::nullopt;
}

std::optional<PlacedRoof> BandwidthRoofs::for_working_set(std::uint64_t working_set_bytes) const {
    if (levels)
        if (auto placed = roof_for(*levels, working_set_bytes, memory_gb_per_s)) return placed;
    if (memory_gb_per_s) return PlacedRoof{memory_level, *memory_gb_per_s, "kernel.peak.bandwidth", RoofBasis::memory};
    return std::nullopt;
}

BandwidthRoofs bandwidth_roofs_of(const std::vector<ProbeResult>& results, RoofSample sample) {
    BandwidthRoofs roofs;
    roofs.levels = memory_roof_facts_of(results);
    for (const auto& r : results) {
        if (r.status != ProbeStatus::ok) continue;
        if (const auto* m = find_measurement(r, "kernel.peak.bandwidth"); m && m->summary.median > 0) {
            roofs.memory_gb_per_s =
                sample == RoofSample::fastest ? std::max(m->summary.max, m->summary.median) : m->summary.median;
            break;
        }
    }
    return roofs;
}

}  // namespace clprobe

#pragma once
// The counts one simulated kernel launch produced (the Oclgrind plugin's result file, read back by
// clprobe): what the sampled work-groups did, and the estimate for the whole launch. Header-only
// and free of clprobe's other libraries, since the plugin links nothing of clprobe.
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace clprobe::work {

// Oclgrind's address spaces, in its numbering (private 0, global 1, constant 2, local 3).
enum class Space : int { priv = 0, global = 1, constant = 2, local = 3, count = 4 };
enum class Direction : int { load = 0, store = 1 };

inline constexpr const char* space_names[] = {"private", "global", "constant", "local"};
inline constexpr const char* precision_names[] = {"fp16", "fp32", "fp64"};

struct Tally {
    double flops[3] = {};        // by precision: half, single, double
    double special[3] = {};      // transcendental and square-root builtins, by precision
    double int_ops = 0;          // integer ALU operations of every width
    double int64_ops = 0;        // of which on 64-bit (or wider) integers
    double address_ops = 0;      // integer operations that only address memory or control loops (not in int_ops)
    double bytes[4][2] = {};     // [space][load, store]
    double accesses[4][2] = {};  // loads and stores issued (a vector load is one)
    double atomics = 0, barriers = 0, instructions = 0;

    void add(const Tally& o, double weight) {
        for (int p = 0; p < 3; ++p) {
            flops[p] += weight * o.flops[p];
            special[p] += weight * o.special[p];
        }
        int_ops += weight * o.int_ops;
        int64_ops += weight * o.int64_ops;
        address_ops += weight * o.address_ops;
        for (int s = 0; s < 4; ++s)
            for (int d = 0; d < 2; ++d) {
                bytes[s][d] += weight * o.bytes[s][d];
                accesses[s][d] += weight * o.accesses[s][d];
            }
        atomics += weight * o.atomics;
        barriers += weight * o.barriers;
        instructions += weight * o.instructions;
    }
    void scale(double f) {
        Tally copy = *this;
        *this = Tally{};
        add(copy, f);
    }
};

struct WorkRun {
    std::string kernel;
    std::uint64_t groups_total = 0, groups_counted = 0, groups_covered = 0;
    std::uint64_t work_items_total = 0, work_items_counted = 0;
    bool exact = false;            // every work-group simulated
    bool cut_by_budget = false;    // the budget ended the simulation before the last group
    double seconds = 0;            // simulation time
    double footprint_sampled = 0;  // bytes of the distinct 64-byte lines of global memory the simulated groups touched
    Tally estimate;                // the whole launch (exact, or extrapolated from the sample)
    Tally sampled;                 // the simulated groups alone
    std::vector<double> group_instructions;  // per simulated group (the result file keeps a summary)
};

inline nlohmann::json tally_to_json(const Tally& t) {
    nlohmann::json j;
    for (int p = 0; p < 3; ++p) {
        j["flops"][precision_names[p]] = t.flops[p];
        j["special"][precision_names[p]] = t.special[p];
    }
    j["int_ops"] = t.int_ops;
    j["int64_ops"] = t.int64_ops;
    j["address_ops"] = t.address_ops;
    for (int s = 0; s < 4; ++s) {
        j["bytes"][space_names[s]] = {{"load", t.bytes[s][0]}, {"store", t.bytes[s][1]}};
        j["accesses"][space_names[s]] = {{"load", t.accesses[s][0]}, {"store", t.accesses[s][1]}};
    }
    j["atomics"] = t.atomics;
    j["barriers"] = t.barriers;
    j["instructions"] = t.instructions;
    return j;
}

inline Tally tally_from_json(const nlohmann::json& j) {
    Tally t;
    for (int p = 0; p < 3; ++p) {
        t.flops[p] = j.at("flops").at(precision_names[p]).get<double>();
        t.special[p] = j.at("special").at(precision_names[p]).get<double>();
    }
    t.int_ops = j.at("int_ops").get<double>();
    t.int64_ops = j.at("int64_ops").get<double>();
    t.address_ops = j.at("address_ops").get<double>();
    for (int s = 0; s < 4; ++s) {
        t.bytes[s][0] = j.at("bytes").at(space_names[s]).at("load").get<double>();
        t.bytes[s][1] = j.at("bytes").at(space_names[s]).at("store").get<double>();
        t.accesses[s][0] = j.at("accesses").at(space_names[s]).at("load").get<double>();
        t.accesses[s][1] = j.at("accesses").at(space_names[s]).at("store").get<double>();
    }
    t.atomics = j.at("atomics").get<double>();
    t.barriers = j.at("barriers").get<double>();
    t.instructions = j.at("instructions").get<double>();
    return t;
}

// Instructions per simulated group: how alike the groups were (a sample of unlike groups makes a
// less certain estimate).
struct GroupSpread {
    double min = 0, max = 0, mean = 0, cv = 0;
};

inline GroupSpread group_spread(const std::vector<double>& v) {
    GroupSpread s;
    if (v.empty()) return s;
    s.min = *std::min_element(v.begin(), v.end());
    s.max = *std::max_element(v.begin(), v.end());
    double sum = 0, sq = 0;
    for (double x : v)
        sum += x;
    s.mean = sum / static_cast<double>(v.size());
    for (double x : v)
        sq += (x - s.mean) * (x - s.mean);
    s.cv = s.mean > 0 && v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) / s.mean : 0;
    return s;
}

inline nlohmann::json work_run_to_json(const WorkRun& r) {
    const GroupSpread s = group_spread(r.group_instructions);
    return {{"kernel", r.kernel},
            {"groups_total", r.groups_total},
            {"groups_counted", r.groups_counted},
            {"groups_covered", r.groups_covered},
            {"work_items_total", r.work_items_total},
            {"work_items_counted", r.work_items_counted},
            {"exact", r.exact},
            {"cut_by_budget", r.cut_by_budget},
            {"seconds", r.seconds},
            {"footprint_sampled", r.footprint_sampled},
            {"group_instructions", {{"min", s.min}, {"max", s.max}, {"mean", s.mean}, {"cv", s.cv}}},
            {"estimate", tally_to_json(r.estimate)},
            {"sampled", tally_to_json(r.sampled)}};
}

// Written whole to PATH.tmp, then renamed: a reader never sees half a result.
inline bool write_work_run(const WorkRun& r, const std::string& path) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp, std::ios::trunc);
        if (!out) return false;
        out << work_run_to_json(r).dump() << '\n';
        if (!out.flush()) return false;
    }
    return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace clprobe::work

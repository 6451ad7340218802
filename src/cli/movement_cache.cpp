#include "cli/movement_cache.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "cl/kernel_library.hpp"
#include "core/atomic_file.hpp"
#include "core/fnv_hash.hpp"
#include "json/report_json.hpp"

namespace clprobe {

namespace {

namespace fs = std::filesystem;

// The kept runs' entries are whole reports of one pass each: a few hundred kB apiece.
constexpr std::size_t max_file_bytes = 64u << 20;
// compare's default threshold: it marks what a pair of runs would call, the ratios pool regardless.
constexpr double movement_threshold = 0.05;

fs::path movement_cache_path(const std::string& key) {
    return default_cache_dir() / "movement" / fmt::format("{:016x}.json", fnv1a64(key));
}

struct KeptRuns {
    std::string key;
    std::vector<RunReport> runs;  // oldest first
};

// The kept runs of `key`; none when there is no file yet (`why` empty) or it cannot be used.
KeptRuns read_kept(const std::string& key, std::string& why) {
    KeptRuns out{key, {}};
    const fs::path path = movement_cache_path(key);
    std::error_code ec;
    if (!fs::exists(path, ec)) return out;
    try {
        const nlohmann::json doc = nlohmann::json::parse(read_file(path, max_file_bytes));
        if (doc.at("key").get<std::string>() != key) {
            why = fmt::format("{} is of another host, device, driver or set of options", path.string());
            return out;
        }
        for (const auto& run : doc.at("runs"))
            out.runs.push_back(report_from_json(run));
    } catch (const std::exception& e) {
        why = fmt::format("{} is unreadable ({})", path.string(), e.what());
        out.runs.clear();
    }
    return out;
}

}  // namespace

std::string movement_cache_key(const RunReport& r) {
    const DeviceInfo none;
    const DeviceInfo& d = r.device ? *r.device : none;
    nlohmann::json options = r.options;
    for (const char* volatile_key : {"passes", "price_per_hour", "energy_price_per_kwh", "device"})
        options.erase(volatile_key);
    // The compute units too: a run with fewer (POCL_MAX_PTHREAD_COUNT, a cgroup) is another device's,
    // and would read as 2x movement.
    return fmt::format("host={}\nplatform={}\ndevice={}\ndriver={}\ncompute_units={}\noptions={}\n", r.host.hostname,
                       d.platform_name, d.name, d.driver_version, d.compute_units, options.dump());
}

std::optional<BetweenRunNoise> load_known_movement(const RunReport& report, std::string& why) {
    why.clear();
    KeptRuns kept = read_kept(movement_cache_key(report), why);
    // The report itself, when it was kept, is no earlier run.
    std::erase_if(kept.runs, [&](const RunReport& r) { return r.created_at == report.created_at; });
    if (kept.runs.size() < movement_runs_needed) return std::nullopt;
    std::vector<const RunReport*> runs;
    for (const auto& r : kept.runs)
        runs.push_back(&r);
    BetweenRunNoise noise = measure_between_runs(runs, movement_threshold);
    noise.known_from = fmt::format("{} earlier runs of this device and options ({} to {})", kept.runs.size(),
                                   kept.runs.front().created_at, kept.runs.back().created_at);
    return noise;
}

// A run beside other work is kept as any other: the movement leaves out, pair by pair, each figure
// whose probe ran beside other work in either run (measure_between_runs), as compare does.
std::string remember_run(const RunReport& report) {
    std::string why;
    KeptRuns kept = read_kept(movement_cache_key(report), why);  // an unusable file is replaced
    RunReport entry;
    entry.tool_version = report.tool_version;
    entry.created_at = report.created_at;
    entry.options = report.options;
    entry.host = report.host;
    entry.device = report.device;
    entry.results = report.results;
    entry.drift = report.drift;
    entry.trust_notes = report.trust_notes;
    std::erase_if(kept.runs, [&](const RunReport& r) { return r.created_at == report.created_at; });
    kept.runs.push_back(std::move(entry));
    if (kept.runs.size() > movement_runs_kept)
        kept.runs.erase(kept.runs.begin(), kept.runs.end() - static_cast<std::ptrdiff_t>(movement_runs_kept));
    nlohmann::json doc = {{"key", kept.key}, {"runs", nlohmann::json::array()}};
    for (const auto& r : kept.runs)
        doc["runs"].push_back(report_to_json(r));
    const fs::path path = movement_cache_path(kept.key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    try {
        write_file_atomically(path, doc.dump() + "\n");
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

}  // namespace clprobe

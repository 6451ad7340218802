#include "cli/ceilings_cache.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <system_error>

#include "cl/kernel_library.hpp"
#include "cli/cli_common.hpp"
#include "core/atomic_file.hpp"
#include "core/fnv_hash.hpp"
#include "core/provenance.hpp"
#include "json/report_json.hpp"

extern char** environ;

namespace clprobe {

namespace {

namespace fs = std::filesystem;

bool driver_variable(std::string_view name) {
    for (std::string_view prefix : {"OPENCL_LAYERS", "OCL_ICD_", "POCL_", "CL_CONFIG_", "CLPROBE_"})
        if (name.substr(0, prefix.size()) == prefix) return true;
    return false;
}

// The variables the driver stack reads, sorted: a layer, another ICD or a driver setting makes
// other ceilings.
std::string driver_environment() {
    std::vector<std::string> vars;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        if (driver_variable(entry.substr(0, entry.find('=')))) vars.emplace_back(entry);
    }
    std::sort(vars.begin(), vars.end());
    std::string out;
    for (const auto& v : vars)
        out += v + "\n";
    return out;
}

// This binary, down to its build: a rebuilt clprobe of the same commit (a work tree with changes)
// has another modification time.
std::string this_build() {
    const Provenance p = build_provenance();
    std::error_code ec;
    const auto when = fs::last_write_time("/proc/self/exe", ec);
    return fmt::format("{} {} {} {}", p.clprobe_version, p.git_commit, p.build_type,
                       ec ? 0 : when.time_since_epoch().count());
}

constexpr const char* key_option = "ceilings_cache_key";

}  // namespace

std::string ceilings_cache_key(const DeviceInfo& device) {
    return fmt::format("platform={}\ndevice={}\ndriver={}\nbuild={}\n{}", device.platform_name, device.name,
                       device.driver_version, this_build(), driver_environment());
}

fs::path ceilings_cache_path(const std::string& key) {
    return default_cache_dir() / "ceilings" / fmt::format("{:016x}.json", fnv1a64(key));
}

std::optional<CachedCeilings> load_cached_ceilings(const std::string& key, std::string& why) {
    why.clear();
    const fs::path path = ceilings_cache_path(key);
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    CachedCeilings out;
    out.path = path;
    try {
        out.report = load_report(path.string());
    } catch (const std::exception& e) {
        why = fmt::format("{} is unreadable ({})", path.string(), e.what());
        return std::nullopt;
    }
    const auto stored = out.report.options.find(key_option);
    if (stored == out.report.options.end() || !stored->is_string() || stored->get<std::string>() != key) {
        why = fmt::format("{} is of another device, driver, build or driver environment", path.string());
        return std::nullopt;
    }
    const bool has_ceilings = std::any_of(out.report.results.begin(), out.report.results.end(), [](const auto& r) {
        return (r.layer == "kernel" || r.layer == "transfer") && r.status == ProbeStatus::ok;
    });
    if (!has_ceilings || !out.report.device) {
        why = fmt::format("{} holds no ceilings", path.string());
        return std::nullopt;
    }
    return out;
}

const std::set<std::string>& ceiling_probe_ids() {
    static const std::set<std::string> ids = {"kernel.build",        "kernel.launch",        "kernel.bandwidth",
                                              "kernel.compute.fp32", "kernel.compute.int32", "transfer.bandwidth",
                                              "transfer.latency",    "transfer.overlap"};
    return ids;
}

bool has_all_ceilings(const std::vector<ProbeResult>& results) {
    return std::all_of(ceiling_probe_ids().begin(), ceiling_probe_ids().end(), [&](const std::string& id) {
        return std::any_of(results.begin(), results.end(),
                           [&](const ProbeResult& r) { return r.id == id && r.status == ProbeStatus::ok; });
    });
}

std::string save_ceilings(const std::string& key, const RunReport& measured, const std::string& measured_by) {
    RunReport entry;
    entry.tool_version = measured.tool_version;
    entry.provenance = measured.provenance;
    entry.created_at = measured.created_at;
    entry.host = measured.host;
    entry.device = measured.device;
    entry.options = {{"command", measured_by + " (ceilings cache)"}, {key_option, key}};
    for (const auto& r : measured.results)
        if (ceiling_probe_ids().count(r.id)) entry.results.push_back(r);
    const fs::path path = ceilings_cache_path(key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    try {
        write_file_atomically(path, report_to_json_text(entry));
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

}  // namespace clprobe

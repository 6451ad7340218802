#pragma once
// The ceilings `clprobe trace` measures before a program (docs/trace.md, "Ceilings, measured once"):
// kept in the user's cache folder and reused by the next trace of the same device, driver, clprobe
// build and driver environment, so a trace costs the program's time, not a re-measured device.
// A cache entry that does not match, or cannot be read whole, is never used: the ceilings are
// measured again and one line says why.
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/device_info.hpp"
#include "core/report.hpp"

namespace clprobe {

// The probes whose results are the ceilings a trace judges a program against: what a trace
// measures, what an entry keeps, and what a `diagnose` must have measured, each ok, to leave one.
const std::set<std::string>& ceiling_probe_ids();
bool has_all_ceilings(const std::vector<ProbeResult>& results);

// What makes two sets of ceilings the same: the device (platform, name, driver), clprobe's build
// (version, commit, the binary itself) and the environment the driver reads (OPENCL_LAYERS, the
// ICD loader's variables, POCL_*, CL_CONFIG_*, CLPROBE_*). Stored in the entry and compared whole.
std::string ceilings_cache_key(const DeviceInfo& device);

// $XDG_CACHE_HOME/clprobe/ceilings/<hash of the key>.json (kernel_library's default_cache_dir).
std::filesystem::path ceilings_cache_path(const std::string& key);

struct CachedCeilings {
    RunReport report;  // device, provenance, created_at and the kernel and transfer results
    std::filesystem::path path;
};

// The entry for `key`, or nullopt: none yet (`why` empty), or one that cannot be used (`why` says
// what: another key, unreadable, truncated, no ceilings).
std::optional<CachedCeilings> load_cached_ceilings(const std::string& key, std::string& why);

// Keeps the ceiling probes' results of `measured` for `key` (written whole or not at all), from a
// trace or a `diagnose` of the device (`measured_by` names which); returns "" or why it could not (neither fails for
// its cache).
std::string save_ceilings(const std::string& key, const RunReport& measured, const std::string& measured_by);

}  // namespace clprobe

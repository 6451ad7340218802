#include "runtime/warm_up_stamp.hpp"

#include <fmt/core.h>

#include <cstdlib>

#include "core/atomic_file.hpp"
#include "core/fnv_hash.hpp"
#include "core/version.hpp"

namespace clprobe {

namespace {

std::filesystem::path stamp_path(const std::filesystem::path& dir, const std::string& key) {
    return dir / fmt::format("warmed-up-{:016x}.txt", fnv1a64(key));
}

}  // namespace

std::string warm_up_key(const DeviceInfo& device, const RunOptions& options, const std::string& probe_id,
                        const std::vector<std::string>& sources) {
    std::string programs;
    for (const auto& s : sources)
        programs += fmt::format(" {:016x}:{}", fnv1a64(s), s.size());
    const char* driver_cache = std::getenv("POCL_CACHE_DIR");
    const auto& g = options.glm;
    const auto& a = options.attention;
    return fmt::format(
        "clprobe-warm-up-1\nclprobe={}\nplatform={} {}\ndevice={}\ndevice_version={}\ndriver={}\n"
        "driver_cache={}\nprobe={}\nmode={}\nglm={} {} {} {}\nattention={} {} {} {} {} {}\nprograms={}\n",
        tool_version, device.platform_name, device.platform_version, device.name, device.device_version,
        device.driver_version, driver_cache ? driver_cache : "", probe_id, to_string(options.mode), g.rows, g.cols,
        g.density, g.batch, a.batch, a.heads, a.seq, a.head_dim, a.kv_len, a.causal, programs);
}

bool warmed_up(const std::filesystem::path& dir, const std::string& key) {
    try {
        return !dir.empty() && read_file(stamp_path(dir, key), key.size() + 1) == key;
    } catch (const std::exception&) {
        return false;
    }
}

bool mark_warmed_up(const std::filesystem::path& dir, const std::string& key) {
    try {
        if (dir.empty()) return false;
        std::filesystem::create_directories(dir);
        write_file_atomically(stamp_path(dir, key), key);
        return true;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace clprobe

#include "cli/movement_cache.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "cl/kernel_library.hpp"
#include "compare/run_passes.hpp"
#include "core/atomic_file.hpp"
#include "core/fnv_hash.hpp"

namespace clprobe {

namespace {

namespace fs = std::filesystem;

fs::path movement_cache_path(const std::string& key) {
    return default_cache_dir() / "movement" / fmt::format("{:016x}.json", fnv1a64(key));
}

std::string option_text(const RunReport& r, const char* name) {
    const auto it = r.options.find(name);
    return it != r.options.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

// Not the build or the driver environment (unlike the ceilings' key): the movement is the
// machine's, and a CI clone builds a new binary each time. The mode is in it: a quick run takes
// fewer samples and its figures move further.
std::string movement_cache_key(const RunReport& r) {
    const DeviceInfo none;
    const DeviceInfo& d = r.device ? *r.device : none;
    return fmt::format("host={}\nplatform={}\ndevice={}\ndriver={}\nmode={}\n", r.host.hostname, d.platform_name,
                       d.name, d.driver_version, option_text(r, "mode"));
}

std::optional<KnownMovement> load_known_movement(const RunReport& report, std::string& why) {
    why.clear();
    const std::string key = movement_cache_key(report);
    const fs::path path = movement_cache_path(key);
    std::error_code ec;
    if (!fs::exists(path, ec)) return std::nullopt;
    try {
        std::ifstream in(path);
        std::stringstream text;
        text << in.rdbuf();
        const nlohmann::json doc = nlohmann::json::parse(text.str());
        if (doc.at("key").get<std::string>() != key) {
            why = fmt::format("{} is of another host, device, driver or mode", path.string());
            return std::nullopt;
        }
        KnownMovement out;
        out.noise = movement_from_json(doc.at("movement"));
        out.noise.known_from = fmt::format("a {}-pass diagnose of this device on {}{}", out.noise.runs,
                                           doc.at("measured_at").get<std::string>(),
                                           doc.value("busy", false) ? " beside other processes' work" : "");
        out.path = path.string();
        return out;
    } catch (const std::exception& e) {
        why = fmt::format("{} is unreadable ({})", path.string(), e.what());
        return std::nullopt;
    }
}

std::string save_known_movement(const RunReport& report) {
    const auto movement = movement_between_passes(report);
    if (!movement) return {};
    const std::string key = movement_cache_key(report);
    const bool busy = std::any_of(report.trust_notes.begin(), report.trust_notes.end(),
                                  [](const TrustNote& t) { return t.id == "trust.machine_busy"; });
    const nlohmann::json doc = {{"key", key},
                                {"measured_at", report.created_at},
                                {"busy", busy},
                                {"passes", 1 + report.passes.size()},
                                {"movement", movement_to_json(*movement)}};
    const fs::path path = movement_cache_path(key);
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    try {
        write_file_atomically(path, doc.dump(1) + "\n");
    } catch (const std::exception& e) {
        return e.what();
    }
    return {};
}

}  // namespace clprobe

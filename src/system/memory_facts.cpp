#include "system/memory_facts.hpp"

#include <algorithm>

#include "system/proc_parse.hpp"
#include "system/sysfs_parse.hpp"

namespace clprobe {

namespace {
std::optional<std::uint64_t> value(const std::map<std::string, std::uint64_t>& m, const char* key) {
    const auto it = m.find(key);
    return it == m.end() ? std::nullopt : std::optional<std::uint64_t>(it->second);
}
}  // namespace

MemoryFacts read_memory_facts(const SystemFiles& files) {
    MemoryFacts f;
    if (const auto text = files.read("/proc/meminfo")) {
        const auto m = parse_meminfo(*text);
        f.total_bytes = value(m, "MemTotal");
        f.available_bytes = value(m, "MemAvailable");
        f.swap_total_bytes = value(m, "SwapTotal");
        const auto swap_free = value(m, "SwapFree");
        if (f.swap_total_bytes && swap_free)
            f.swap_used_bytes = *f.swap_total_bytes > *swap_free ? *f.swap_total_bytes - *swap_free : 0;
    }
    const std::string thp = "/sys/kernel/mm/transparent_hugepage/";
    if (const auto t = files.read(thp + "enabled"))
        if (const auto c = bracketed_choice(*t)) f.thp_enabled = *c;
    if (const auto t = files.read(thp + "defrag"))
        if (const auto c = bracketed_choice(*t)) f.thp_defrag = *c;
    return f;
}

std::optional<std::uint64_t> memory_headroom_bytes(std::optional<std::uint64_t> available,
                                                   std::optional<std::uint64_t> limit,
                                                   std::optional<std::uint64_t> working_set) {
    std::optional<std::uint64_t> in_limit;
    if (limit) in_limit = working_set ? (*limit > *working_set ? *limit - *working_set : 0) : *limit;
    if (available && in_limit) return std::min(*available, *in_limit);
    return available ? available : in_limit;
}

}  // namespace clprobe

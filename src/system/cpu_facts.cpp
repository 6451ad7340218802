#include "system/cpu_facts.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "core/text.hpp"
#include "system/cpu_list.hpp"
#include "system/sysfs_parse.hpp"

namespace clprobe {

namespace {

std::string cpu_dir(int cpu) {
    return "/sys/devices/system/cpu/cpu" + std::to_string(cpu);
}

std::optional<std::uint64_t> read_u64(const SystemFiles& files, const std::string& path) {
    const auto t = files.read(path);
    return t ? text::to_u64(*t) : std::nullopt;
}

std::optional<double> read_mhz(const SystemFiles& files, const std::string& path) {
    const auto t = files.read(path);
    return t ? khz_text_to_mhz(*t) : std::nullopt;
}

void keep_min(std::optional<double>& into, std::optional<double> v) {
    if (v && (!into || *v < *into)) into = v;
}
void keep_max(std::optional<double>& into, std::optional<double> v) {
    if (v && (!into || *v > *into)) into = v;
}

}  // namespace

CpuTopology read_cpu_topology(const SystemFiles& files, const CpuInfo& cpuinfo) {
    CpuTopology t;
    if (const auto text = files.read("/sys/devices/system/cpu/online"))
        if (const auto list = parse_cpu_list(*text)) t.online = *list;
    std::set<std::uint64_t> packages;
    std::set<std::pair<std::uint64_t, std::uint64_t>> cores;
    bool complete = !t.online.empty();
    for (int cpu : t.online) {
        const auto package = read_u64(files, cpu_dir(cpu) + "/topology/physical_package_id");
        const auto core = read_u64(files, cpu_dir(cpu) + "/topology/core_id");
        if (!package || !core) {
            complete = false;
            break;
        }
        packages.insert(*package);
        cores.insert({*package, *core});
    }
    if (complete) {
        t.sockets = static_cast<int>(packages.size());
        t.cores = static_cast<int>(cores.size());
    } else {
        t.sockets = cpuinfo.sockets;
        t.cores = cpuinfo.cores;
    }
    if (const auto c = files.read("/sys/devices/system/cpu/smt/control")) t.smt_control = std::string(text::trim(*c));
    if (const auto a = read_u64(files, "/sys/devices/system/cpu/smt/active")) t.smt_active = *a != 0;
    return t;
}

CpuFrequency read_cpu_frequency(const SystemFiles& files, const std::vector<int>& cpus) {
    CpuFrequency f;
    std::set<std::string> governors;
    double current_sum = 0;
    int current_count = 0;
    for (int cpu : cpus) {
        const std::string dir = cpu_dir(cpu) + "/cpufreq/";
        if (const auto cur = read_mhz(files, dir + "scaling_cur_freq")) {
            keep_min(f.current_min, cur);
            keep_max(f.current_max, cur);
            current_sum += *cur;
            ++current_count;
        }
        keep_min(f.policy_min, read_mhz(files, dir + "scaling_min_freq"));
        keep_max(f.policy_max, read_mhz(files, dir + "scaling_max_freq"));
        keep_min(f.hardware_min, read_mhz(files, dir + "cpuinfo_min_freq"));
        keep_max(f.hardware_max, read_mhz(files, dir + "cpuinfo_max_freq"));
        keep_max(f.base, read_mhz(files, dir + "base_frequency"));
        if (const auto g = files.read(dir + "scaling_governor"); g && !text::trim(*g).empty())
            governors.insert(std::string(text::trim(*g)));
        if (f.driver.empty())
            if (const auto d = files.read(dir + "scaling_driver")) f.driver = std::string(text::trim(*d));
    }
    if (current_count > 0) f.current_mean = current_sum / current_count;
    f.governors.assign(governors.begin(), governors.end());
    return f;
}

std::vector<double> read_current_mhz(const SystemFiles& files, const std::vector<int>& cpus) {
    std::vector<double> out;
    for (int cpu : cpus)
        if (const auto mhz = read_mhz(files, cpu_dir(cpu) + "/cpufreq/scaling_cur_freq")) out.push_back(*mhz);
    return out;
}

std::optional<LastLevelCache> read_last_level_cache(const SystemFiles& files, const std::vector<int>& cpus) {
    // (level, shared_cpu_list) -> size: one entry per cache instance.
    std::map<std::pair<int, std::string>, std::uint64_t> instances;
    for (int cpu : cpus) {
        const std::string base = cpu_dir(cpu) + "/cache/";
        for (const auto& index : files.list(base)) {
            if (!text::starts_with(index, "index")) continue;
            const std::string dir = base + index + "/";
            const auto type = files.read(dir + "type");
            // Instruction caches never hold data arrays.
            if (!type || text::trim(*type) == "Instruction") continue;
            const auto level = read_u64(files, dir + "level");
            const auto size = files.read(dir + "size");
            const auto shared = files.read(dir + "shared_cpu_list");
            const auto bytes = size ? parse_cache_size(*size) : std::nullopt;
            if (!level || !bytes || *level > 8) continue;
            const std::string who = shared ? std::string(text::trim(*shared)) : "cpu" + std::to_string(cpu);
            instances[{static_cast<int>(*level), who}] = *bytes;
        }
    }
    if (instances.empty()) return std::nullopt;
    LastLevelCache llc;
    for (const auto& [key, bytes] : instances)
        llc.level = std::max(llc.level, key.first);
    for (const auto& [key, bytes] : instances) {
        if (key.first != llc.level) continue;
        ++llc.instances;
        llc.total_bytes += bytes;
        llc.bytes_per_instance = std::max(llc.bytes_per_instance, bytes);
    }
    return llc;
}

}  // namespace clprobe

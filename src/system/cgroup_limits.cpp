#include "system/cgroup_limits.hpp"

#include "core/text.hpp"
#include "system/cpu_list.hpp"
#include "system/proc_parse.hpp"

namespace clprobe {

namespace {

void read_cpu_quota(const SystemFiles& files, CgroupLimits& out) {
    for (const auto& dir : cgroup_ancestors(*out.cpu)) {
        std::optional<CpuBandwidth> b;
        std::string file;
        if (out.cpu->version == 2) {
            file = dir + "/cpu.max";
            if (const auto t = files.read(file)) b = parse_cpu_max(*t);
        } else {
            file = dir + "/cpu.cfs_quota_us";
            const auto quota = files.read(file);
            const auto period = files.read(dir + "/cpu.cfs_period_us");
            if (quota && period) b = parse_cfs_quota(*quota, *period);
        }
        if (!b || !b->cpus()) continue;
        if (!out.cpu_quota || *b->cpus() < *out.cpu_quota->cpus()) {
            out.cpu_quota = b;
            out.cpu_quota_file = file;
        }
    }
}

void read_cpuset(const SystemFiles& files, CgroupLimits& out) {
    const bool v2 = out.cpuset->version == 2;
    const auto dirs = cgroup_ancestors(*out.cpuset);
    // The effective set folds in every ancestor; read it where the kernel publishes it.
    for (const auto& dir : dirs) {
        const auto t = files.read(dir + (v2 ? "/cpuset.cpus.effective" : "/cpuset.effective_cpus"));
        if (!t) continue;
        if (const auto cpus = parse_cpu_list(*t); cpus && !cpus->empty()) {
            out.cpuset_cpus = *cpus;
            break;
        }
    }
    if (!out.cpuset_cpus) return;
    // The knob: walking up, the last folder that still configures exactly this set (above it the
    // sets are wider, or empty, which in v2 means "inherit").
    for (const auto& dir : dirs) {
        const auto t = files.read(dir + "/cpuset.cpus");
        if (!t || text::trim(*t).empty()) continue;
        const auto cpus = parse_cpu_list(*t);
        if (!cpus || *cpus != *out.cpuset_cpus) break;
        out.cpuset_file = dir + "/cpuset.cpus";
    }
}

void read_memory_limit(const SystemFiles& files, CgroupLimits& out) {
    const bool v2 = out.memory->version == 2;
    std::string limiting_dir;
    for (const auto& dir : cgroup_ancestors(*out.memory)) {
        const std::string file = dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes");
        const auto t = files.read(file);
        const auto limit = t ? parse_memory_limit(*t) : std::nullopt;
        if (!limit || !limit->bytes) continue;
        if (!out.memory_limit_bytes || *limit->bytes < *out.memory_limit_bytes) {
            out.memory_limit_bytes = limit->bytes;
            out.memory_limit_file = file;
            limiting_dir = dir;
        }
    }
    if (limiting_dir.empty()) return;
    const auto usage_text = files.read(limiting_dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes"));
    const auto usage = usage_text ? text::to_u64(*usage_text) : std::nullopt;
    if (!usage) return;
    std::uint64_t inactive_file = 0;
    if (const auto stat = files.read(limiting_dir + "/memory.stat")) {
        const auto kv = parse_key_values(*stat);
        // v1 reports the hierarchy's total separately; v2's counters are hierarchical already.
        const auto it = kv.find(v2 ? "inactive_file" : "total_inactive_file");
        if (it != kv.end()) inactive_file = it->second;
    }
    out.memory_working_set_bytes = *usage > inactive_file ? *usage - inactive_file : 0;
}

}  // namespace

CgroupLimits read_cgroup_limits(const SystemFiles& files) {
    CgroupLimits out;
    const auto cgroup_text = files.read("/proc/self/cgroup");
    const auto mountinfo_text = files.read("/proc/self/mountinfo");
    if (!cgroup_text || !mountinfo_text) return out;
    const auto groups = parse_proc_cgroup(*cgroup_text);
    const auto mounts = parse_mountinfo(*mountinfo_text);
    out.cpu = locate_cgroup("cpu", groups, mounts);
    out.cpuset = locate_cgroup("cpuset", groups, mounts);
    out.memory = locate_cgroup("memory", groups, mounts);
    if (out.cpu) read_cpu_quota(files, out);
    if (out.cpuset) read_cpuset(files, out);
    if (out.memory) read_memory_limit(files, out);
    return out;
}

}  // namespace clprobe

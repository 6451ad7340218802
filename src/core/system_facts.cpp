#include "core/system_facts.hpp"

#include <nlohmann/json.hpp>

#include <utility>

#include "core/report.hpp"

namespace clprobe {

using nlohmann::json;

namespace {

// What the system probes write for a fact the host does not expose.
constexpr const char* unknown = "unknown";

json text_or_unknown(const std::string& s) {
    return s.empty() ? json(unknown) : json(s);
}
template <typename T>
json or_unknown(const std::optional<T>& v) {
    return v ? json(*v) : json(unknown);
}

// ---------------------------------------------------------------- tolerant field readers

const json* field(const json* j, const char* key) {
    if (!j || !j->is_object()) return nullptr;
    const auto it = j->find(key);
    return it == j->end() ? nullptr : &*it;
}
// A string field; "unknown", a missing field and any other type read as "".
std::string text(const json* j, const char* key) {
    const json* v = field(j, key);
    return v && v->is_string() && v->get<std::string>() != unknown ? v->get<std::string>() : std::string();
}
std::optional<double> number(const json* j, const char* key) {
    const json* v = field(j, key);
    return v && v->is_number() ? std::optional<double>(v->get<double>()) : std::nullopt;
}
template <typename T>
T number_or(const json* j, const char* key, T fallback) {
    const auto v = number(j, key);
    return v && *v >= 0 ? static_cast<T>(*v) : fallback;
}
bool flag(const json* j, const char* key) {
    const json* v = field(j, key);
    return v && v->is_boolean() && v->get<bool>();
}
std::vector<std::string> texts(const json* j, const char* key) {
    std::vector<std::string> out;
    if (const json* v = field(j, key); v && v->is_array())
        for (const auto& item : *v)
            if (item.is_string()) out.push_back(item.get<std::string>());
    return out;
}

const json* attributes_of(const RunReport& r, const char* probe) {
    const ProbeResult* p = find_result(r, probe);
    return p ? &p->attributes : nullptr;
}

// ---------------------------------------------------------------- system.host

// The clock limits, each a number of MHz or "unknown": one table for the writer and the reader.
using MhzMember = std::optional<double> CpuFrequencyFacts::*;
constexpr std::pair<const char*, MhzMember> mhz_members[] = {{"policy_min_mhz", &CpuFrequencyFacts::policy_min_mhz},
                                                             {"policy_max_mhz", &CpuFrequencyFacts::policy_max_mhz},
                                                             {"hardware_min_mhz", &CpuFrequencyFacts::hardware_min_mhz},
                                                             {"hardware_max_mhz", &CpuFrequencyFacts::hardware_max_mhz},
                                                             {"base_mhz", &CpuFrequencyFacts::base_mhz},
                                                             {"cpuinfo_mhz", &CpuFrequencyFacts::cpuinfo_mhz}};

json to_json(const CpuFrequencyFacts& f) {
    json j = {{"cpufreq", f.cpufreq},
              {"driver", text_or_unknown(f.driver)},
              {"governors", f.governors.empty() ? json(unknown) : json(f.governors)}};
    j["current_mhz"] =
        f.current_mhz ? json{{"min", f.current_mhz->min}, {"mean", f.current_mhz->mean}, {"max", f.current_mhz->max}}
                      : json(unknown);
    for (const auto& [key, member] : mhz_members)
        j[key] = or_unknown(f.*member);
    return j;
}

CpuFrequencyFacts frequency_from(const json* j) {
    CpuFrequencyFacts f;
    f.cpufreq = flag(j, "cpufreq");
    f.driver = text(j, "driver");
    f.governors = texts(j, "governors");
    const json* current = field(j, "current_mhz");
    const auto min = number(current, "min"), mean = number(current, "mean"), max = number(current, "max");
    if (min && mean && max) f.current_mhz = CpuFrequencyFacts::Range{*min, *mean, *max};
    for (const auto& [key, member] : mhz_members)
        f.*member = number(j, key);
    return f;
}

json to_json(const VirtualizationFacts& v, const char* name_key) {
    return {{"detected", v.detected}, {name_key, text_or_unknown(v.name)}, {"evidence", v.evidence}};
}

VirtualizationFacts virtualization_from(const json* j, const char* name_key) {
    return {flag(j, "detected"), text(j, name_key), texts(j, "evidence")};
}

// ---------------------------------------------------------------- system.limits

json to_json(const std::optional<CgroupPlaceFacts>& p) {
    if (!p) return unknown;
    return {{"version", p->version}, {"path", p->path}, {"directory", p->directory}};
}

std::optional<CgroupPlaceFacts> place_from(const json* j) {
    if (!j || !j->is_object()) return std::nullopt;
    return CgroupPlaceFacts{number_or<int>(j, "version", 0), text(j, "path"), text(j, "directory")};
}

json to_json(const CgroupLimit<CpuQuotaFacts>& q) {
    if (!q.value) return q.word;
    return {{"cpus", q.value->cpus},
            {"quota_us", q.value->quota_us},
            {"period_us", q.value->period_us},
            {"file", q.value->file}};
}

json to_json(const CgroupLimit<MemoryLimitFacts>& m) {
    if (!m.value) return m.word;
    return {{"bytes", m.value->bytes},
            {"file", m.value->file},
            {"working_set_bytes", or_unknown(m.value->working_set_bytes)}};
}

// An object is a limit (its amount 0 when unreadable); a word is kept as it is.
CgroupLimit<CpuQuotaFacts> quota_from(const json* j) {
    CgroupLimit<CpuQuotaFacts> q;
    if (j && j->is_string()) q.word = j->get<std::string>();
    if (j && j->is_object())
        q.value = CpuQuotaFacts{number(j, "cpus").value_or(0), number_or<std::uint64_t>(j, "quota_us", 0),
                                number_or<std::uint64_t>(j, "period_us", 100000), text(j, "file")};
    return q;
}

CgroupLimit<MemoryLimitFacts> memory_limit_from(const json* j) {
    CgroupLimit<MemoryLimitFacts> m;
    if (j && j->is_string()) m.word = j->get<std::string>();
    if (j && j->is_object()) {
        m.value = MemoryLimitFacts{number_or<std::uint64_t>(j, "bytes", 0), text(j, "file"), std::nullopt};
        if (const auto ws = number(j, "working_set_bytes"))
            m.value->working_set_bytes = static_cast<std::uint64_t>(*ws);
    }
    return m;
}

json device_share_to_json(const LimitsFacts& f) {
    if (!f.opencl_cpu_device) return f.opencl_cpu_device_note;
    const CpuDeviceShareFacts& d = *f.opencl_cpu_device;
    return {{"compute_units", d.compute_units},
            {"allowed_cpus", d.allowed_cpus},
            {"usable_cpus", d.usable_cpus},
            {"comparison", d.comparison}};
}

void device_share_from(const json* j, LimitsFacts& f) {
    if (j && j->is_string()) f.opencl_cpu_device_note = j->get<std::string>();
    if (const auto cus = number(j, "compute_units"))
        f.opencl_cpu_device =
            CpuDeviceShareFacts{static_cast<unsigned>(*cus), number_or<std::uint64_t>(j, "allowed_cpus", 0),
                                number(j, "usable_cpus").value_or(0), text(j, "comparison")};
}

// ---------------------------------------------------------------- system.activity

json consumers_to_json(const std::vector<ConsumerFacts>& consumers) {
    json out = json::array();
    for (const auto& c : consumers)
        out.push_back({{"name", c.name},
                       {"pid", c.pid},
                       {"cpu_seconds", c.cpu_seconds},
                       {"cpu_percent", c.cpu_percent},
                       {"kernel_thread", c.kernel_thread}});
    return out;
}

std::vector<ConsumerFacts> consumers_from(const json* j) {
    std::vector<ConsumerFacts> out;
    if (!j || !j->is_array()) return out;
    for (const auto& item : *j) {
        const auto pid = number(&item, "pid");
        const auto percent = number(&item, "cpu_percent");
        if (!pid || !percent) continue;
        out.push_back({text(&item, "name"), static_cast<long long>(*pid), number(&item, "cpu_seconds").value_or(0),
                       *percent, flag(&item, "kernel_thread")});
    }
    return out;
}

}  // namespace

void record_host_facts(ProbeResult& out, const HostFacts& f) {
    out.attributes["frequency"] = to_json(f.frequency);
    out.attributes["hypervisor"] = to_json(f.hypervisor, "vendor");
    out.attributes["container"] = to_json(f.container, "runtime");
}

void record_limits_facts(ProbeResult& out, const LimitsFacts& f) {
    auto& a = out.attributes;
    a["online_cpus"] = f.online_cpus;
    a["allowed_cpus"] = f.allowed_cpus;
    a["cpuset_cpus"] = text_or_unknown(f.cpuset_cpus);
    a["cpuset_file"] = text_or_unknown(f.cpuset_file);
    a["restricted_by"] = f.restricted_by;
    a["cgroup"] = {
        {"cpu", to_json(f.cgroup_cpu)}, {"cpuset", to_json(f.cgroup_cpuset)}, {"memory", to_json(f.cgroup_memory)}};
    a["cpu_quota"] = to_json(f.cpu_quota);
    a["usable_cpus"] = or_unknown(f.usable_cpus);
    a["memory_limit"] = to_json(f.memory_limit);
    a["opencl_cpu_device"] = device_share_to_json(f);
    a["opencl_cpu_environment"] = f.opencl_cpu_environment;
}

void record_activity_facts(ProbeResult& out, const ActivityFacts& f) {
    auto& a = out.attributes;
    a["monitor"] = f.monitor;
    a["period_ms"] = f.period_ms;
    a["window_seconds"] = f.window_seconds;
    a["samples"] = f.samples;
    a["online_cpus"] = f.online_cpus;
    a["counted_cpus"] = f.counted_cpus;
    const auto& s = f.cpu_seconds;
    a["cpu_seconds"] = {
        {"capacity", s.capacity}, {"busy", s.busy}, {"self", s.self}, {"others", s.others}, {"steal", s.steal}};
    a["swap_pages"] = f.swap_pages ? json{{"in", f.swap_pages->in}, {"out", f.swap_pages->out}} : json(unknown);
    a["top_consumers"] = consumers_to_json(f.top_consumers);
    a["accounting"] = f.accounting;
}

std::optional<HostFacts> host_facts_of(const RunReport& r) {
    const json* a = attributes_of(r, system_host_probe_id);
    if (!a) return std::nullopt;
    return HostFacts{frequency_from(field(a, "frequency")), virtualization_from(field(a, "hypervisor"), "vendor"),
                     virtualization_from(field(a, "container"), "runtime")};
}

std::optional<LimitsFacts> limits_facts_of(const RunReport& r) {
    const json* a = attributes_of(r, system_limits_probe_id);
    if (!a) return std::nullopt;
    LimitsFacts f;
    f.online_cpus = text(a, "online_cpus");
    f.allowed_cpus = text(a, "allowed_cpus");
    f.cpuset_cpus = text(a, "cpuset_cpus");
    f.cpuset_file = text(a, "cpuset_file");
    f.restricted_by = text(a, "restricted_by");
    const json* cgroup = field(a, "cgroup");
    f.cgroup_cpu = place_from(field(cgroup, "cpu"));
    f.cgroup_cpuset = place_from(field(cgroup, "cpuset"));
    f.cgroup_memory = place_from(field(cgroup, "memory"));
    f.cpu_quota = quota_from(field(a, "cpu_quota"));
    f.usable_cpus = number(a, "usable_cpus");
    f.memory_limit = memory_limit_from(field(a, "memory_limit"));
    device_share_from(field(a, "opencl_cpu_device"), f);
    if (const json* env = field(a, "opencl_cpu_environment"); env && env->is_object())
        for (const auto& [name, value] : env->items())
            if (value.is_string()) f.opencl_cpu_environment[name] = value.get<std::string>();
    return f;
}

std::optional<ActivityFacts> activity_facts_of(const RunReport& r) {
    const json* a = attributes_of(r, system_activity_probe_id);
    if (!a) return std::nullopt;
    ActivityFacts f;
    f.monitor = text(a, "monitor");
    f.period_ms = number_or<long long>(a, "period_ms", 0);
    f.window_seconds = number(a, "window_seconds").value_or(0);
    f.samples = number_or<int>(a, "samples", 0);
    f.online_cpus = number_or<int>(a, "online_cpus", 0);
    f.counted_cpus = text(a, "counted_cpus");
    const json* s = field(a, "cpu_seconds");
    f.cpu_seconds = {number(s, "capacity").value_or(0), number(s, "busy").value_or(0), number(s, "self").value_or(0),
                     number(s, "others").value_or(0), number(s, "steal").value_or(0)};
    const json* swap = field(a, "swap_pages");
    const auto in = number(swap, "in"), out = number(swap, "out");
    if (in && out)
        f.swap_pages = ActivityFacts::SwapPages{static_cast<std::uint64_t>(*in), static_cast<std::uint64_t>(*out)};
    f.top_consumers = consumers_from(field(a, "top_consumers"));
    f.accounting = text(a, "accounting");
    return f;
}

}  // namespace clprobe

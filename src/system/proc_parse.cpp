#include "system/proc_parse.hpp"

#include <algorithm>
#include <set>
#include <utility>

#include "core/text.hpp"

namespace clprobe {

namespace {

std::optional<CpuTimes> parse_cpu_fields(const std::vector<std::string_view>& f) {
    // user nice system idle are in every kernel since 2.4; later fields appeared over time.
    if (f.size() < 5) return std::nullopt;
    std::uint64_t v[10] = {};
    for (std::size_t i = 1; i < f.size() && i <= 10; ++i) {
        const auto n = text::to_u64(f[i]);
        if (!n) return std::nullopt;
        v[i - 1] = *n;
    }
    CpuTimes t;
    t.user = v[0];
    t.nice = v[1];
    t.system = v[2];
    t.idle = v[3];
    t.iowait = v[4];
    t.irq = v[5];
    t.softirq = v[6];
    t.steal = v[7];
    t.guest = v[8];
    t.guest_nice = v[9];
    return t;
}

// "key: value" with the key trimmed; nullopt without a colon.
std::optional<std::pair<std::string_view, std::string_view>> colon_pair(std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return std::nullopt;
    return std::make_pair(text::trim(line.substr(0, colon)), text::trim(line.substr(colon + 1)));
}

}  // namespace

CpuTimes& CpuTimes::operator+=(const CpuTimes& o) {
    user += o.user;
    nice += o.nice;
    system += o.system;
    idle += o.idle;
    iowait += o.iowait;
    irq += o.irq;
    softirq += o.softirq;
    steal += o.steal;
    guest += o.guest;
    guest_nice += o.guest_nice;
    return *this;
}

std::optional<ProcStat> parse_proc_stat(std::string_view text) {
    ProcStat out;
    bool have_all = false;
    for (const auto line : text::lines(text)) {
        if (!text::starts_with(line, "cpu")) continue;
        const auto fields = text::split_whitespace(line);
        if (fields.empty()) continue;
        const auto times = parse_cpu_fields(fields);
        if (fields[0] == "cpu") {
            if (!times) return std::nullopt;
            out.all = *times;
            have_all = true;
        } else if (times) {
            if (const auto n = text::to_u64(fields[0].substr(3)); n && *n < (1u << 16))
                out.per_cpu[static_cast<int>(*n)] = *times;
        }
    }
    if (!have_all) return std::nullopt;
    return out;
}

std::optional<PidStat> parse_pid_stat(std::string_view text) {
    const auto open = text.find('(');
    const auto close = text.rfind(')');
    if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
    PidStat s;
    const auto pid = text::to_u64(text.substr(0, open));
    if (!pid || *pid > 0x7fffffff) return std::nullopt;
    s.pid = static_cast<int>(*pid);
    s.comm = std::string(text.substr(open + 1, close - open - 1));
    // After comm: state(3) ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
    // utime(14) stime(15) cutime cstime priority nice num_threads itrealvalue starttime(22) ...
    // processor(39). rest[0] is field 3.
    const auto rest = text::split_whitespace(text.substr(close + 1));
    if (rest.size() < 20) return std::nullopt;
    s.state = rest[0].empty() ? '?' : rest[0][0];
    const auto ppid = text::to_u64(rest[4 - 3]);
    const auto flags = text::to_u64(rest[9 - 3]);
    const auto utime = text::to_u64(rest[14 - 3]);
    const auto stime = text::to_u64(rest[15 - 3]);
    // cutime and cstime are signed in the kernel's format (long), never negative in practice.
    const auto cutime = text::to_i64(rest[16 - 3]);
    const auto cstime = text::to_i64(rest[17 - 3]);
    const auto start = text::to_u64(rest[22 - 3]);
    if (!ppid || *ppid > 0x7fffffff || !flags || !utime || !stime || !cutime || !cstime || !start) return std::nullopt;
    s.ppid = static_cast<int>(*ppid);
    s.flags = *flags;
    s.utime = *utime;
    s.stime = *stime;
    s.cutime = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *cutime));
    s.cstime = static_cast<std::uint64_t>(std::max<std::int64_t>(0, *cstime));
    s.start_ticks = *start;
    if (rest.size() > 39 - 3)
        if (const auto cpu = text::to_u64(rest[39 - 3]); cpu && *cpu < (1u << 16)) s.processor = static_cast<int>(*cpu);
    return s;
}

std::map<std::string, std::uint64_t> parse_meminfo(std::string_view text) {
    std::map<std::string, std::uint64_t> out;
    for (const auto line : text::lines(text)) {
        const auto kv = colon_pair(line);
        if (!kv) continue;
        auto fields = text::split_whitespace(kv->second);
        if (fields.empty()) continue;
        const auto n = text::to_u64(fields[0]);
        if (!n) continue;
        // Every meminfo size is in kB (KiB, despite the name); counts (HugePages_Total) have no unit.
        const bool kib = fields.size() > 1 && fields[1] == "kB";
        out[std::string(kv->first)] = kib ? *n * 1024 : *n;
    }
    return out;
}

std::map<std::string, std::uint64_t> parse_key_values(std::string_view text) {
    std::map<std::string, std::uint64_t> out;
    for (const auto line : text::lines(text)) {
        const auto fields = text::split_whitespace(line);
        if (fields.size() != 2) continue;
        if (const auto n = text::to_u64(fields[1])) out[std::string(fields[0])] = *n;
    }
    return out;
}

std::optional<LoadAverage> parse_loadavg(std::string_view text) {
    const auto f = text::split_whitespace(text);
    if (f.size() < 4) return std::nullopt;
    LoadAverage l;
    const auto one = text::to_double(f[0]), five = text::to_double(f[1]), fifteen = text::to_double(f[2]);
    const auto slash = f[3].find('/');
    if (!one || !five || !fifteen || slash == std::string_view::npos) return std::nullopt;
    const auto running = text::to_u64(f[3].substr(0, slash)), tasks = text::to_u64(f[3].substr(slash + 1));
    if (!running || !tasks || *one < 0 || *five < 0 || *fifteen < 0) return std::nullopt;
    l.one = *one;
    l.five = *five;
    l.fifteen = *fifteen;
    l.running = static_cast<int>(*running);
    l.tasks = static_cast<int>(*tasks);
    return l;
}

std::optional<double> parse_uptime(std::string_view text) {
    const auto f = text::split_whitespace(text);
    if (f.empty()) return std::nullopt;
    const auto v = text::to_double(f[0]);
    if (!v || *v < 0) return std::nullopt;
    return v;
}

CpuInfo parse_cpuinfo(std::string_view text) {
    CpuInfo info;
    std::set<std::string> sockets;
    std::set<std::pair<std::string, std::string>> cores;
    std::string physical_id, implementer, part;
    bool first_processor_done = false;  // model, flags and MHz come from the first processor
    for (const auto line : text::lines(text)) {
        const auto kv = colon_pair(line);
        if (!kv) continue;
        const auto [key, value] = *kv;
        if (key == "processor") {
            if (info.processors > 0) first_processor_done = true;
            ++info.processors;
            physical_id.clear();
        } else if (key == "physical id") {
            physical_id = std::string(value);
            sockets.insert(physical_id);
        } else if (key == "core id") {
            cores.insert({physical_id, std::string(value)});
        } else if (first_processor_done) {
            continue;
        } else if (key == "model name" || key == "Processor" || key == "cpu model") {
            if (info.model.empty()) info.model = std::string(value);
        } else if (key == "vendor_id") {
            info.vendor = std::string(value);
        } else if (key == "flags" || key == "Features") {
            for (const auto f : text::split_whitespace(value))
                info.flags.emplace_back(f);
        } else if (key == "cpu MHz") {
            info.mhz = text::to_double(value);
        } else if (key == "CPU implementer") {
            implementer = std::string(value);
        } else if (key == "CPU part") {
            part = std::string(value);
        }
    }
    // ARM cores name no model: say what identifies them, as lscpu's tables would look it up.
    if (info.model.empty() && !implementer.empty())
        info.model = "ARM implementer " + implementer + (part.empty() ? "" : " part " + part);
    if (info.vendor.empty() && !implementer.empty()) info.vendor = "ARM implementer " + implementer;
    info.sockets = static_cast<int>(sockets.size());
    info.cores = static_cast<int>(cores.size());
    return info;
}

}  // namespace clprobe

#pragma once
// Parsers for /proc text: pure functions over the file's contents, so unit tests feed them
// synthetic text and the live readers (system_files, activity monitor) share them.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

// One "cpu" line of /proc/stat, in clock ticks (USER_HZ).
struct CpuTimes {
    std::uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
    std::uint64_t guest = 0, guest_nice = 0;  // already included in user and nice

    // Time something ran: guest time is not added again (the kernel counts it inside user).
    std::uint64_t busy() const { return user + nice + system + irq + softirq; }
    // Every tick of the CPUs' time, whatever happened in it.
    std::uint64_t elapsed() const { return busy() + idle + iowait + steal; }
    CpuTimes& operator+=(const CpuTimes& o);
};

struct ProcStat {
    CpuTimes all;                     // the aggregate "cpu" line
    std::map<int, CpuTimes> per_cpu;  // "cpuN" lines: online CPUs only
};
// nullopt when the aggregate line is missing or malformed.
std::optional<ProcStat> parse_proc_stat(std::string_view text);

// /proc/[pid]/stat. comm sits in parentheses and may itself hold spaces and parentheses, so it
// runs from the first '(' to the last ')'.
struct PidStat {
    int pid = 0;
    std::string comm;
    char state = '?';
    int ppid = 0;
    std::uint64_t flags = 0;               // PF_* flags: PF_KTHREAD marks kernel threads
    std::uint64_t utime = 0, stime = 0;    // ticks, all threads of the process
    std::uint64_t cutime = 0, cstime = 0;  // ticks of children it has waited for
    std::uint64_t start_ticks = 0;         // start time, ticks after boot
    int processor = -1;                    // CPU it last ran on
    std::uint64_t cpu_ticks() const { return utime + stime; }
    bool kernel_thread() const { return (flags & 0x00200000) != 0; }  // PF_KTHREAD
};
std::optional<PidStat> parse_pid_stat(std::string_view text);

// "Key: value [kB]" files (/proc/meminfo) and "key value" files (/proc/vmstat, cgroup
// memory.stat): every line whose value is a number. meminfo's kB values are returned in bytes.
std::map<std::string, std::uint64_t> parse_meminfo(std::string_view text);
std::map<std::string, std::uint64_t> parse_key_values(std::string_view text);

struct LoadAverage {
    double one = 0, five = 0, fifteen = 0;  // runnable + uninterruptible tasks, exponentially averaged
    int running = 0, tasks = 0;             // scheduling entities runnable now / existing
};
std::optional<LoadAverage> parse_loadavg(std::string_view text);

// /proc/uptime's first field, seconds since boot.
std::optional<double> parse_uptime(std::string_view text);

// /proc/cpuinfo, the parts clprobe reports. x86 writes "model name" and "flags"; ARM writes
// "Features" and identifies the core by implementer and part numbers.
struct CpuInfo {
    std::string model;
    std::string vendor;
    std::vector<std::string> flags;  // of the first processor, in file order
    int processors = 0;              // "processor" entries
    int sockets = 0;                 // distinct "physical id" (0 when the file does not say)
    int cores = 0;                   // distinct (physical id, core id) (0 when the file does not say)
    std::optional<double> mhz;       // first processor's "cpu MHz" (in a VM often the nominal clock)
};
CpuInfo parse_cpuinfo(std::string_view text);

}  // namespace clprobe

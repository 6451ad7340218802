#include "runtime/host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <string>
#include <thread>

#include "core/text.hpp"
#include "system/proc_parse.hpp"
#include "system/system_files.hpp"

namespace clprobe {

namespace {

// PRETTY_NAME from /etc/os-release, without its quotes.
std::string pretty_os_name(const std::string& os_release) {
    for (const auto line : text::lines(os_release)) {
        if (!text::starts_with(line, "PRETTY_NAME=")) continue;
        std::string_view v = text::trim(line.substr(line.find('=') + 1));
        if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
            v = v.substr(1, v.size() - 2);
        return std::string(v);
    }
    return {};
}

}  // namespace

// The header facts of every report; /proc/cpuinfo and /proc/meminfo go through the system
// layer's parsers (unit-tested on synthetic files) rather than a second reading of their own.
HostInfo query_host_info() {
    HostInfo h;
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) h.hostname = name;
    struct utsname u {};
    if (::uname(&u) == 0) h.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
    const SystemFiles files;
    if (const auto os_release = files.read("/etc/os-release")) h.os = pretty_os_name(*os_release);
    if (const auto cpuinfo = files.read("/proc/cpuinfo")) h.cpu_model = parse_cpuinfo(*cpuinfo).model;
    h.logical_cpus = std::thread::hardware_concurrency();
    return h;
}

std::uint64_t available_host_memory_bytes() {
    const auto meminfo = SystemFiles().read("/proc/meminfo");
    if (!meminfo) return 0;
    const auto fields = parse_meminfo(*meminfo);
    const auto it = fields.find("MemAvailable");
    return it == fields.end() ? 0 : it->second;
}

}  // namespace clprobe

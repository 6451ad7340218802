#include "runtime/host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace clprobe {

namespace {
std::string value_after(const std::string& line, char sep) {
    auto pos = line.find(sep);
    if (pos == std::string::npos) return {};
    std::string v = line.substr(pos + 1);
    v.erase(0, v.find_first_not_of(" \t\""));
    while (!v.empty() && (v.back() == '"' || v.back() == ' ' || v.back() == '\n'))
        v.pop_back();
    return v;
}
}  // namespace

HostInfo query_host_info() {
    HostInfo h;
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) h.hostname = name;
    struct utsname u {};
    if (::uname(&u) == 0) {
        h.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
    }
    std::ifstream os_release("/etc/os-release");
    for (std::string line; std::getline(os_release, line);)
        if (line.rfind("PRETTY_NAME=", 0) == 0) h.os = value_after(line, '=');
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0) {
            h.cpu_model = value_after(line, ':');
            break;
        }
    h.logical_cpus = std::thread::hardware_concurrency();
    return h;
}

std::uint64_t available_host_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    for (std::string line; std::getline(meminfo, line);)
        if (line.rfind("MemAvailable:", 0) == 0) {
            try {
                return std::stoull(value_after(line, ':')) * 1024;  // the file says kB
            } catch (const std::exception&) {
                return 0;
            }
        }
    return 0;
}

}  // namespace clprobe

#include "system/system_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace clprobe {

namespace {
// /proc/cpuinfo of a 512-CPU machine is about 1 MiB; nothing clprobe reads is legitimately larger.
constexpr std::size_t max_file_bytes = 16u << 20;
}  // namespace

std::optional<std::string> SystemFiles::read(std::string_view path) const {
    const int fd = ::open(full(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string out;
    char buffer[8192];
    while (true) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) break;
        out.append(buffer, static_cast<std::size_t>(n));
        if (out.size() > max_file_bytes) break;
    }
    ::close(fd);
    return out;
}

std::vector<std::string> SystemFiles::list(std::string_view dir) const {
    std::vector<std::string> out;
    DIR* d = ::opendir(full(dir).c_str());
    if (!d) return out;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name(e->d_name);
        if (name != "." && name != "..") out.emplace_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

bool SystemFiles::exists(std::string_view path) const {
    struct stat st {};
    return ::stat(full(path).c_str(), &st) == 0;
}

}  // namespace clprobe

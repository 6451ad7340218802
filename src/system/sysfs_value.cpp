#include "system/sysfs_value.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "system/energy_counter.hpp"

namespace clprobe {

namespace {

// Sysfs attributes are one short line; 256 bytes hold any number or name read here.
std::optional<std::string> read_small(const std::string& path, std::string& error) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = std::strerror(errno);
        return std::nullopt;
    }
    char buffer[256];
    ssize_t n;
    do {
        n = ::read(fd, buffer, sizeof buffer);
    } while (n < 0 && errno == EINTR);
    const int read_errno = errno;
    ::close(fd);
    if (n < 0) {
        error = std::strerror(read_errno);
        return std::nullopt;
    }
    return std::string(buffer, static_cast<std::size_t>(n));
}

}  // namespace

SysfsValue read_sysfs_unsigned(const std::string& path) {
    SysfsValue out;
    const auto text = read_small(path, out.error);
    if (!text) return out;
    out.value = parse_sysfs_unsigned(*text);
    if (!out.value) out.error = "not a number: '" + text->substr(0, text->find('\n')) + "'";
    return out;
}

std::optional<std::string> read_sysfs_line(const std::string& path) {
    std::string error;
    auto text = read_small(path, error);
    if (!text) return std::nullopt;
    text->erase(std::min(text->find('\n'), text->size()));
    return text;
}

}  // namespace clprobe

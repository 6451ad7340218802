#pragma once
// One unsigned number read from a sysfs file, or why it could not be: the energy sensors need the
// reason (a file that vanished, energy_uj readable by root only), which SystemFiles does not keep.
#include <cstdint>
#include <optional>
#include <string>

namespace clprobe {

struct SysfsValue {
    std::optional<std::uint64_t> value;
    std::string error;  // "No such file or directory", "Permission denied", "not a number: ..."
};

SysfsValue read_sysfs_unsigned(const std::string& path);

// The file's first line, without the newline; nullopt when it cannot be read.
std::optional<std::string> read_sysfs_line(const std::string& path);

}  // namespace clprobe

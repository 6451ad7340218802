#include "system/energy_counter.hpp"

#include <fmt/core.h>

#include <charconv>

namespace clprobe {

std::optional<std::uint64_t> WrappingCounter::advance(std::uint64_t raw) {
    if (range_ != 0 && raw > range_) return std::nullopt;
    if (!last_) {
        last_ = raw;
        return total_;
    }
    if (raw >= *last_) {
        total_ += raw - *last_;
    } else if (range_ != 0) {
        // Wrapped once since the last reading: up to the range, then from 0. Two wraps between
        // readings cannot be told from one; readers keep windows far shorter than a wrap (RAPL's
        // range is hundreds of kJ, minutes at full power).
        total_ += (range_ - *last_) + raw;
    } else {
        return std::nullopt;
    }
    last_ = raw;
    return total_;
}

std::optional<std::uint64_t> parse_sysfs_unsigned(std::string_view text) {
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ' || text.back() == '\t'))
        text.remove_suffix(1);
    if (text.empty()) return std::nullopt;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<int> rapl_package(std::string_view zone_name) {
    constexpr std::string_view prefix = "package-";
    if (zone_name.substr(0, prefix.size()) != prefix) return std::nullopt;
    const auto n = parse_sysfs_unsigned(zone_name.substr(prefix.size()));
    if (!n || *n > 4096) return std::nullopt;
    return static_cast<int>(*n);
}

std::optional<std::string> rapl_scope(std::string_view zone_name, std::optional<int> package) {
    while (!zone_name.empty() && zone_name.back() == '\n')
        zone_name.remove_suffix(1);
    if (const auto p = rapl_package(zone_name)) return fmt::format("cpu package {}", *p);
    if (zone_name == "dram") return package ? fmt::format("dram package {}", *package) : std::string("dram");
    if (zone_name == "psys") return std::string("platform");
    return std::nullopt;
}

}  // namespace clprobe

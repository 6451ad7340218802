#pragma once
// Pure helpers of the energy sensors: unwinding a counter that wraps, parsing sysfs numbers and
// naming a RAPL zone's scope. Unit-tested on exact values (tests/unit/energy_sensors_test.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clprobe {

// A hardware counter that restarts from 0 after `range` (RAPL's max_energy_range_uj). Fed raw
// readings in order, it returns the total advance since the first one. A range of 0 means the
// counter does not wrap (64-bit hwmon and NVML counters); a smaller reading is then an error
// (nullopt), as it is when a reading is above the stated range.
class WrappingCounter {
  public:
    explicit WrappingCounter(std::uint64_t range = 0) : range_(range) {}
    std::optional<std::uint64_t> advance(std::uint64_t raw);

  private:
    std::uint64_t range_;
    std::optional<std::uint64_t> last_;
    std::uint64_t total_ = 0;
};

// A sysfs number ("123456\n"); nullopt for anything else.
std::optional<std::uint64_t> parse_sysfs_unsigned(std::string_view text);

// The scope of a RAPL zone from its `name` file and the package of the zone above it: "package-0"
// -> "cpu package 0", "dram" under package 1 -> "dram package 1", "psys" -> "platform". nullopt
// for "core" and "uncore": parts of their package's figure, which would be counted twice.
std::optional<std::string> rapl_scope(std::string_view zone_name, std::optional<int> package);

// The package number of a "package-N" zone name.
std::optional<int> rapl_package(std::string_view zone_name);

}  // namespace clprobe

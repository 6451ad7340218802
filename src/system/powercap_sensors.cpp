#include "system/powercap_sensors.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "system/energy_counter.hpp"
#include "system/sysfs_value.hpp"
#include "system/system_files.hpp"

namespace clprobe {

namespace {

class PowercapSensor final : public EnergySensor {
  public:
    PowercapSensor(std::string zone, std::string dir, std::string scope, std::uint64_t range)
        : zone_(std::move(zone)), dir_(std::move(dir)), scope_(std::move(scope)), counter_(range) {}

    std::string name() const override { return zone_; }
    std::string scope() const override { return scope_; }
    SensorKind kind() const override { return SensorKind::energy_counter; }
    double resolution() const override { return 1e-6; }  // energy_uj counts microjoules

    SensorReading read() override {
        const SysfsValue raw = read_sysfs_unsigned(dir_ + "/energy_uj");
        if (!raw.value) return {std::nullopt, fmt::format("{}: energy_uj could not be read ({})", zone_, raw.error)};
        const auto total = counter_.advance(*raw.value);
        if (!total) return {std::nullopt, fmt::format("{}: energy_uj {} is outside its range", zone_, *raw.value)};
        return {static_cast<double>(*total) * 1e-6, {}};
    }

  private:
    std::string zone_, dir_, scope_;
    WrappingCounter counter_;
};

// intel-rapl:0 and intel-rapl:0:1 are zones; "intel-rapl" alone is the control type. The MMIO
// interface (intel-rapl-mmio:N) measures the same package domain a second way, so it is left out
// rather than counted twice.
bool is_rapl_zone(const std::string& entry) {
    return (entry.rfind("intel-rapl:", 0) == 0 || entry.rfind("amd-rapl:", 0) == 0);
}

// "intel-rapl:0:1" -> "intel-rapl:0": the zone above a sub-zone, whose name says the package.
std::string parent_zone(const std::string& zone) {
    const auto first = zone.find(':');
    const auto last = zone.rfind(':');
    return first == last ? std::string() : zone.substr(0, last);
}

}  // namespace

void discover_powercap_sensors(const std::string& sysfs_root, SensorDiscovery& out) {
    const SystemFiles files(sysfs_root);
    const std::string base = sysfs_root + "/class/powercap/";
    std::vector<std::string> zones;
    for (const auto& entry : files.list("/class/powercap"))
        if (is_rapl_zone(entry)) zones.push_back(entry);
    if (zones.empty()) {
        out.notes.push_back(
            fmt::format("powercap: no intel-rapl or amd-rapl zone under {}class/powercap",
                        sysfs_root.empty() || sysfs_root.back() == '/' ? sysfs_root : sysfs_root + "/"));
        return;
    }
    std::vector<std::string> unreadable;
    std::size_t found = 0;
    for (const auto& zone : zones) {
        const std::string dir = base + zone;
        const auto name = read_sysfs_line(dir + "/name");
        if (!name) continue;
        std::optional<int> package = rapl_package(*name);
        if (!package) {
            const std::string parent = parent_zone(zone);
            if (!parent.empty())
                if (const auto parent_name = read_sysfs_line(base + parent + "/name"))
                    package = rapl_package(*parent_name);
        }
        const auto scope = rapl_scope(*name, package);
        if (!scope) continue;  // core, uncore: inside their package's figure
        const SysfsValue first = read_sysfs_unsigned(dir + "/energy_uj");
        if (!first.value) {
            unreadable.push_back(fmt::format("{} ({})", zone, first.error));
            continue;
        }
        const SysfsValue range = read_sysfs_unsigned(dir + "/max_energy_range_uj");
        auto sensor = std::make_unique<PowercapSensor>(zone, dir, *scope, range.value.value_or(0));
        sensor->read();  // the counter's origin
        out.sensors.push_back(std::move(sensor));
        ++found;
    }
    if (!unreadable.empty()) {
        std::string list;
        for (const auto& u : unreadable)
            list += (list.empty() ? "" : ", ") + u;
        // Kernels patched for PLATYPUS (CVE-2020-8694) let only root read energy_uj.
        out.notes.push_back(fmt::format("powercap: energy_uj not readable for {}", list));
    } else if (found == 0) {
        out.notes.push_back("powercap: no package, dram or psys zone");
    }
}

}  // namespace clprobe

#include "system/hwmon_sensors.hpp"

#include <fmt/core.h>

#include "system/energy_counter.hpp"
#include "system/sysfs_value.hpp"
#include "system/system_files.hpp"

namespace clprobe {

namespace {

class HwmonEnergySensor final : public EnergySensor {
  public:
    HwmonEnergySensor(std::string name, std::string file, std::string scope)
        : name_(std::move(name)), file_(std::move(file)), scope_(std::move(scope)) {}
    std::string name() const override { return name_; }
    std::string scope() const override { return scope_; }
    SensorKind kind() const override { return SensorKind::energy_counter; }
    double resolution() const override { return 1e-6; }

    SensorReading read() override {
        const SysfsValue raw = read_sysfs_unsigned(file_);
        if (!raw.value)
            return {std::nullopt, fmt::format("{}: energy1_input could not be read ({})", name_, raw.error)};
        // A 64-bit counter with no stated range: one that goes backwards was reset (a GPU reset).
        const auto total = counter_.advance(*raw.value);
        if (!total) return {std::nullopt, fmt::format("{}: energy1_input went backwards (counter reset)", name_)};
        return {static_cast<double>(*total) * 1e-6, {}};
    }

  private:
    std::string name_, file_, scope_;
    WrappingCounter counter_;
};

class HwmonPowerSensor final : public EnergySensor {
  public:
    HwmonPowerSensor(std::string name, std::string file, std::string attribute, std::string scope)
        : name_(std::move(name)), file_(std::move(file)), attribute_(std::move(attribute)), scope_(std::move(scope)) {}
    std::string name() const override { return name_; }
    std::string scope() const override { return scope_; }
    SensorKind kind() const override { return SensorKind::power_sampler; }
    double resolution() const override { return 1e-6; }  // microwatts

    SensorReading read() override {
        const SysfsValue raw = read_sysfs_unsigned(file_);
        if (!raw.value)
            return {std::nullopt, fmt::format("{}: {} could not be read ({})", name_, attribute_, raw.error)};
        return {static_cast<double>(*raw.value) * 1e-6, {}};
    }

  private:
    std::string name_, file_, attribute_, scope_;
};

// "gpu card0" from the device's drm folder; the hwmon folder's name when the card is not found.
std::string gpu_scope(const SystemFiles& files, const std::string& hwmon) {
    for (const auto& entry : files.list("/class/hwmon/" + hwmon + "/device/drm"))
        if (entry.rfind("card", 0) == 0) return "gpu " + entry;
    return "gpu " + hwmon;
}

}  // namespace

bool is_gpu_hwmon(std::string_view driver_name) {
    return driver_name == "amdgpu" || driver_name == "i915" || driver_name == "xe";
}

void discover_hwmon_sensors(const std::string& sysfs_root, SensorDiscovery& out) {
    const SystemFiles files(sysfs_root);
    std::size_t gpus = 0;
    std::vector<std::string> unreadable;
    for (const auto& hwmon : files.list("/class/hwmon")) {
        const std::string dir = sysfs_root + "/class/hwmon/" + hwmon;
        const auto driver = read_sysfs_line(dir + "/name");
        if (!driver || !is_gpu_hwmon(*driver)) continue;
        ++gpus;
        const std::string name = fmt::format("{} ({})", hwmon, *driver);
        const std::string scope = gpu_scope(files, hwmon);
        // A counter needs two readings, a power figure one per sampling interval: prefer the counter.
        const SysfsValue energy = read_sysfs_unsigned(dir + "/energy1_input");
        if (energy.value) {
            auto sensor = std::make_unique<HwmonEnergySensor>(name, dir + "/energy1_input", scope);
            sensor->read();  // the counter's origin
            out.sensors.push_back(std::move(sensor));
            continue;
        }
        bool added = false;
        for (const char* attribute : {"power1_average", "power1_input"}) {
            const SysfsValue power = read_sysfs_unsigned(dir + "/" + attribute);
            if (!power.value) continue;
            out.sensors.push_back(std::make_unique<HwmonPowerSensor>(name, dir + "/" + attribute, attribute, scope));
            added = true;
            break;
        }
        if (!added) unreadable.push_back(name);
    }
    if (gpus == 0)
        out.notes.push_back("hwmon: no amdgpu, i915 or xe sensor");
    else if (!unreadable.empty())
        for (const auto& u : unreadable)
            out.notes.push_back(
                fmt::format("hwmon: {} has no readable energy1_input, power1_average or power1_input", u));
}

}  // namespace clprobe

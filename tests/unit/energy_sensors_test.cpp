// The energy sensors on fixture trees written here (powercap zones, hwmon devices) and on the fake
// NVML library the test suite builds (tests/fake_nvml): counter wraps, scopes, a sensor that
// vanishes mid-window, power sampling, and why nothing was found.
#include <sys/stat.h>
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "sysfs_tree.hpp"
#include "system/energy_counter.hpp"
#include "system/energy_meter.hpp"
#include "system/energy_sensors.hpp"
#include "system/hwmon_sensors.hpp"
#include "system/nvml_sensors.hpp"
#include "system/powercap_sensors.hpp"

using namespace clprobe;
using clprobe::test::SysfsTree;
namespace fs = std::filesystem;

namespace {

const EnergySensor* by_scope(const SensorDiscovery& d, const std::string& scope) {
    for (const auto& s : d.sensors)
        if (s->scope() == scope) return s.get();
    return nullptr;
}

// The fake NVML reads its settings at nvmlInit_v2; each test sets the ones it needs and clears
// them after, so tests do not leak settings into each other.
struct FakeNvmlEnv {
    explicit FakeNvmlEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const auto& [k, v] : vars) {
            ::setenv(k, v, 1);
            names.push_back(k);
        }
    }
    ~FakeNvmlEnv() {
        for (const char* k : names)
            ::unsetenv(k);
    }
    std::vector<const char*> names;
};

}  // namespace

TEST_CASE("WrappingCounter: advances, unwinds one wrap, refuses impossible readings", "[energy]") {
    WrappingCounter c(1000);
    CHECK(c.advance(900) == 0u);
    CHECK(c.advance(950) == 50u);
    CHECK(c.advance(10) == 110u);  // 50 up to the range, then 10 from 0
    CHECK(c.advance(10) == 110u);
    CHECK_FALSE(c.advance(1001).has_value());  // above max_energy_range_uj: not this counter

    WrappingCounter no_range;
    CHECK(no_range.advance(5) == 0u);
    CHECK(no_range.advance(7) == 2u);
    CHECK_FALSE(no_range.advance(6).has_value());  // a 64-bit counter going back was reset
}

TEST_CASE("parse_sysfs_unsigned and RAPL scope names", "[energy]") {
    CHECK(parse_sysfs_unsigned("123456\n") == 123456u);
    CHECK_FALSE(parse_sysfs_unsigned("").has_value());
    CHECK_FALSE(parse_sysfs_unsigned("12a\n").has_value());
    CHECK_FALSE(parse_sysfs_unsigned("-3").has_value());

    CHECK(rapl_scope("package-0", std::nullopt) == "cpu package 0");
    CHECK(rapl_scope("package-1\n", std::nullopt) == "cpu package 1");
    CHECK(rapl_scope("dram", 1) == "dram package 1");
    CHECK(rapl_scope("dram", std::nullopt) == "dram");
    CHECK(rapl_scope("psys", std::nullopt) == "platform");
    CHECK_FALSE(rapl_scope("core", 0).has_value());    // inside the package's figure
    CHECK_FALSE(rapl_scope("uncore", 0).has_value());  // likewise
}

TEST_CASE("powercap: packages, dram under its package, sub-zones and MMIO left out", "[energy]") {
    SysfsTree t;
    t.zone("intel-rapl:0", "package-0", 1000);
    t.zone("intel-rapl:0:0", "core", 500);
    t.zone("intel-rapl:0:1", "dram", 200);
    t.zone("intel-rapl:1", "package-1", 3000);
    t.zone("intel-rapl-mmio:0", "package-0", 1000);
    t.write("class/powercap/intel-rapl/enabled", "1");  // the control type, not a zone
    SensorDiscovery d;
    discover_powercap_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 3);
    CHECK(d.notes.empty());
    REQUIRE(by_scope(d, "cpu package 0"));
    CHECK(by_scope(d, "cpu package 0")->name() == "intel-rapl:0");
    REQUIRE(by_scope(d, "dram package 0"));
    CHECK(by_scope(d, "dram package 0")->name() == "intel-rapl:0:1");
    REQUIRE(by_scope(d, "cpu package 1"));
    for (const auto& s : d.sensors)
        CHECK(s->kind() == SensorKind::energy_counter);
}

TEST_CASE("powercap: a window across the counter's wrap", "[energy]") {
    SysfsTree t;
    const std::uint64_t range = 262143328850;
    t.zone("intel-rapl:0", "package-0", range - 2'000'000, range);
    SensorDiscovery d;
    discover_powercap_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 1);
    EnergyMeter meter(d.sensors, 0.01);
    meter.start();
    t.write("class/powercap/intel-rapl:0/energy_uj", "3000000");  // wrapped: 2 J to the top, 3 J after
    const WindowEnergy w = meter.stop();
    REQUIRE(w.sensors.size() == 1);
    REQUIRE(w.sensors[0].joules.has_value());
    CHECK(*w.sensors[0].joules == Approx(5.0).epsilon(1e-12));
}

TEST_CASE("powercap: a sensor that vanishes mid-window is reported, the others still count", "[energy]") {
    SysfsTree t;
    t.zone("intel-rapl:0", "package-0", 1'000'000);
    t.zone("intel-rapl:1", "package-1", 1'000'000);
    SensorDiscovery d;
    discover_powercap_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 2);
    EnergyMeter meter(d.sensors, 0.01);
    meter.start();
    t.remove("class/powercap/intel-rapl:0");
    t.write("class/powercap/intel-rapl:1/energy_uj", "1500000");
    const WindowEnergy w = meter.stop();
    CHECK_FALSE(w.sensors[0].joules.has_value());
    CHECK_THAT(w.sensors[0].error, Catch::Contains("intel-rapl:0") && Catch::Contains("energy_uj could not be read") &&
                                       Catch::Contains("No such file"));
    REQUIRE(w.sensors[1].joules.has_value());
    CHECK(*w.sensors[1].joules == Approx(0.5));
}

TEST_CASE("hwmon: GPU power sampled and integrated, scope from the card, other drivers ignored", "[energy]") {
    SysfsTree t;
    t.write("class/hwmon/hwmon0/name", "k10temp");  // a CPU temperature sensor: not an energy source
    t.write("class/hwmon/hwmon0/power1_average", "99000000");
    t.write("class/hwmon/hwmon3/name", "amdgpu");
    t.write("class/hwmon/hwmon3/power1_average", "25000000");  // 25 W in microwatts
    t.write("class/hwmon/hwmon3/device/drm/card1/dev", "226:1");
    SensorDiscovery d;
    discover_hwmon_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 1);
    CHECK(d.sensors[0]->scope() == "gpu card1");
    CHECK(d.sensors[0]->name() == "hwmon3 (amdgpu)");
    CHECK(d.sensors[0]->kind() == SensorKind::power_sampler);
    EnergyMeter meter(d.sensors, 0.005);
    meter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const WindowEnergy w = meter.stop();
    REQUIRE(w.sensors[0].joules.has_value());
    // Constant power: the trapezoids add up to power x the window exactly, whatever the polls.
    CHECK(*w.sensors[0].joules == Approx(25.0 * w.seconds).epsilon(1e-9));
}

TEST_CASE("hwmon: an energy counter is preferred to a power reading; i915 and xe count", "[energy]") {
    SysfsTree t;
    t.write("class/hwmon/hwmon1/name", "i915");
    t.write("class/hwmon/hwmon1/energy1_input", "7000000");
    t.write("class/hwmon/hwmon1/power1_average", "1000000");
    t.write("class/hwmon/hwmon2/name", "xe");
    t.write("class/hwmon/hwmon2/power1_input", "3000000");
    SensorDiscovery d;
    discover_hwmon_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 2);
    CHECK(d.sensors[0]->kind() == SensorKind::energy_counter);
    CHECK(d.sensors[0]->scope() == "gpu hwmon1");  // no drm card folder: named after the hwmon device
    CHECK(d.sensors[1]->kind() == SensorKind::power_sampler);
    EnergyMeter meter(d.sensors, 0.01);
    meter.start();
    t.write("class/hwmon/hwmon1/energy1_input", "9500000");
    const WindowEnergy w = meter.stop();
    REQUIRE(w.sensors[0].joules.has_value());
    CHECK(*w.sensors[0].joules == Approx(2.5));
}

TEST_CASE("hwmon: a power sampler that vanishes mid-window has no figure, and says why", "[energy]") {
    SysfsTree t;
    t.write("class/hwmon/hwmon3/name", "amdgpu");
    t.write("class/hwmon/hwmon3/power1_average", "25000000");
    SensorDiscovery d;
    discover_hwmon_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 1);
    EnergyMeter meter(d.sensors, 0.002);
    meter.start();
    t.remove("class/hwmon/hwmon3");
    const WindowEnergy w = meter.stop();
    CHECK_FALSE(w.sensors[0].joules.has_value());
    CHECK_THAT(w.sensors[0].error, Catch::Contains("power1_average could not be read"));
}

TEST_CASE("discovery: no sensor at all gives one reason naming every source", "[energy]") {
    SysfsTree t;
    t.write("class/hwmon/hwmon0/name", "k10temp");
    const SensorDiscovery d = discover_energy_sensors({t.root(), "/nonexistent/libnvidia-ml.so.1"});
    CHECK(d.sensors.empty());
    const std::string reason = no_sensor_reason(d);
    CHECK_THAT(reason, Catch::StartsWith("no readable energy sensor: powercap: no intel-rapl or amd-rapl zone"));
    CHECK_THAT(reason, Catch::Contains("hwmon: no amdgpu, i915 or xe sensor"));
    CHECK_THAT(reason, Catch::Contains("NVML: /nonexistent/libnvidia-ml.so.1 not loaded"));
}

TEST_CASE("energy_sources_from_environment: CLPROBE_SYSFS_ROOT and CLPROBE_NVML_LIBRARY", "[energy]") {
    ::unsetenv("CLPROBE_SYSFS_ROOT");
    ::unsetenv("CLPROBE_NVML_LIBRARY");
    CHECK(energy_sources_from_environment().sysfs_root == "/sys");
    CHECK(energy_sources_from_environment().nvml_library == "libnvidia-ml.so.1");
    ::setenv("CLPROBE_SYSFS_ROOT", "/tmp/fixture/", 1);
    ::setenv("CLPROBE_NVML_LIBRARY", "/opt/fake.so", 1);
    CHECK(energy_sources_from_environment().sysfs_root == "/tmp/fixture");
    CHECK(energy_sources_from_environment().nvml_library == "/opt/fake.so");
    ::unsetenv("CLPROBE_SYSFS_ROOT");
    ::unsetenv("CLPROBE_NVML_LIBRARY");
}

TEST_CASE("NVML (fake library): energy counter per GPU, loaded with dlopen", "[energy][nvml]") {
    FakeNvmlEnv env({{"FAKE_NVML_DEVICES", "2"}});
    SensorDiscovery d;
    discover_nvml_sensors(CLPROBE_FAKE_NVML, d);
    REQUIRE(d.sensors.size() == 2);
    CHECK(d.notes.empty());
    CHECK(d.sensors[1]->scope() == "gpu 1");
    CHECK(d.sensors[0]->kind() == SensorKind::energy_counter);
    EnergyMeter meter(d.sensors, 0.01);
    meter.start();
    const WindowEnergy w = meter.stop();
    // The fake's counter advances 250 mJ per call: one call at each end of the window.
    REQUIRE(w.sensors[0].joules.has_value());
    CHECK(*w.sensors[0].joules == Approx(0.25));
}

TEST_CASE("NVML (fake library): power samples where the energy counter is not supported", "[energy][nvml]") {
    FakeNvmlEnv env({{"FAKE_NVML_NO_ENERGY", "1"}, {"FAKE_NVML_POWER_MW", "40000"}});
    SensorDiscovery d;
    discover_nvml_sensors(CLPROBE_FAKE_NVML, d);
    REQUIRE(d.sensors.size() == 1);
    CHECK(d.sensors[0]->kind() == SensorKind::power_sampler);
    CHECK(d.sensors[0]->read().value == Approx(40.0));
    EnergyMeter meter(d.sensors, 0.005);
    meter.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const WindowEnergy w = meter.stop();
    REQUIRE(w.sensors[0].joules.has_value());
    CHECK(*w.sensors[0].joules == Approx(40.0 * w.seconds).epsilon(1e-9));
}

TEST_CASE("NVML (fake library): a GPU lost mid-window, a failed init, a missing library", "[energy][nvml]") {
    {
        FakeNvmlEnv env({{"FAKE_NVML_FAIL_AFTER", "3"}});  // discovery's 2 calls and the window's first
        SensorDiscovery d;
        discover_nvml_sensors(CLPROBE_FAKE_NVML, d);
        REQUIRE(d.sensors.size() == 1);
        EnergyMeter meter(d.sensors, 0.01);
        meter.start();
        const WindowEnergy w = meter.stop();
        CHECK_FALSE(w.sensors[0].joules.has_value());
        CHECK_THAT(w.sensors[0].error, Catch::Contains("nvmlDeviceGetTotalEnergyConsumption: GPU is lost (15)"));
    }
    {
        FakeNvmlEnv env({{"FAKE_NVML_INIT_FAIL", "1"}});
        SensorDiscovery d;
        discover_nvml_sensors(CLPROBE_FAKE_NVML, d);
        CHECK(d.sensors.empty());
        REQUIRE(d.notes.size() == 1);
        CHECK_THAT(d.notes[0], Catch::Contains("nvmlInit_v2 failed (Driver Not Loaded)"));
    }
    SensorDiscovery d;
    discover_nvml_sensors("/nonexistent/libnvidia-ml.so.1", d);
    CHECK(d.sensors.empty());
    REQUIRE(d.notes.size() == 1);
    CHECK_THAT(d.notes[0], Catch::StartsWith("NVML: /nonexistent/libnvidia-ml.so.1 not loaded"));
}

TEST_CASE("counter_update_interval: a counter that never moves has no interval", "[energy]") {
    SysfsTree t;
    t.zone("intel-rapl:0", "package-0", 1000);
    SensorDiscovery d;
    discover_powercap_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 1);
    CHECK_FALSE(counter_update_interval(*d.sensors[0], 0.02).has_value());
}

TEST_CASE("energy error bound: two intervals over the window, plus the resolution", "[energy]") {
    CHECK(energy_relative_error(0.001, 0.1, 0, 10) == Approx(0.02));
    CHECK(energy_relative_error(0.001, 0.1, 1e-3, 1) == Approx(0.022));
    CHECK(window_for_error(0.001, 0.05) == Approx(0.04));
    CHECK(std::isinf(energy_relative_error(0.001, 0, 0, 1)));
}

TEST_CASE("alignment: the coarsest counter; a counter that never updates leaves the window unaligned", "[energy]") {
    SysfsTree t;
    t.zone("intel-rapl:0", "package-0", 1000);
    t.zone("intel-rapl:1", "package-1", 1000);
    t.write("class/hwmon/hwmon3/name", "amdgpu");
    t.write("class/hwmon/hwmon3/power1_average", "25000000");
    SensorDiscovery d;
    discover_powercap_sensors(t.root(), d);
    discover_hwmon_sensors(t.root(), d);
    REQUIRE(d.sensors.size() == 3);
    CHECK(coarsest_counter(d.sensors, {0.001, 0.004, 0.5}) == 1u);  // the sampler is not a counter
    EnergySensors samplers_only;
    samplers_only.push_back(std::move(d.sensors[2]));
    CHECK_FALSE(coarsest_counter(samplers_only, {0.01}).has_value());

    d.sensors.pop_back();
    EnergyMeter meter(d.sensors, 0.01);
    meter.align_to(0, 0.01);
    meter.start();
    t.write("class/powercap/intel-rapl:1/energy_uj", "3000");
    const WindowEnergy w = meter.stop();
    CHECK_FALSE(w.aligned);  // intel-rapl:0 never moved within the limit
    REQUIRE(w.sensors[1].joules.has_value());
    CHECK(*w.sensors[1].joules == Approx(0.002));
    // An aligned counter's bound is one interval over the window; an unaligned one's two.
    CHECK(window_error(*d.sensors[0], true, 0.01, 1.0, 10) == Approx(0.0102 + 2e-7));
    CHECK(window_error(*d.sensors[0], false, 0.01, 1.0, 10) == Approx(0.02 + 2e-7));
    // An end seen late (a starved poll) widens the aligned bound by the lateness past 0.2 ms.
    CHECK(window_error(*d.sensors[0], true, 0.01, 1.0, 10, 0.1002) == Approx(0.0102 + 0.1 + 2e-7));
    CHECK(window_error(*d.sensors[0], true, 0.01, 1.0, 10, 1e-4) == Approx(0.0102 + 2e-7));
}

TEST_CASE("EnergyMeter: counters read inside a long window keep every wrap", "[energy]") {
    // A 10 J counter that wraps twice in the window: 1 -> 8 -> 5 (wrapped) -> 2 (wrapped) -> 4 J,
    // 7 + 7 + 7 + 2 = 23 J. Read at the two ends only, it shows 3 J.
    const auto window = [](bool keep_reading) {
        SysfsTree t;
        t.zone("intel-rapl:0", "package-0", 1'000'000, 10'000'000);
        SensorDiscovery d;
        discover_powercap_sensors(t.root(), d);
        REQUIRE(d.sensors.size() == 1);
        EnergyMeter meter(d.sensors, 0.01);
        if (keep_reading) meter.read_counters_every(0.005);
        meter.start();
        for (const char* uj : {"8000000", "5000000", "2000000", "4000000"}) {
            t.replace("class/powercap/intel-rapl:0/energy_uj", uj);  // whole, as the thread reads it
            // Many reading periods: the meter's thread sees each value before the next one.
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        }
        const WindowEnergy w = meter.stop();
        REQUIRE(w.sensors[0].joules.has_value());
        return *w.sensors[0].joules;
    };
    CHECK(window(true) == Approx(23.0));
    CHECK(window(false) == Approx(3.0));
}

#pragma once
// Fixture sysfs trees for the energy sensors' tests (unit and integration): a temporary root that
// CLPROBE_SYSFS_ROOT can name, powercap zones in it, and a zone whose counter a thread advances at
// a known power, as a real RAPL counter would.
#include <unistd.h>
#include <atomic>
#include <chrono>
#include <cstdint>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>

namespace clprobe::test {

// A temporary sysfs root: write("class/powercap/intel-rapl:0/name", "package-0").
class SysfsTree {
  public:
    SysfsTree() {
        std::random_device rd;
        // In memory (/dev/shm) where there is one: a rename on a disk busy with other writes (a
        // build beside the tests) blocked a fixture counter's writer for over 100 ms.
        std::error_code ec;
        const std::filesystem::path base =
            std::filesystem::is_directory("/dev/shm", ec) && ::access("/dev/shm", W_OK) == 0
                ? std::filesystem::path("/dev/shm")
                : std::filesystem::temp_directory_path();
        root_ = base / ("clprobe-energy-" + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(root_);
    }
    ~SysfsTree() {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    SysfsTree(const SysfsTree&) = delete;
    SysfsTree& operator=(const SysfsTree&) = delete;

    void write(const std::string& path, const std::string& text) const {
        const std::filesystem::path p = root_ / path;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p) << text << "\n";
    }
    // Through a temporary file and a rename, so a concurrent reader sees a whole number.
    void replace(const std::string& path, const std::string& text) const {
        const std::filesystem::path p = root_ / path;
        const std::filesystem::path tmp = p.parent_path() / ("." + p.filename().string() + ".tmp");
        std::ofstream(tmp) << text << "\n";
        std::filesystem::rename(tmp, p);
    }
    void remove(const std::string& path) const { std::filesystem::remove_all(root_ / path); }
    void zone(const std::string& zone, const std::string& name, std::uint64_t energy_uj,
              std::uint64_t range_uj = 262143328850) const {
        write("class/powercap/" + zone + "/name", name);
        write("class/powercap/" + zone + "/energy_uj", std::to_string(energy_uj));
        write("class/powercap/" + zone + "/max_energy_range_uj", std::to_string(range_uj));
    }
    std::string root() const { return root_.string(); }

  private:
    std::filesystem::path root_;
};

// A RAPL package zone (intel-rapl:0, "package-0") whose energy_uj a thread sets to watts x the
// time since construction every `tick`, wrapping at `range_uj`: a counter updated every tick at a
// known, steady power.
class SteadyPowerZone {
  public:
    SteadyPowerZone(const SysfsTree& tree, double watts, std::chrono::microseconds tick,
                    std::uint64_t range_uj = 262143328850)
        : tree_(tree), watts_(watts), range_(range_uj), start_(std::chrono::steady_clock::now()) {
        tree_.zone("intel-rapl:0", "package-0", 0, range_uj);
        thread_ = std::thread([this, tick] {
            auto last = std::chrono::steady_clock::now();
            while (!stop_) {
                std::this_thread::sleep_for(tick);
                const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
                tree_.replace("class/powercap/intel-rapl:0/energy_uj",
                              std::to_string(static_cast<std::uint64_t>(s * watts_ * 1e6) % range_));
                const auto now = std::chrono::steady_clock::now();
                const double gap = std::chrono::duration<double>(now - last).count();
                if (gap > longest_gap_) longest_gap_ = gap;
                last = now;
            }
        });
    }
    // The longest time between two finished writes: a busy machine can starve or block the
    // writer, and a count left stale that long is the fixture's fault, not the meter's.
    double longest_gap_seconds() const { return longest_gap_; }
    ~SteadyPowerZone() {
        stop_ = true;
        thread_.join();
    }
    SteadyPowerZone(const SteadyPowerZone&) = delete;
    SteadyPowerZone& operator=(const SteadyPowerZone&) = delete;

  private:
    const SysfsTree& tree_;
    double watts_;
    std::uint64_t range_;
    std::chrono::steady_clock::time_point start_;
    std::atomic<bool> stop_{false};
    std::atomic<double> longest_gap_{0};
    std::thread thread_;
};

}  // namespace clprobe::test

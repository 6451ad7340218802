#pragma once
// Energy over a window of time, from every sensor at once: counters are read at the two ends,
// power samplers are read every `poll` seconds by a thread of the meter and integrated
// (trapezoids). A sensor whose reading fails during the window has no figure for it, and says why.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "system/energy_sensor.hpp"

namespace clprobe {

struct SensorEnergy {
    std::optional<double> joules;
    std::string error;  // why there is no figure: the sensor vanished or failed in the window
};

struct WindowEnergy {
    double seconds = 0;
    bool aligned = false;  // both ends fell on updates of the aligned counter (align_to)
    // How late each end may have seen its update, added: the time between the last reading that
    // still showed the old value and the one that showed the new. Polled every 50 us on a quiet
    // machine; a loaded one can starve the poll for hundreds of milliseconds, which the window's
    // time then lacks while its energy holds it, so the bound grows by it (window_error).
    double edge_seconds = 0;
    std::vector<SensorEnergy> sensors;  // in the order of the meter's sensors
};

class EnergyMeter {
  public:
    EnergyMeter(EnergySensors& sensors, double poll_seconds);

    // Aligns the window's two ends with updates of counter `index` (the coarsest one): start and
    // stop wait, at most `limit_seconds`, until its value changes, so its figure covers exactly
    // the time between two of its updates instead of being up to one interval stale at each end.
    // The wait at the end lies inside the window (time and energy alike).
    void align_to(std::size_t index, double limit_seconds);

    // Reads every counter each `seconds` inside a window too, its value unused: a counter unwinds
    // its wraps between consecutive readings, so a window longer than one wrap (RAPL's range at
    // full power: minutes) would lose whole wraps with a reading at each end only. For windows of
    // unknown length (a traced program's lifetime); 0, the default, reads counters at the ends.
    void read_counters_every(double seconds) { counter_poll_ = seconds; }
    ~EnergyMeter();
    EnergyMeter(const EnergyMeter&) = delete;
    EnergyMeter& operator=(const EnergyMeter&) = delete;

    void start();
    WindowEnergy stop();
    double poll_seconds() const { return poll_; }

  private:
    using Clock = std::chrono::steady_clock;
    void sample_powers(Clock::time_point now);
    void read_counters(Clock::time_point now);
    // Polls the aligned counter until it changes; its new value, or nullopt after the limit.
    // `edge_seconds`: how long before it was seen the change may have happened.
    std::optional<double> wait_for_update(double& edge_seconds);
    void sampler_loop();

    EnergySensors& sensors_;
    double poll_;
    Clock::time_point started_;
    std::optional<std::size_t> align_;
    double counter_poll_ = 0;
    Clock::time_point last_counter_read_;
    double align_limit_ = 0;
    bool start_aligned_ = false;
    double start_edge_ = 0;
    std::vector<std::optional<double>> counter_start_;
    // Power samplers: the last reading and its time, the integral so far, the first error.
    std::vector<std::optional<double>> last_watts_;
    Clock::time_point last_time_;
    std::vector<double> integral_;
    std::vector<std::string> errors_;
    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
};

// How often a counter's value changes, measured: polled for at most `limit_seconds`, the longest of
// up to 5 gaps between consecutive changes (the first change only starts the clock); nullopt when
// it changed fewer than three times (idle, or a reader that failed).
std::optional<double> counter_update_interval(EnergySensor& sensor, double limit_seconds);

// How often a sensor's figure is refreshed, the interval a window's error is stated in: a counter's
// measured update interval, or `limit_seconds` when it did not change often enough to measure
// (an upper bound, said so); a sampler's poll interval, as the meter reads it no more often.
struct SamplingInterval {
    double seconds = 0;
    std::string basis;  // "measured: counter updates", "not measured: ...", "polled by clprobe"
};
SamplingInterval sampling_interval(EnergySensor& sensor, double poll_seconds, double limit_seconds);

// The error bound of a window's energy: each end of the window can be off by up to one sampling
// interval of energy (a counter's last update, a sampler's last sample), so |error| / energy <=
// 2 * interval / window, plus one resolution step per end.
double energy_relative_error(double interval_seconds, double window_seconds, double resolution_joules, double joules);

// The same for a counter the window was aligned to (EnergyMeter::align_to): its two readings fall
// on updates, seen within 0.1 ms each, and the wait for the last update (up to one interval after
// the work) is inside the window: (interval + 2 x 0.1 ms) / window, plus the resolution.
double aligned_relative_error(double interval_seconds, double window_seconds, double resolution_joules, double joules);

// One sensor's bound for one window: aligned_relative_error when the window was aligned to it,
// else energy_relative_error; a sampler's resolution (W) counts over the whole window. An aligned
// window's `edge_seconds` (WindowEnergy) beyond 0.2 ms adds to its bound.
double window_error(const EnergySensor& sensor, bool aligned_to_it, double interval_seconds, double window_seconds,
                    double joules, double edge_seconds = 0);

// The counter to align windows to: the one with the longest interval (the others' bounds are
// smaller by their own intervals); nullopt when no sensor is a counter.
std::optional<std::size_t> coarsest_counter(const EnergySensors& sensors, const std::vector<double>& intervals);

// The window that keeps that bound at `target` (0.05 = 5%): 2 * interval / target.
double window_for_error(double interval_seconds, double target);

}  // namespace clprobe

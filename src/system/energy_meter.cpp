#include "system/energy_meter.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/clock.hpp"

namespace clprobe {

EnergyMeter::EnergyMeter(EnergySensors& sensors, double poll_seconds)
    : sensors_(sensors),
      poll_(poll_seconds),
      counter_start_(sensors.size()),
      last_watts_(sensors.size()),
      integral_(sensors.size()),
      errors_(sensors.size()) {}

EnergyMeter::~EnergyMeter() {
    if (thread_.joinable()) {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
}

void EnergyMeter::align_to(std::size_t index, double limit_seconds) {
    if (index < sensors_.size() && sensors_[index]->kind() == SensorKind::energy_counter) {
        align_ = index;
        align_limit_ = limit_seconds;
    }
}

std::optional<double> EnergyMeter::wait_for_update(double& edge_seconds) {
    const auto begin = Clock::now();
    auto before_old = begin;  // when the last reading that showed the old value began
    const SensorReading first = sensors_[*align_]->read();
    if (!first.value) return std::nullopt;
    while (std::chrono::duration<double>(Clock::now() - begin).count() < align_limit_) {
        // Far shorter than any counter's update interval (RAPL: about 1 ms), so an update is seen
        // within this step of when it happened, unless the machine keeps this thread waiting.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
        const auto before = Clock::now();
        const SensorReading r = sensors_[*align_]->read();
        if (!r.value) return std::nullopt;
        if (*r.value != *first.value) {
            edge_seconds = std::chrono::duration<double>(Clock::now() - before_old).count();
            return r.value;
        }
        before_old = before;
    }
    return std::nullopt;
}

void EnergyMeter::start() {
    bool samplers = false;
    std::fill(integral_.begin(), integral_.end(), 0.0);
    std::fill(errors_.begin(), errors_.end(), std::string());
    std::optional<double> aligned;
    start_edge_ = 0;
    if (align_) aligned = wait_for_update(start_edge_);
    start_aligned_ = aligned.has_value();
    started_ = Clock::now();
    last_time_ = started_;
    last_counter_read_ = started_;
    for (std::size_t i = 0; i < sensors_.size(); ++i) {
        if (aligned && i == *align_) {
            counter_start_[i] = aligned;
            continue;
        }
        const SensorReading r = sensors_[i]->read();
        if (!r.value) errors_[i] = r.error;
        if (sensors_[i]->kind() == SensorKind::energy_counter) {
            counter_start_[i] = r.value;
        } else {
            last_watts_[i] = r.value;
            samplers = true;
        }
    }
    stopping_ = false;
    if (samplers || counter_poll_ > 0) thread_ = std::thread([this] { sampler_loop(); });
}

void EnergyMeter::sample_powers(Clock::time_point now) {
    const double dt = std::chrono::duration<double>(now - last_time_).count();
    for (std::size_t i = 0; i < sensors_.size(); ++i) {
        if (sensors_[i]->kind() != SensorKind::power_sampler || !last_watts_[i]) continue;
        const SensorReading r = sensors_[i]->read();
        if (!r.value) {
            if (errors_[i].empty()) errors_[i] = r.error;
            last_watts_[i].reset();
            continue;
        }
        integral_[i] += 0.5 * (*last_watts_[i] + *r.value) * dt;
        last_watts_[i] = r.value;
    }
    last_time_ = now;
}

void EnergyMeter::read_counters(Clock::time_point now) {
    if (!(counter_poll_ > 0) || std::chrono::duration<double>(now - last_counter_read_).count() < counter_poll_) return;
    last_counter_read_ = now;
    for (std::size_t i = 0; i < sensors_.size(); ++i) {
        if (sensors_[i]->kind() != SensorKind::energy_counter || !counter_start_[i]) continue;
        // A failed reading here means the end's reading has no continuous history: keep the first
        // error, so the window says why it has no figure even if the sensor comes back.
        const SensorReading r = sensors_[i]->read();
        if (!r.value && errors_[i].empty()) errors_[i] = r.error;
    }
}

void EnergyMeter::sampler_loop() {
    std::unique_lock lock(mutex_);
    // Counters alone need no 10 ms polling: wake at their own period then.
    const bool samplers = std::any_of(sensors_.begin(), sensors_.end(),
                                      [](const auto& s) { return s->kind() == SensorKind::power_sampler; });
    const double period = samplers ? poll_ : counter_poll_;
    while (!stopping_) {
        wake_.wait_for(lock, std::chrono::duration<double>(period), [this] { return stopping_; });
        if (stopping_) break;
        const auto now = Clock::now();
        sample_powers(now);
        read_counters(now);
    }
}

WindowEnergy EnergyMeter::stop() {
    if (thread_.joinable()) {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        wake_.notify_all();
        thread_.join();
    }
    std::optional<double> aligned;
    double end_edge = 0;
    if (align_) aligned = wait_for_update(end_edge);
    const auto ended = Clock::now();
    sample_powers(ended);  // the samplers' last piece, up to the end of the window
    WindowEnergy out;
    out.aligned = start_aligned_ && aligned.has_value();
    out.edge_seconds = start_edge_ + end_edge;
    out.sensors.resize(sensors_.size());
    for (std::size_t i = 0; i < sensors_.size(); ++i) {
        SensorEnergy& e = out.sensors[i];
        if (sensors_[i]->kind() == SensorKind::energy_counter) {
            const SensorReading r = aligned && i == *align_ ? SensorReading{aligned, {}} : sensors_[i]->read();
            if (!r.value && errors_[i].empty()) errors_[i] = r.error;
            if (counter_start_[i] && r.value && errors_[i].empty()) e.joules = *r.value - *counter_start_[i];
        } else if (last_watts_[i] && errors_[i].empty()) {
            e.joules = integral_[i];
        }
        if (!e.joules) e.error = errors_[i].empty() ? "no reading" : errors_[i];
    }
    out.seconds = std::chrono::duration<double>(ended - started_).count();
    return out;
}

std::optional<double> counter_update_interval(EnergySensor& sensor, double limit_seconds) {
    const auto start = std::chrono::steady_clock::now();
    std::optional<double> last_value;
    std::optional<std::chrono::steady_clock::time_point> last_change;
    std::vector<double> gaps;
    while (seconds_since(start) < limit_seconds && gaps.size() < 5) {
        const SensorReading r = sensor.read();
        if (!r.value) return std::nullopt;
        const auto now = std::chrono::steady_clock::now();
        if (last_value && *r.value != *last_value) {
            if (last_change) gaps.push_back(std::chrono::duration<double>(now - *last_change).count());
            last_change = now;
        }
        last_value = r.value;
        // Polled far faster than any counter updates (RAPL: about 1 ms), so a gap is measured to
        // within this step.
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    if (gaps.size() < 2) return std::nullopt;
    // The longest gap, not the median: the error bound must hold for a counter updated unevenly
    // (a loaded machine delays a driver's update work too).
    return *std::max_element(gaps.begin(), gaps.end());
}

SamplingInterval sampling_interval(EnergySensor& sensor, double poll_seconds, double limit_seconds) {
    if (sensor.kind() == SensorKind::power_sampler) return {poll_seconds, "power polled by clprobe at this interval"};
    if (const auto measured = counter_update_interval(sensor, limit_seconds))
        return {*measured, "measured: the longest of 5 gaps between counter updates"};
    return {limit_seconds,
            "not measured (the counter changed fewer than 3 times): taken as the polling time, an "
            "upper bound"};
}

double energy_relative_error(double interval_seconds, double window_seconds, double resolution_joules, double joules) {
    if (!(window_seconds > 0) || !(joules > 0)) return std::numeric_limits<double>::infinity();
    return 2 * interval_seconds / window_seconds + 2 * resolution_joules / joules;
}

double aligned_relative_error(double interval_seconds, double window_seconds, double resolution_joules, double joules) {
    if (!(window_seconds > 0) || !(joules > 0)) return std::numeric_limits<double>::infinity();
    return (interval_seconds + 2e-4) / window_seconds + 2 * resolution_joules / joules;
}

double window_error(const EnergySensor& sensor, bool aligned_to_it, double interval_seconds, double window_seconds,
                    double joules, double edge_seconds) {
    const double resolution =
        sensor.kind() == SensorKind::power_sampler ? sensor.resolution() * window_seconds : sensor.resolution();
    if (!aligned_to_it) return energy_relative_error(interval_seconds, window_seconds, resolution, joules);
    // The ends' detection beyond the 0.2 ms aligned_relative_error already allows (WindowEnergy).
    const double late = std::max(0.0, edge_seconds - 2e-4);
    return aligned_relative_error(interval_seconds, window_seconds, resolution, joules) + late / window_seconds;
}

std::optional<std::size_t> coarsest_counter(const EnergySensors& sensors, const std::vector<double>& intervals) {
    std::optional<std::size_t> best;
    for (std::size_t i = 0; i < sensors.size() && i < intervals.size(); ++i)
        if (sensors[i]->kind() == SensorKind::energy_counter && (!best || intervals[i] > intervals[*best])) best = i;
    return best;
}

double window_for_error(double interval_seconds, double target) {
    return 2 * interval_seconds / target;
}

}  // namespace clprobe

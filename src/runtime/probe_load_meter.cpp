#include "runtime/probe_load_meter.hpp"

#include <unistd.h>

#include <chrono>

#include "system/activity_snapshot.hpp"
#include "system/affinity.hpp"

namespace clprobe {

namespace {

double now_seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double clock_ticks_per_second() {
    const long hz = ::sysconf(_SC_CLK_TCK);
    return hz > 0 ? static_cast<double>(hz) : 100.0;
}

}  // namespace

ProbeLoadMeter::ProbeLoadMeter() : counted_(process_affinity()), hz_(clock_ticks_per_second()) {}

void ProbeLoadMeter::start() {
    first_ = take_activity_snapshot(files_, counted_, now_seconds());
}

std::optional<HostLoad> ProbeLoadMeter::stop() {
    if (!first_) return std::nullopt;
    const ActivitySnapshot last = take_activity_snapshot(files_, counted_, now_seconds());
    auto load = host_load_between(*first_, last, static_cast<int>(::getpid()), hz_);
    first_.reset();
    return load;
}

}  // namespace clprobe

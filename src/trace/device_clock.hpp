#pragma once
// Places device timestamps on the host's clock. Each device has its own clock; a command's QUEUED
// timestamp is taken while its enqueue call runs on the host, so the median of (host time of the
// call's middle - QUEUED) over a device's commands is that device's clock offset, robust to the
// odd command the driver queued late.
#include <cstdint>
#include <optional>
#include <vector>

#include "trace/program_trace.hpp"

namespace clprobe {

struct HostSpan {
    std::uint64_t begin = 0, end = 0;  // host clock, ns
    double seconds() const { return static_cast<double>(end - begin) * 1e-9; }
};

struct AlignedTimes {
    std::vector<std::optional<HostSpan>> spans;  // per command of the trace, in its order
    std::uint64_t missing = 0;                   // commands without usable device times
};

// Each command's device execution (START..END) on the host clock, clipped to [begin, end] (the
// child's lifetime); absent when the layer never read its times or the command failed.
AlignedTimes align_device_times(const ProgramTrace& trace, std::uint64_t begin, std::uint64_t end);

}  // namespace clprobe

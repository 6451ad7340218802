#pragma once
// Timing of enqueued commands: device time from event profiling when the queue has it, else the
// host's steady clock around enqueue + finish. Each result says which timer it used.
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

#include "cl/cl_api.hpp"
#include "core/report.hpp"

namespace clprobe {

struct TimedBatch {
    double seconds = 0;  // time for the whole batch
    TimerKind timer = TimerKind::host_steady_clock;
};

// END - START of one profiled command, in seconds.
double command_seconds(const cl::Event& event);
// START - QUEUED of one profiled command, in seconds.
double queued_to_start_seconds(const cl::Event& event);

// Enqueues `count` commands with `enqueue_one` (which returns the command's event), waits for
// them, and returns the sum of their device execution times, or the host time when not profiling.
// `label` names the commands in the --trace timeline (e.g. the kernel).
TimedBatch time_commands(cl::CommandQueue& queue, bool profiling, std::int64_t count,
                         const std::function<cl::Event()>& enqueue_one, std::string_view label = {});

// The same for steps of several commands: `enqueue_step` enqueues one step and appends each
// command's event; a batch of `count` steps takes the sum of all their device times (the host
// time without profiling). A kernel copy's step is map + unmap + kernel.
TimedBatch time_command_steps(cl::CommandQueue& queue, bool profiling, std::int64_t count,
                              const std::function<void(std::vector<cl::Event>&)>& enqueue_step,
                              std::string_view label = {});

}  // namespace clprobe

#include "cl/command_timing.hpp"

#include <chrono>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "core/child_channel.hpp"
#include "core/stop_points.hpp"

namespace clprobe {

namespace {
// The spec gives profiling data only for a completed command, and a blocking write may return
// before its event is CL_COMPLETE (Intel's CPU runtime does, 500 of 500 times): wait first, once
// per command. On an event that is already complete the wait costs one status query.
void wait_complete(const cl::Event& e) {
    cl_event raw = e();
    cl_check(clWaitForEvents(1, &raw), "clWaitForEvents");
}

cl_ulong profile(const cl::Event& e, cl_profiling_info what) {
    cl_ulong v = 0;
    cl_check(clGetEventProfilingInfo(e(), what, sizeof v, &v, nullptr), "clGetEventProfilingInfo");
    return v;
}
}  // namespace

double command_seconds(const cl::Event& e) {
    wait_complete(e);
    const cl_ulong start = profile(e, CL_PROFILING_COMMAND_START), end = profile(e, CL_PROFILING_COMMAND_END);
    return end > start ? static_cast<double>(end - start) * 1e-9 : 0.0;
}

double queued_to_start_seconds(const cl::Event& e) {
    wait_complete(e);
    const cl_ulong queued = profile(e, CL_PROFILING_COMMAND_QUEUED), start = profile(e, CL_PROFILING_COMMAND_START);
    return start > queued ? static_cast<double>(start - queued) * 1e-9 : 0.0;
}

TimedBatch time_command_steps(cl::CommandQueue& queue, bool profiling, std::int64_t count,
                              const std::function<void(std::vector<cl::Event>&)>& enqueue_step,
                              std::string_view label) {
    // Where an isolated probe was if the driver never returns from this batch (a no-op in process).
    drop_breadcrumb(label.empty() ? std::string_view("a timed batch of commands") : label);
    std::vector<cl::Event> events;
    if (profiling) events.reserve(static_cast<std::size_t>(count));
    const auto start = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < count; ++i) {
        // Every 64 steps: cheap enough for microsecond kernels, prompt enough for long ones.
        if (i % 64 == 0) check_stop();
        enqueue_step(events);
        if (!profiling) events.clear();
    }
    cl_check(clFinish(queue()), "clFinish");
    const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!profiling) return {host, TimerKind::host_steady_clock};
    double device = 0;
    auto& trace = CommandTrace::instance();
    for (const auto& e : events) {
        device += command_seconds(e);
        trace.record(e, label);
    }
    // A driver that reports zero-length commands has no usable profiling: say so via the timer.
    if (device <= 0) return {host, TimerKind::host_steady_clock};
    return {device, TimerKind::device_profiling};
}

TimedBatch time_commands(cl::CommandQueue& queue, bool profiling, std::int64_t count,
                         const std::function<cl::Event()>& enqueue_one, std::string_view label) {
    return time_command_steps(
        queue, profiling, count, [&](std::vector<cl::Event>& events) { events.push_back(enqueue_one()); }, label);
}

}  // namespace clprobe

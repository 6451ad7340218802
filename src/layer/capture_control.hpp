#pragma once
// When the layer records commands: always (the default), inside a fixed window of the host clock
// (`clprobe trace --delay/--duration`), or while a window opened from outside is open (`--capture
// dormant`). Outside a window the enqueue and wait hooks only forward the call: no event, no
// staging, no record; objects (queues, kernels, buffers, builds) are still recorded, so a window
// opened later can name what it sees.
//
// Environment (set by clprobe, inherited by every process of the job):
//   CLPROBE_TRACE_WINDOW   "<from_ns>:<to_ns>" on CLOCK_MONOTONIC; commands enqueued in [from, to)
//   CLPROBE_TRACE_CONTROL  a control file, appended to by clprobe (SIGUSR1) or `clprobe
//                          trace-window`: lines "open <t_ns>" / "close <t_ns>", the last one is
//                          the state (an empty file: closed). The layer looks at the file's size at
//                          most every control_poll_ns, so every process of the job, forked
//                          children included, follows it without being signalled.
#include <atomic>
#include <cstdint>

#include "layer/layer_state.hpp"

namespace clprobe::layer {

inline constexpr uint64_t control_poll_ns = 10'000'000;

// Set at clInitLayer when a window or a control file restricts recording.
extern std::atomic<bool> g_capture_gated;

// Reads the environment above (clInitLayer).
void init_capture_control();

// Whether a command enqueued at `now` is inside a window (polls the control file when due).
bool capture_open_slow(uint64_t now);

// The gate of the enqueue and wait hooks: recording, and inside a window.
inline bool capturing() {
    if (!recording()) return false;
    return !g_capture_gated.load(std::memory_order_relaxed) || capture_open_slow(now_ns());
}

}  // namespace clprobe::layer

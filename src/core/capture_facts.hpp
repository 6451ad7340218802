#pragma once
// What `clprobe trace` captured of the program (docs/trace.md, "Capture windows and bounded
// space"): the windows the analysis covers (--delay/--duration, or windows opened on demand) and,
// under --max-size, how the layer thinned its timeline while keeping exact per-kernel and
// per-transfer totals. Part of TraceFacts ("capture"); absent when everything was recorded.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct CaptureWindowFacts {
    double begin_seconds = 0, end_seconds = 0;  // since the program started
    std::uint64_t opencl_commands = 0;          // in the timeline, enqueued inside the window
};

struct CaptureFacts {
    std::string mode = "all";  // all, window (--delay/--duration), dormant (windows on demand)
    std::vector<CaptureWindowFacts> windows;
    // Bounded space.
    bool limited = false;
    double max_bytes = 0;                   // --max-size
    double records_bytes = 0;               // what the record streams hold
    std::uint64_t timeline_commands = 0;    // commands with records of their own
    std::uint64_t aggregated_commands = 0;  // counted in totals only (sampled out)
    std::uint64_t max_period = 1;           // at the sparsest, 1 in max_period commands kept
    std::uint64_t dropped_writes = 0;       // writes refused at the limit
    std::optional<double> sampled_since_seconds;

    // The share of the commands the timeline holds (1 when nothing was sampled out).
    double timeline_fraction() const;
};

nlohmann::json to_json(const CaptureFacts& c);
CaptureFacts capture_facts_from_json(const nlohmann::json& j);

}  // namespace clprobe

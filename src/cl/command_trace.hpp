#pragma once
// A timeline of every timed OpenCL command of a run (diagnose --trace FILE), as Chrome
// trace-event JSON that Perfetto and chrome://tracing open: for each command, the time it waited
// in the queue (queued -> start) and the time it ran (start -> end), from the device's own
// profiling timestamps, labelled with the probe that issued it.
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cl/cl_api.hpp"

namespace clprobe {

class CommandTrace {
  public:
    static CommandTrace& instance();

    void enable(bool on);
    bool enabled() const { return enabled_; }
    // The probe now issuing commands (the runner sets it).
    void set_probe(std::string probe_id);
    // Records a completed, profiled command; does nothing when tracing is off or the event has no
    // profiling information.
    void record(const cl::Event& event, std::string_view label);

    // The entries as recorded ([[probe, label, command, queued, submit, start, end], ...]): how an
    // isolated probe's child hands its commands to the parent, which adds them to its own.
    nlohmann::json raw_entries() const;
    void add_entries(const nlohmann::json& raw);
    // Drops the entries recorded so far (an isolated child sent them to its parent).
    void clear();

    // {"traceEvents": [...], "metadata": {...}}
    nlohmann::json to_json() const;
    std::size_t size() const;

  private:
    struct Entry {
        std::string probe, label, command;
        std::uint64_t queued = 0, submit = 0, start = 0, end = 0;  // device clock, ns
    };
    // Bounds memory on runs of millions of tiny launches; what is dropped is counted.
    static constexpr std::size_t max_entries = 200000;

    mutable std::mutex mutex_;
    bool enabled_ = false;
    std::string probe_;
    std::vector<Entry> entries_;
    std::size_t dropped_ = 0;
};

}  // namespace clprobe

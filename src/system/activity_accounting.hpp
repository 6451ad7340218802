#pragma once
// Turns /proc snapshots into an ActivitySummary: pure bookkeeping, so unit tests can feed it
// synthetic snapshots (processes that start, exit or reuse a pid mid-window).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "system/activity.hpp"
#include "system/proc_parse.hpp"

namespace clprobe {

struct ProcessSample {
    int pid = 0;
    int ppid = 0;
    std::uint64_t start_ticks = 0;  // with pid, identifies the process across pid reuse
    std::string comm;
    std::uint64_t cpu_ticks = 0;  // utime + stime
    int processor = -1;           // CPU it last ran on; -1 unknown
    bool kernel_thread = false;
};

struct ActivitySnapshot {
    double seconds = 0;         // steady-clock time of the snapshot
    double uptime_seconds = 0;  // /proc/uptime then: tells processes started in the window from older ones
    int online_cpus = 0;
    std::map<int, CpuTimes> cpus;  // the counted CPUs' /proc/stat lines
    std::uint64_t self_ticks = 0;  // clprobe's utime + stime + cutime + cstime (reaped children)
    std::vector<ProcessSample> processes;
    std::optional<std::uint64_t> swap_in_pages, swap_out_pages;
};

class ActivityAccounting {
  public:
    ActivityAccounting(int self_pid, double ticks_per_second) : self_pid_(self_pid), hz_(ticks_per_second) {}

    // The first snapshot is the baseline; later ones extend the window.
    void add(const ActivitySnapshot& s);
    // The window so far; `top` is how many other processes to name.
    ActivitySummary summary(std::size_t top = 5) const;

  private:
    struct Tracked {
        std::string comm;
        std::uint64_t baseline = 0;  // ticks it had when the window started (0 if it started inside it)
        std::uint64_t last = 0;
        std::uint64_t on_counted = 0;  // ticks of intervals that ended with it on a counted CPU
        bool kernel_thread = false;
        bool descendant = false;  // clprobe's own child (a compiler the driver runs): counts as clprobe
        bool alive = false;       // seen in the latest snapshot
    };
    bool is_descendant(int pid, const std::map<int, int>& parent_of) const;

    int self_pid_;
    double hz_;
    int samples_ = 0;
    std::optional<ActivitySnapshot> first_, last_;  // without their process lists
    std::map<std::pair<int, std::uint64_t>, Tracked> processes_;
};

}  // namespace clprobe

#pragma once
// The layer's own capture work (C records: its waits, reads and files around a captured launch for
// --work and --replay) is not the program's time. The analysis sees the program as if it had not
// happened: every host time after a captured interval moves back by the interval's length, and a
// time inside one moves to its start (docs/trace.md, "What it costs, and what the program sees").
// Pure.
#include <cstdint>
#include <utility>
#include <vector>

#include "trace/device_clock.hpp"
#include "trace/program_trace.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

// The capture's intervals to cut from `trace` run over [run.start_ns, run.end_ns], `aligned` its
// device spans on the host clock.
class TimeCut;
TimeCut capture_cut(const ProgramTrace& trace, const AlignedTimes& aligned, const ChildRun& run);

class TimeCut {
  public:
    using Intervals = std::vector<std::pair<std::uint64_t, std::uint64_t>>;
    // The intervals, merged and clipped to [begin, end] (the program's lifetime), less the times the
    // device ran the program's own commands (`busy`): the capture's first wait lets the program's
    // queued work finish, which is the program's time, not the capture's.
    TimeCut(Intervals intervals, std::uint64_t begin, std::uint64_t end, Intervals busy = {});

    std::uint64_t map(std::uint64_t t) const;
    std::uint64_t total_ns() const { return total_; }
    bool empty() const { return cuts_.empty(); }

    // The trace with every host time mapped (device times stay on the device's clock).
    ProgramTrace apply(const ProgramTrace& trace) const;
    // Device execution spans already on the host clock, mapped.
    AlignedTimes apply(const AlignedTimes& aligned) const;
    ChildRun apply(const ChildRun& run) const;

  private:
    std::vector<std::pair<std::uint64_t, std::uint64_t>> cuts_;  // disjoint, ascending
    std::vector<std::uint64_t> before_;                          // total cut before each interval
    std::uint64_t total_ = 0;
};

}  // namespace clprobe

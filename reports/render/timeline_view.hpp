#pragma once
// What the HTML timeline draws, read from trace.program's "timeline" attribute
// (src/trace/trace_lanes.hpp): rows for the command queues and, per host thread, one row per
// activity (enqueue calls, waits, builds), and the device's idle gaps classified by what the host
// was doing meanwhile, which is how the trace findings speak of them (host waiting, building, or
// busy elsewhere). Pure: render/html_timeline.cpp draws it.
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/report.hpp"

namespace clprobe::html {

struct TimelineSpan {
    double start = 0, end = 0;
    std::string kind;  // kernel, transfer (queues); enqueue, wait, build (host threads)
    std::string name;  // "8 x add_one" where neighbours were merged
};

struct TimelineRow {
    std::string kind;      // "queue" or "thread"
    std::string name;      // "queue 0 (device)", "host thread 1"
    std::string activity;  // a host thread's row: enqueue, wait or build; empty for queues
    std::vector<TimelineSpan> spans;
};

// Queue rows first, then each host thread's rows in the order enqueue, wait, build. Reports
// written before threads had a row per activity (one lane with every kind) are split by kind here;
// their spans merged across kinds keep the kind that covered more time.
std::vector<TimelineRow> timeline_rows(const nlohmann::json& timeline);

enum class GapKind { host_wait, build, host_work };

struct TimelineGap {
    double start = 0, end = 0;
    GapKind kind = GapKind::host_work;
};

// A queue row's idle gaps within [from, to], at least min_seconds long (narrower ones cannot be
// seen), the largest max_gaps, each classified by the host rows over it: mostly waiting, mostly
// building, else the host working elsewhere.
std::vector<TimelineGap> idle_gaps(const TimelineRow& queue, const std::vector<TimelineRow>& rows, double from,
                                   double to, double min_seconds, std::size_t max_gaps = 300);

// The findings that speak of each kind of gap, by their evidence (app.sync.* for waits, builds,
// the device's busy share or the host stages): the legend links them.
std::vector<const Finding*> findings_about(const RunReport& report, GapKind kind);

// The window of `width` seconds in [0, wall] where the queues were busiest.
std::pair<double, double> busiest_window(const std::vector<TimelineRow>& rows, double wall, double width);

}  // namespace clprobe::html

#include "render/timeline_view.hpp"

#include <algorithm>
#include <map>

namespace clprobe::html {

namespace {

constexpr const char* activity_order[] = {"enqueue", "wait", "build"};

std::size_t activity_rank(const std::string& activity) {
    const auto* at = std::find(std::begin(activity_order), std::end(activity_order), activity);
    return static_cast<std::size_t>(at - std::begin(activity_order));
}

std::vector<TimelineSpan> spans_of(const nlohmann::json& lane) {
    std::vector<TimelineSpan> spans;
    if (!lane.contains("spans") || !lane["spans"].is_array()) return spans;
    for (const auto& s : lane["spans"])
        if (s.is_array() && s.size() == 4 && s[0].is_number() && s[1].is_number())
            spans.push_back({s[0].get<double>(), s[1].get<double>(), s[2].is_string() ? s[2].get<std::string>() : "",
                             s[3].is_string() ? s[3].get<std::string>() : ""});
    return spans;
}

double overlap(const TimelineRow& row, double a, double b) {
    double sum = 0;
    for (const auto& s : row.spans)
        sum += std::max(0.0, std::min(b, s.end) - std::max(a, s.start));
    return sum;
}

bool has_stage(const Evidence& e, std::initializer_list<const char*> stages) {
    const auto it = e.labels.find("stage");
    if (e.metric != "app.pipeline.stage_time" || it == e.labels.end()) return false;
    return std::any_of(stages.begin(), stages.end(), [&](const char* s) { return it->second == s; });
}

bool speaks_of(const Finding& f, GapKind kind) {
    if (f.layer != "trace") return false;
    for (const auto& e : f.evidence) {
        switch (kind) {
            case GapKind::host_wait:
                if (e.metric.rfind("app.sync.", 0) == 0 || has_stage(e, {"host_wait"})) return true;
                break;
            case GapKind::build:
                if (e.metric == "kernel.build.time" || has_stage(e, {"build"})) return true;
                break;
            case GapKind::host_work:
                if (e.metric == "app.device.busy_fraction" || has_stage(e, {"host", "device_idle"})) return true;
                break;
        }
    }
    return false;
}

}  // namespace

std::vector<TimelineRow> timeline_rows(const nlohmann::json& timeline) {
    std::vector<TimelineRow> queues, threads;
    if (!timeline.contains("lanes") || !timeline["lanes"].is_array()) return queues;
    for (const auto& l : timeline["lanes"]) {
        TimelineRow row{l.value("kind", ""), l.value("name", ""), l.value("activity", ""), spans_of(l)};
        if (row.kind != "thread") {
            queues.push_back(std::move(row));
        } else if (!row.activity.empty()) {
            threads.push_back(std::move(row));
        } else {
            // An older report: one lane per thread with every kind in it.
            std::map<std::string, TimelineRow> by_kind;
            for (auto& s : row.spans) {
                auto& sub = by_kind.try_emplace(s.kind, TimelineRow{row.kind, row.name, s.kind, {}}).first->second;
                sub.spans.push_back(std::move(s));
            }
            for (auto& [kind, sub] : by_kind)
                threads.push_back(std::move(sub));
        }
    }
    // Rows of one thread together, its activities in a fixed order, threads as the trace listed them.
    std::vector<std::string> thread_order;
    for (const auto& t : threads)
        if (std::find(thread_order.begin(), thread_order.end(), t.name) == thread_order.end())
            thread_order.push_back(t.name);
    std::stable_sort(threads.begin(), threads.end(), [&](const TimelineRow& a, const TimelineRow& b) {
        const auto ia = std::find(thread_order.begin(), thread_order.end(), a.name);
        const auto ib = std::find(thread_order.begin(), thread_order.end(), b.name);
        return ia != ib ? ia < ib : activity_rank(a.activity) < activity_rank(b.activity);
    });
    for (auto& t : threads)
        queues.push_back(std::move(t));
    return queues;
}

std::vector<TimelineGap> idle_gaps(const TimelineRow& queue, const std::vector<TimelineRow>& rows, double from,
                                   double to, double min_seconds, std::size_t max_gaps) {
    std::vector<TimelineGap> gaps;
    for (std::size_t i = 1; i < queue.spans.size(); ++i) {
        const double a = std::max(from, queue.spans[i - 1].end), b = std::min(to, queue.spans[i].start);
        if (b - a >= min_seconds && b > a) gaps.push_back({a, b, GapKind::host_work});
    }
    std::sort(gaps.begin(), gaps.end(), [](auto& x, auto& y) { return x.end - x.start > y.end - y.start; });
    if (gaps.size() > max_gaps) gaps.resize(max_gaps);
    for (auto& g : gaps) {
        double waiting = 0, building = 0;
        for (const auto& r : rows) {
            if (r.activity == "wait") waiting = std::max(waiting, overlap(r, g.start, g.end));
            if (r.activity == "build") building = std::max(building, overlap(r, g.start, g.end));
        }
        const double half = (g.end - g.start) / 2;
        g.kind = waiting >= half ? GapKind::host_wait : building >= half ? GapKind::build : GapKind::host_work;
    }
    return gaps;
}

std::vector<const Finding*> findings_about(const RunReport& report, GapKind kind) {
    std::vector<const Finding*> out;
    for (const auto& f : report.findings)
        if (speaks_of(f, kind)) out.push_back(&f);
    return out;
}

std::pair<double, double> busiest_window(const std::vector<TimelineRow>& rows, double wall, double width) {
    double best_at = 0, best = -1;
    for (int step = 0; step <= 100; ++step) {
        const double a = (wall - width) * step / 100.0, b = a + width;
        double busy = 0;
        for (const auto& r : rows)
            if (r.kind == "queue") busy += overlap(r, a, b);
        if (busy > best) best = busy, best_at = a;
    }
    return {best_at, best_at + width};
}

}  // namespace clprobe::html

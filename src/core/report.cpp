#include "core/report.hpp"

namespace clprobe {

namespace {
template <typename E, std::size_t N>
std::optional<E> parse_enum(std::string_view s, const std::pair<E, std::string_view> (&table)[N]) {
    for (const auto& [value, name] : table)
        if (name == s) return value;
    return std::nullopt;
}
template <typename E, std::size_t N>
std::string_view enum_name(E e, const std::pair<E, std::string_view> (&table)[N]) {
    for (const auto& [value, name] : table)
        if (value == e) return name;
    return "unknown";
}

constexpr std::pair<ProbeStatus, std::string_view> status_names[] = {
    {ProbeStatus::ok, "ok"},       {ProbeStatus::unsupported, "unsupported"}, {ProbeStatus::skipped, "skipped"},
    {ProbeStatus::error, "error"}, {ProbeStatus::crashed, "crashed"},         {ProbeStatus::timed_out, "timed_out"}};
constexpr std::pair<TimerKind, std::string_view> timer_names[] = {{TimerKind::device_profiling, "device_profiling"},
                                                                  {TimerKind::host_steady_clock, "host_steady_clock"},
                                                                  {TimerKind::none, "none"}};
constexpr std::pair<Severity, std::string_view> severity_names[] = {
    {Severity::info, "info"}, {Severity::low, "low"}, {Severity::medium, "medium"}, {Severity::high, "high"}};

}  // namespace

bool labels_contain(const Labels& have, const Labels& want) {
    for (const auto& [k, v] : want) {
        auto it = have.find(k);
        if (it == have.end() || it->second != v) return false;
    }
    return true;
}

std::string_view to_string(ProbeStatus s) {
    return enum_name(s, status_names);
}
std::string_view to_string(TimerKind t) {
    return enum_name(t, timer_names);
}
std::string_view to_string(Severity s) {
    return enum_name(s, severity_names);
}
std::optional<ProbeStatus> probe_status_from(std::string_view s) {
    return parse_enum(s, status_names);
}
std::optional<TimerKind> timer_kind_from(std::string_view s) {
    return parse_enum(s, timer_names);
}
std::optional<Severity> severity_from(std::string_view s) {
    return parse_enum(s, severity_names);
}

Measurement make_measurement(std::string metric, std::string unit, Labels labels, std::vector<double> samples,
                             TimerKind timer, bool higher_is_better) {
    Measurement m;
    m.metric = std::move(metric);
    m.unit = std::move(unit);
    m.labels = std::move(labels);
    m.summary = summarize(samples);
    m.samples = std::move(samples);
    m.timer = timer;
    m.higher_is_better = higher_is_better;
    return m;
}

RunReport pass_as_report(const RunReport& report, const RunPass& pass) {
    RunReport out;
    out.tool_version = report.tool_version;
    out.provenance = report.provenance;
    out.created_at = pass.started_at;
    out.command_line = report.command_line;
    out.options = report.options;
    out.host = report.host;
    out.device = report.device;
    if (out.device) out.device->name = pass.device;
    out.results = pass.results;
    out.complete = pass.complete;
    out.wall_seconds = pass.wall_seconds;
    out.launch = report.launch;
    out.drift = pass.drift;
    return out;
}

const Measurement* find_measurement(const ProbeResult& result, std::string_view metric, const Labels& labels) {
    for (const auto& m : result.measurements)
        if (m.metric == metric && labels_contain(m.labels, labels)) return &m;
    return nullptr;
}

const Measurement* find_measurement(const RunReport& report, std::string_view metric, const Labels& labels) {
    for (const auto& r : report.results)
        if (const auto* m = find_measurement(r, metric, labels)) return m;
    return nullptr;
}

const ProbeResult* find_result(const RunReport& report, std::string_view probe_id) {
    for (const auto& r : report.results)
        if (r.id == probe_id) return &r;
    return nullptr;
}

std::vector<const Measurement*> find_measurements(const RunReport& report, std::string_view metric,
                                                  const Labels& labels) {
    std::vector<const Measurement*> out;
    for (const auto& r : report.results)
        for (const auto& m : r.measurements)
            if (m.metric == metric && labels_contain(m.labels, labels)) out.push_back(&m);
    return out;
}

const Measurement* best_median(const std::vector<const Measurement*>& measurements) {
    const Measurement* best = nullptr;
    for (const auto* m : measurements)
        if (!best ||
            (m->higher_is_better ? m->summary.median > best->summary.median : m->summary.median < best->summary.median))
            best = m;
    return best;
}

std::string labels_to_string(const Labels& labels) {
    std::string out;
    for (const auto& [k, v] : labels) {
        if (!out.empty()) out += ',';
        out += k;
        out += '=';
        out += v;
    }
    return out;
}

std::string labelled_metric(std::string_view metric, const Labels& labels) {
    if (labels.empty()) return std::string(metric);
    return std::string(metric) + "{" + labels_to_string(labels) + "}";
}

}  // namespace clprobe

#include "render/csv_export.hpp"

#include <fmt/core.h>

#include <vector>

namespace clprobe {

namespace {

// Summary columns after the labels; a label key never collides with them because label columns
// carry a "label." prefix.
constexpr const char* summary_columns[] = {"unit",
                                           "median",
                                           "cv",
                                           "n",
                                           "mean",
                                           "min",
                                           "max",
                                           "stddev",
                                           "ci95_low",
                                           "ci95_high",
                                           "higher_is_better",
                                           "timer",
                                           "iterations_per_sample",
                                           "note"};

void append_row(std::string& out, const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) out += ',';
        out += csv_field(fields[i]);
    }
    out += "\r\n";
}

std::vector<std::string> header(const std::set<std::string>& keys) {
    std::vector<std::string> row{"probe", "metric"};
    for (const auto& k : keys)
        row.push_back("label." + k);
    for (const char* c : summary_columns)
        row.emplace_back(c);
    return row;
}

std::vector<std::string> row_of(const ProbeResult& p, const Measurement& m, const std::set<std::string>& keys) {
    std::vector<std::string> row{p.id, m.metric};
    for (const auto& k : keys) {
        const auto it = m.labels.find(k);
        row.push_back(it == m.labels.end() ? std::string() : it->second);
    }
    const Summary& s = m.summary;
    for (const std::string& v :
         {m.unit, csv_number(s.median), csv_number(s.cv), std::to_string(s.n), csv_number(s.mean), csv_number(s.min),
          csv_number(s.max), csv_number(s.stddev), csv_number(s.ci95_low), csv_number(s.ci95_high),
          std::string(m.higher_is_better ? "true" : "false"), std::string(to_string(m.timer)),
          std::to_string(m.iterations_per_sample), m.note})
        row.push_back(v);
    return row;
}

}  // namespace

std::string csv_field(std::string_view text) {
    if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
    std::string out = "\"";
    for (const char c : text) {
        if (c == '"') out += '"';
        out += c;
    }
    out += '"';
    return out;
}

std::string csv_number(double value) {
    // fmt's default for a double is the shortest representation that round-trips: nothing is lost,
    // and a nanosecond timestamp keeps every digit where %.6g would round it.
    return fmt::format("{}", value);
}

std::set<std::string> label_keys(const RunReport& report) {
    std::set<std::string> keys;
    for (const auto& p : report.results)
        for (const auto& m : p.measurements)
            for (const auto& [k, v] : m.labels)
                keys.insert(k);
    return keys;
}

std::string render_csv(const RunReport& report, const RenderOptions&) {
    const std::set<std::string> keys = label_keys(report);
    std::string out;
    append_row(out, header(keys));
    for (const auto& p : report.results)
        for (const auto& m : p.measurements)
            append_row(out, row_of(p, m, keys));
    return out;
}

}  // namespace clprobe

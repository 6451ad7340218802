#include "core/drift_facts.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/core.h>

#include "core/stats.hpp"

namespace clprobe {

namespace {

DriftSeries series_of(const MachineDrift& drift, double DriftCheck::*rate) {
    DriftSeries s;
    std::vector<double> values;
    for (const auto& c : drift.checks)
        if (c.*rate > 0) values.push_back(c.*rate);
    s.n = values.size();
    if (values.empty()) return s;
    s.median = median_of(values);
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    s.spread = *hi / *lo - 1;
    return s;
}

nlohmann::json series_to_json(const DriftSeries& s) {
    return {{"n", s.n}, {"median", s.median}, {"spread", s.spread}};
}

[[noreturn]] void fail(const std::string& field, const std::string& problem) {
    throw std::invalid_argument(field + ": " + problem);
}

const nlohmann::json& member(const nlohmann::json& j, const std::string& path, const char* key) {
    const auto it = j.find(key);
    if (it == j.end()) fail(path + key, "missing");
    return *it;
}

double positive_number(const nlohmann::json& j, const std::string& path, const char* key) {
    const auto& v = member(j, path, key);
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail(path + key, "expected a finite number");
    if (v.get<double>() <= 0) fail(path + key, "expected a positive number");
    return v.get<double>();
}

std::string text(const nlohmann::json& j, const std::string& path, const char* key) {
    const auto& v = member(j, path, key);
    if (!v.is_string()) fail(path + key, "expected a string");
    return v.get<std::string>();
}

DriftCheck read_check(const nlohmann::json& j, const std::string& path) {
    if (!j.is_object()) fail(path, "expected an object");
    DriftCheck c;
    const auto& offset = member(j, path + ".", "offset_seconds");
    if (!offset.is_number() || !std::isfinite(offset.get<double>()) || offset.get<double>() < 0)
        fail(path + ".offset_seconds", "expected a non-negative number");
    c.offset_seconds = offset.get<double>();
    c.before_probe = text(j, path + ".", "before_probe");
    c.compute_gflops = positive_number(j, path + ".", "compute_gflops");
    c.memory_gb_per_s = positive_number(j, path + ".", "memory_gb_per_s");
    return c;
}

}  // namespace

DriftSeries compute_series(const MachineDrift& drift) {
    return series_of(drift, &DriftCheck::compute_gflops);
}

DriftSeries memory_series(const MachineDrift& drift) {
    return series_of(drift, &DriftCheck::memory_gb_per_s);
}

std::optional<double> largest_spread(const MachineDrift& drift) {
    const DriftSeries c = compute_series(drift), m = memory_series(drift);
    if (c.n < 2 && m.n < 2) return std::nullopt;
    return std::max(c.n >= 2 ? c.spread : 0.0, m.n >= 2 ? m.spread : 0.0);
}

std::optional<double> reference_shift(const MachineDrift& a, const MachineDrift& b) {
    std::optional<double> shift;
    for (auto series : {&compute_series, &memory_series}) {
        const DriftSeries sa = series(a), sb = series(b);
        if (sa.n == 0 || sb.n == 0) continue;
        shift = std::max(shift.value_or(0.0), std::fabs(sb.median / sa.median - 1));
    }
    return shift;
}

std::optional<DriftWindow> drift_around(const MachineDrift& drift, const std::string& probe_id) {
    const auto& checks = drift.checks;
    const auto it =
        std::find_if(checks.begin(), checks.end(), [&](const DriftCheck& c) { return c.before_probe == probe_id; });
    if (it == checks.end()) return std::nullopt;
    const auto next = std::next(it);
    const DriftCheck& after = next == checks.end() ? *it : *next;
    return DriftWindow{(it->compute_gflops + after.compute_gflops) / 2,
                       (it->memory_gb_per_s + after.memory_gb_per_s) / 2};
}

std::string drift_summary(const MachineDrift& drift) {
    if (drift.checks.empty()) return "not measured: " + (drift.note.empty() ? std::string("no checks") : drift.note);
    const DriftSeries c = compute_series(drift), m = memory_series(drift);
    std::string out = fmt::format(
        "compute varied {:.1f}% (median {:.4g} GFLOP/s), memory varied {:.1f}% (median {:.4g} GB/s) "
        "between the slowest and the fastest of {} check{}",
        100 * c.spread, c.median, 100 * m.spread, m.median, drift.checks.size(), drift.checks.size() == 1 ? "" : "s");
    if (!drift.note.empty()) out += "; " + drift.note;
    return out;
}

nlohmann::json to_json(const MachineDrift& drift) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : drift.checks)
        checks.push_back({{"offset_seconds", c.offset_seconds},
                          {"before_probe", c.before_probe},
                          {"compute_gflops", c.compute_gflops},
                          {"memory_gb_per_s", c.memory_gb_per_s}});
    return {{"checks", checks},
            {"compute", series_to_json(compute_series(drift))},
            {"memory", series_to_json(memory_series(drift))},
            {"note", drift.note},
            {"cost_seconds", drift.cost_seconds}};
}

MachineDrift machine_drift_from_json(const nlohmann::json& j) {
    if (!j.is_object()) fail("drift", "expected an object");
    MachineDrift drift;
    const auto& checks = member(j, "", "checks");
    if (!checks.is_array()) fail("checks", "expected an array");
    for (std::size_t i = 0; i < checks.size(); ++i)
        drift.checks.push_back(read_check(checks[i], "checks[" + std::to_string(i) + "]"));
    drift.note = text(j, "", "note");
    const auto& cost = member(j, "", "cost_seconds");
    if (!cost.is_number() || !std::isfinite(cost.get<double>()) || cost.get<double>() < 0)
        fail("cost_seconds", "expected a non-negative number");
    drift.cost_seconds = cost.get<double>();
    return drift;
}

}  // namespace clprobe

#include "render/gbench_export.hpp"

#include <cctype>
#include <map>
#include <set>
#include <string_view>
#include <vector>

#include "core/memory_roofs.hpp"
#include "core/stats.hpp"

namespace clprobe {

using nlohmann::ordered_json;

namespace {

std::optional<double> ns_per_time_unit(std::string_view unit) {
    if (unit == "s") return 1e9;
    if (unit == "ms") return 1e6;
    if (unit == "us") return 1e3;
    if (unit == "ns") return 1.0;
    return std::nullopt;
}

bool is_rate_unit(std::string_view unit) {
    return unit.size() > 2 && unit.ends_with("/s");
}

// One exported measurement: where it sits in google-benchmark's family/instance grouping.
struct GbenchFamilyMember {
    const Measurement* measurement = nullptr;
    GbenchMapping mapping;
    std::string run_name;
    int family_index = 0;               // one family per metric id, in order of first appearance
    int per_family_instance_index = 0;  // the label combinations of that metric, in report order
};

// A second measurement with the same metric and labels (two probes may report one) gets its
// probe's id, then a counter, so every run_name is unique and stable for the same report shape.
std::string unique_name(std::string name, const std::string& probe_id, std::set<std::string>& taken) {
    if (taken.count(name)) name += "/probe:" + probe_id;
    const std::string base = name;
    for (int k = 2; taken.count(name); ++k)
        name = base + "/dup:" + std::to_string(k);
    taken.insert(name);
    return name;
}

std::vector<GbenchFamilyMember> exported_members(const RunReport& report, int& not_exported) {
    std::vector<GbenchFamilyMember> out;
    std::map<std::string, int> family_of, instances_of;
    std::set<std::string> taken;
    for (const auto& p : report.results)
        for (const auto& m : p.measurements) {
            const auto mapping = gbench_mapping_of(m);
            if (!mapping) {
                ++not_exported;
                continue;
            }
            const auto [it, added] = family_of.emplace(m.metric, static_cast<int>(family_of.size()));
            out.push_back(
                {&m, *mapping, unique_name(gbench_run_name(m), p.id, taken), it->second, instances_of[m.metric]++});
        }
    return out;
}

ordered_json entry_head(const GbenchFamilyMember& f, const std::string& name, const char* run_type) {
    return {{"name", name},
            {"family_index", f.family_index},
            {"per_family_instance_index", f.per_family_instance_index},
            {"run_name", f.run_name},
            {"run_type", run_type},
            {"repetitions", f.measurement->samples.size()},
            {"threads", 1}};
}

void set_time(ordered_json& entry, double ns) {
    // clprobe measures no CPU time apart from the real time: both fields carry the one figure.
    entry["real_time"] = ns;
    entry["cpu_time"] = ns;
    entry["time_unit"] = "ns";
}

void append_iterations(const GbenchFamilyMember& f, ordered_json& benchmarks) {
    const Measurement& m = *f.measurement;
    for (std::size_t i = 0; i < m.samples.size(); ++i) {
        ordered_json e = entry_head(f, f.run_name, "iteration");
        e["repetition_index"] = i;
        e["iterations"] = m.iterations_per_sample;
        set_time(e, gbench_time_ns(f.mapping, m.samples[i]));
        if (f.mapping.kind == GbenchMapping::Kind::time_per_work) e[f.mapping.rate_counter] = m.samples[i];
        benchmarks.push_back(std::move(e));
    }
}

void append_aggregates(const GbenchFamilyMember& f, ordered_json& benchmarks) {
    const Measurement& m = *f.measurement;
    if (m.samples.size() < 2) return;  // google-benchmark writes aggregates only over repetitions
    std::vector<double> ns;
    for (const double v : m.samples)
        ns.push_back(gbench_time_ns(f.mapping, v));
    const Summary t = summarize(ns);
    const Summary& rate = m.summary;  // the rate counter's aggregates: the report's own statistics
    struct Aggregate {
        const char* name;
        double time, rate;
        const char* unit;
    };
    for (const Aggregate& a :
         {Aggregate{"mean", t.mean, rate.mean, "time"}, Aggregate{"median", t.median, rate.median, "time"},
          Aggregate{"stddev", t.stddev, rate.stddev, "time"}, Aggregate{"cv", t.cv, rate.cv, "percentage"}}) {
        ordered_json e = entry_head(f, f.run_name + "_" + a.name, "aggregate");
        e["aggregate_name"] = a.name;
        e["aggregate_unit"] = a.unit;
        e["iterations"] = m.samples.size();
        set_time(e, a.time);
        if (f.mapping.kind == GbenchMapping::Kind::time_per_work) e[f.mapping.rate_counter] = a.rate;
        benchmarks.push_back(std::move(e));
    }
}

// google-benchmark's context keys where the report knows them, then clprobe's own.
ordered_json context_of(const RunReport& r, int exported, int not_exported) {
    ordered_json c = {{"date", r.created_at},
                      {"host_name", r.host.hostname},
                      {"executable", r.command_line.empty() ? std::string("clprobe") : r.command_line.front()},
                      {"num_cpus", r.host.logical_cpus}};
    if (const auto* mhz = find_measurement(r, "system.cpu.frequency.max")) c["mhz_per_cpu"] = mhz->summary.median;
    if (const auto facts = memory_roof_facts_of(r.results); facts && !facts->caches.empty()) {
        ordered_json caches = ordered_json::array();
        for (const auto& cache : facts->caches) {
            const bool numbered = cache.level.size() == 2 && cache.level[0] == 'L' &&
                                  std::isdigit(static_cast<unsigned char>(cache.level[1]));
            caches.push_back(
                {{"type", cache.level}, {"level", numbered ? cache.level[1] - '0' : 0}, {"size", cache.bytes}});
        }
        c["caches"] = caches;
    }
    c["clprobe_version"] = r.tool_version;
    c["clprobe_report_schema_version"] = r.schema_version;
    c["clprobe_complete"] = r.complete;
    if (r.device) {
        c["device"] = r.device->name;
        c["device_type"] = r.device->type;
        c["device_driver_version"] = r.device->driver_version;
        c["device_platform"] = r.device->platform_name + " " + r.device->platform_version;
    }
    c["clprobe_measurements_exported"] = exported;
    c["clprobe_measurements_not_exported"] = not_exported;
    return c;
}

}  // namespace

std::optional<GbenchMapping> gbench_mapping_of(const Measurement& m) {
    if (m.timer == TimerKind::none || m.samples.empty()) return std::nullopt;
    if (const auto ns = ns_per_time_unit(m.unit)) {
        if (m.higher_is_better) return std::nullopt;
        return GbenchMapping{GbenchMapping::Kind::time, *ns, ""};
    }
    if (!is_rate_unit(m.unit) || !m.higher_is_better) return std::nullopt;
    for (const double v : m.samples)
        if (v <= 0) return std::nullopt;
    return GbenchMapping{GbenchMapping::Kind::time_per_work, 1.0, m.unit};
}

double gbench_time_ns(const GbenchMapping& mapping, double sample) {
    // A rate of r <work>/s spends 1/r seconds on one <work>: 1e9 / r nanoseconds, so a faster rate
    // gives a smaller time and compare.py's "lower is better" holds.
    if (mapping.kind == GbenchMapping::Kind::time_per_work) return 1e9 / sample;
    return sample * mapping.ns_per_unit;
}

std::string gbench_run_name(const Measurement& m) {
    std::string name = m.metric;
    for (const auto& [k, v] : m.labels)
        name += "/" + k + ":" + v;
    return name;
}

ordered_json report_to_gbench(const RunReport& report) {
    int not_exported = 0;
    const auto members = exported_members(report, not_exported);
    ordered_json benchmarks = ordered_json::array();
    for (const auto& f : members) {
        append_iterations(f, benchmarks);
        append_aggregates(f, benchmarks);
    }
    return {{"context", context_of(report, static_cast<int>(members.size()), not_exported)},
            {"benchmarks", benchmarks}};
}

std::string render_gbench(const RunReport& report, const RenderOptions&) {
    return report_to_gbench(report).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace clprobe

#pragma once
// `clprobe report FILE --format gbench`: the report in google-benchmark's JSON output format, so
// google-benchmark's own tools (compare.py, Debian libbenchmark-tools) compare two clprobe runs.
// The mapping is documented in docs/report-schema.md, "google-benchmark export".
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/report.hpp"
#include "render/render_options.hpp"

namespace clprobe {

// How a measurement's samples become google-benchmark times. compare.py reads every time as
// lower-is-better, so only measurements whose better direction is a smaller time are exported.
struct GbenchMapping {
    enum class Kind {
        time,           // a duration (s, ms, us, ns), lower is better: the sample in nanoseconds
        time_per_work,  // a rate ("GB/s", "GFLOP/s", any "<work>/s"), higher is better: ns per <work>
    };
    Kind kind = Kind::time;
    double ns_per_unit = 1;    // time: nanoseconds in one of the measurement's unit (1e6 for ms)
    std::string rate_counter;  // time_per_work: the user counter that keeps the rate, named by its unit
};

// nullopt for what compare.py cannot read as a time: untimed facts (timer none), counts, ratios,
// sizes and other units, a duration where higher is better, a rate where lower is better, and a
// rate with a zero sample (an infinite time per unit of work).
std::optional<GbenchMapping> gbench_mapping_of(const Measurement& m);

// One sample as nanoseconds under that mapping: value x ns_per_unit, or 1e9 / value for a rate.
double gbench_time_ns(const GbenchMapping& mapping, double sample);

// "metric/key:value/key:value", labels in key order: the benchmark's run_name.
std::string gbench_run_name(const Measurement& m);

// {context, benchmarks}: per exported measurement one `iteration` entry per sample, then the
// mean, median, stddev and cv aggregates when it has two samples or more.
nlohmann::ordered_json report_to_gbench(const RunReport& report);
std::string render_gbench(const RunReport& report, const RenderOptions& options = {});  // no option applies

}  // namespace clprobe

// Fuzz target: the trace reader, and everything that runs on what it reads (the analysis into
// facts and measurements, the trace rules, the text and HTML renderers, the timeline). The record
// file is written by a layer inside a program that may crash at any byte, so whatever the bytes,
// clprobe must read what it can: a crash, a hang or an uncaught exception is a bug.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "render/html_report.hpp"
#include "render/text_report.hpp"
#include "rules/analysis.hpp"
#include "rules/trace_rules.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_reader.hpp"
#include "trace/trace_timeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace clprobe;
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    const ProgramTrace trace = read_program_trace(in);
    ChildRun run;
    run.argv = {"fuzzed"};
    run.start_ns = trace.layer_start;
    run.end_ns = trace.layer_end.value_or(trace.layer_start + 1'000'000);
    run.exit_code = 0;
    TraceAnalysis analysis = analyse_trace(trace, run, BandwidthRoofs{std::nullopt, 10.0});
    RunReport report;
    report.results.push_back(program_probe_result(std::move(analysis)));
    analyze(report);
    (void)render_text(report, {true, false});
    (void)render_html(report);
    // As clprobe trace writes it: names from the program are not always UTF-8.
    (void)nlohmann::json::parse(program_timeline_text(trace, run));  // the text must be valid JSON
    return 0;
}

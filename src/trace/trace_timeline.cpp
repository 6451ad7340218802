#include "trace/trace_timeline.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "trace/device_clock.hpp"

namespace clprobe {

namespace {

using nlohmann::json;

constexpr int process_id = 1;
// Host rows take thread ids from 1; queue rows start above any plausible thread count.
constexpr std::uint32_t queue_row_base = 10000;

double micros(std::uint64_t t, std::uint64_t origin) {
    return t > origin ? static_cast<double>(t - origin) * 1e-3 : 0.0;
}

json complete_event(std::string name, std::string category, std::uint32_t row, double ts, double dur, json args) {
    return {{"name", std::move(name)},
            {"cat", std::move(category)},
            {"ph", "X"},
            {"pid", process_id},
            {"tid", row},
            {"ts", ts},
            {"dur", dur},
            {"args", std::move(args)}};
}

json row_name(std::uint32_t row, const std::string& name) {
    return {{"name", "thread_name"}, {"ph", "M"}, {"pid", process_id}, {"tid", row}, {"args", {{"name", name}}}};
}

std::string queue_label(const ProgramTrace& trace, std::uint32_t q) {
    std::string label = "queue " + std::to_string(q);
    const std::int32_t d = trace.queues[q].device;
    if (d >= 0 && static_cast<std::size_t>(d) < trace.devices.size()) label += " · " + trace.devices[d].name;
    return label;
}

}  // namespace

void write_program_timeline(const ProgramTrace& trace, const ChildRun& run,
                            const std::function<void(std::string_view)>& sink) {
    constexpr std::size_t piece = std::size_t{1} << 20;
    std::string text = R"({"displayTimeUnit":"ms","traceEvents":[)";
    bool first = true;
    const auto emit = [&](const json& event) {
        if (!first) text += ',';
        first = false;
        text += event.dump(-1, ' ', false, json::error_handler_t::replace);
        if (text.size() >= piece) {
            sink(text);
            text.clear();
        }
    };
    const AlignedTimes aligned = align_device_times(trace, run.start_ns, std::max(run.start_ns, run.end_ns));
    emit({{"name", "process_name"},
          {"ph", "M"},
          {"pid", process_id},
          {"args", {{"name", run.argv.empty() ? std::string("program") : run.argv.front()}}}});
    for (std::uint32_t q = 0; q < trace.queues.size(); ++q)
        emit(row_name(queue_row_base + q, queue_label(trace, q)));
    std::set<std::uint32_t> threads;
    for (std::size_t i = 0; i < trace.commands.size(); ++i) {
        const TracedCommand& c = trace.commands[i];
        threads.insert(c.thread);
        const std::string name = c.kind == CommandKind::kernel ? std::string(trace.kernel_name(c)) : c.command;
        emit(complete_event(name.empty() ? c.command : name, "enqueue", c.thread, micros(c.host_begin, run.start_ns),
                            static_cast<double>(c.host_end - c.host_begin) * 1e-3,
                            {{"seq", c.seq}, {"bytes", c.bytes}, {"blocking", c.blocking}}));
        if (!aligned.spans[i]) continue;
        const HostSpan& s = *aligned.spans[i];
        json args = {{"seq", c.seq}, {"bytes", c.bytes}, {"command", c.command}};
        if (c.kind == CommandKind::kernel) args["global"] = c.global, args["local"] = c.local;
        if (c.host_memory != HostMemory::none) args["host_memory"] = std::string(to_string(c.host_memory));
        emit(complete_event(name.empty() ? c.command : name, std::string(to_string(c.kind)), queue_row_base + c.queue,
                            micros(s.begin, run.start_ns), static_cast<double>(s.end - s.begin) * 1e-3,
                            std::move(args)));
    }
    for (const auto& w : trace.waits) {
        threads.insert(w.thread);
        emit(complete_event(w.op, "wait", w.thread, micros(w.host_begin, run.start_ns),
                            static_cast<double>(w.host_end - w.host_begin) * 1e-3, json::object()));
    }
    for (const auto& b : trace.builds) {
        threads.insert(b.thread);
        emit(complete_event("build (" + b.op + ")", "build", b.thread, micros(b.host_begin, run.start_ns),
                            static_cast<double>(b.host_end - b.host_begin) * 1e-3,
                            {{"origin", b.origin}, {"status", b.status}}));
    }
    for (std::uint32_t t : threads)
        emit(row_name(t, "host thread " + std::to_string(t)));
    text += "]}\n";
    sink(text);
}

std::string program_timeline_text(const ProgramTrace& trace, const ChildRun& run) {
    std::string out;
    write_program_timeline(trace, run, [&](std::string_view piece) { out += piece; });
    return out;
}

}  // namespace clprobe

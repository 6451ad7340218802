#include "cl/command_trace.hpp"

#include <algorithm>
#include <map>

namespace clprobe {

namespace {

std::string command_name(cl_command_type type) {
    switch (type) {
        case CL_COMMAND_NDRANGE_KERNEL:
            return "kernel";
        case CL_COMMAND_READ_BUFFER:
            return "read buffer";
        case CL_COMMAND_WRITE_BUFFER:
            return "write buffer";
        case CL_COMMAND_COPY_BUFFER:
            return "copy buffer";
        case CL_COMMAND_MAP_BUFFER:
            return "map buffer";
        case CL_COMMAND_UNMAP_MEM_OBJECT:
            return "unmap";
        case CL_COMMAND_FILL_BUFFER:
            return "fill buffer";
        case CL_COMMAND_MARKER:
            return "marker";
        default:
            return "command";
    }
}

}  // namespace

CommandTrace& CommandTrace::instance() {
    static CommandTrace trace;
    return trace;
}

void CommandTrace::enable(bool on) {
    std::lock_guard lock(mutex_);
    enabled_ = on;
}

void CommandTrace::set_probe(std::string probe_id) {
    std::lock_guard lock(mutex_);
    probe_ = std::move(probe_id);
}

void CommandTrace::record(const cl::Event& event, std::string_view label) {
    if (!enabled_) return;
    Entry e;
    cl_command_type type = 0;
    if (clGetEventInfo(event(), CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS) return;
    const std::pair<cl_profiling_info, std::uint64_t*> stamps[] = {{CL_PROFILING_COMMAND_QUEUED, &e.queued},
                                                                   {CL_PROFILING_COMMAND_SUBMIT, &e.submit},
                                                                   {CL_PROFILING_COMMAND_START, &e.start},
                                                                   {CL_PROFILING_COMMAND_END, &e.end}};
    for (const auto& [what, where] : stamps) {
        cl_ulong v = 0;
        if (clGetEventProfilingInfo(event(), what, sizeof v, &v, nullptr) != CL_SUCCESS) return;
        *where = v;
    }
    e.command = command_name(type);
    e.label = std::string(label);
    std::lock_guard lock(mutex_);
    if (entries_.size() >= max_entries) {
        ++dropped_;
        return;
    }
    e.probe = probe_;
    entries_.push_back(std::move(e));
}

nlohmann::json CommandTrace::raw_entries() const {
    std::lock_guard lock(mutex_);
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : entries_)
        out.push_back({e.probe, e.label, e.command, e.queued, e.submit, e.start, e.end});
    return out;
}

void CommandTrace::clear() {
    std::lock_guard lock(mutex_);
    entries_.clear();
}

void CommandTrace::add_entries(const nlohmann::json& raw) {
    std::lock_guard lock(mutex_);
    for (const auto& r : raw) {
        if (entries_.size() >= max_entries) {
            ++dropped_;
            continue;
        }
        entries_.push_back({r.at(0).get<std::string>(), r.at(1).get<std::string>(), r.at(2).get<std::string>(),
                            r.at(3).get<std::uint64_t>(), r.at(4).get<std::uint64_t>(), r.at(5).get<std::uint64_t>(),
                            r.at(6).get<std::uint64_t>()});
    }
}

std::size_t CommandTrace::size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
}

nlohmann::json CommandTrace::to_json() const {
    std::lock_guard lock(mutex_);
    using nlohmann::json;
    json events = json::array();
    std::uint64_t origin = UINT64_MAX;
    for (const auto& e : entries_)
        origin = std::min(origin, e.queued ? e.queued : e.start);
    // One trace "process" per probe, in run order, with two rows: execution and queue wait.
    std::map<std::string, int> pids;
    for (const auto& e : entries_)
        if (!pids.count(e.probe)) {
            const int pid = static_cast<int>(pids.size()) + 1;
            pids[e.probe] = pid;
            events.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", pid}, {"args", {{"name", e.probe}}}});
            events.push_back(
                {{"ph", "M"}, {"name", "process_sort_index"}, {"pid", pid}, {"args", {{"sort_index", pid}}}});
            events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", pid},
                              {"tid", 1},
                              {"args", {{"name", "device execution"}}}});
            events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", pid},
                              {"tid", 2},
                              {"args", {{"name", "queued -> start"}}}});
        }
    auto us = [&](std::uint64_t ns) { return static_cast<double>(ns - origin) / 1000.0; };
    for (const auto& e : entries_) {
        const int pid = pids[e.probe];
        const std::string name = e.label.empty() ? e.command : e.label;
        const json args = {{"command", e.command},
                           {"queued_ns", e.queued},
                           {"submit_ns", e.submit},
                           {"start_ns", e.start},
                           {"end_ns", e.end}};
        events.push_back({{"ph", "X"},
                          {"name", name},
                          {"cat", e.command},
                          {"pid", pid},
                          {"tid", 1},
                          {"ts", us(e.start)},
                          {"dur", us(e.end) - us(e.start)},
                          {"args", args}});
        if (e.queued && e.start > e.queued)
            events.push_back({{"ph", "X"},
                              {"name", "wait: " + name},
                              {"cat", "queue"},
                              {"pid", pid},
                              {"tid", 2},
                              {"ts", us(e.queued)},
                              {"dur", us(e.start) - us(e.queued)}});
    }
    return {{"traceEvents", events},
            {"displayTimeUnit", "ms"},
            {"metadata",
             {{"source", "clprobe diagnose --trace"},
              {"commands", entries_.size()},
              {"dropped", dropped_},
              {"clock", "device profiling timestamps, relative to the first command"}}}};
}

}  // namespace clprobe

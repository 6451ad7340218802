#include "core/trace_facts.hpp"

#include <algorithm>
#include <csignal>
#include <iterator>

#include "core/report.hpp"

namespace clprobe {

using nlohmann::json;

std::string_view to_string(AppStage stage) {
    constexpr std::string_view names[] = {"kernel",    "transfer",    "build",
                                          "host_wait", "device_idle", "host_only"};  // AppStage's order
    static_assert(std::size(names) == std::size(all_app_stages));
    const auto i = static_cast<std::size_t>(stage);
    return i < std::size(names) ? names[i] : names[std::size(names) - 1];
}

std::optional<AppStage> app_stage_from(std::string_view name) {
    for (AppStage s : all_app_stages)
        if (to_string(s) == name) return s;
    return std::nullopt;
}

std::string_view to_string(ProcessEnd end) {
    constexpr std::string_view names[] = {"exited", "killed", "exit_handler", "no_exit_handler",
                                          "still_running"};  // ProcessEnd's order
    const auto i = static_cast<std::size_t>(end);
    return i < std::size(names) ? names[i] : names[3];
}

bool cut_short(const ProcessFacts& p, const std::vector<ProcessFacts>& job, const ProgramRunFacts& run) {
    if (p.end == ProcessEnd::still_running) return true;
    if (p.end != ProcessEnd::killed) return false;
    const bool ending_signal =
        p.signal && (*p.signal == SIGTERM || *p.signal == SIGKILL || *p.signal == SIGINT || *p.signal == SIGHUP);
    if (!ending_signal || p.commands_without_times > 0) return true;
    const auto parent = std::find_if(job.begin(), job.end(), [&](const ProcessFacts& q) { return q.pid == p.ppid; });
    // A Python pool's parent often makes no OpenCL call of its own (its workers do), so it has no
    // records: 5 of 15 pool runs under load were called incomplete for that alone.
    if (parent == job.end()) return !run.exit_code || run.signal || run.interrupted;
    return parent->end == ProcessEnd::killed || parent->end == ProcessEnd::still_running;
}

std::optional<ProcessEnd> process_end_from(std::string_view name) {
    for (ProcessEnd e : {ProcessEnd::exited, ProcessEnd::killed, ProcessEnd::exit_handler, ProcessEnd::no_exit_handler,
                         ProcessEnd::still_running})
        if (to_string(e) == name) return e;
    return std::nullopt;
}

const KernelWorkFacts* find_work(const std::vector<KernelWorkFacts>& work, const std::string& kernel) {
    for (const auto& w : work)
        if (w.kernel == kernel) return &w;
    return nullptr;
}

double TraceFacts::stage_seconds(AppStage stage) const {
    for (const auto& s : stages)
        if (s.stage == stage) return s.seconds;
    return 0;
}

double TraceFacts::device_busy_seconds() const {
    return stage_seconds(AppStage::kernel) + stage_seconds(AppStage::transfer);
}

// Field lists once, for both directions; missing keys keep their defaults so older or hand-made
// facts still read.
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelFacts, name, launches, seconds, median_launch_seconds, bytes,
                                                global_items, auto_local_launches, pids)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TransferBin, upper_bytes, count, bytes, seconds, enqueue_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TransferFacts, direction, path, count, bytes, seconds, blocking, bins)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(SyncFacts, kernels, kernels_followed_by_wait, gaps_measured,
                                                gap_seconds, waits, wait_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(OverlapFacts, kernel_seconds, transfer_seconds, overlapped_seconds,
                                                queues)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(BuildFacts, builds, from_source, from_binary, seconds, repeated,
                                                repeated_seconds, source_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(AllocationFacts, allocations, released, peak_bytes, largest_bytes,
                                                in_loop, in_loop_call_seconds, in_loop_distinct_sizes,
                                                in_loop_first_uses, in_loop_first_use_seconds, in_loop_first_use_bytes)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(TracedDeviceFacts, name, type, vendor, busy_seconds, commands)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DeviceLaneFacts, pid, device, commands, busy_seconds, begin_seconds,
                                                end_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(DeviceBalanceFacts, busiest, least, shared_seconds,
                                                busiest_busy_seconds, least_busy_seconds)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(FusionFacts, sequence, pid, occurrences, kernels, kernel_seconds,
                                                gap_seconds, removable_gaps, removable_gap_seconds,
                                                median_kernel_seconds, median_gap_seconds)

namespace {

json run_to_json(const ProgramRunFacts& r) {
    json j = {{"argv", r.argv},
              {"wall_seconds", r.wall_seconds},
              {"exit_code", nullptr},
              {"signal", nullptr},
              {"interrupted", r.interrupted},
              {"layer_loaded", r.layer_loaded},
              {"linked_opencl", r.linked_opencl},
              {"layer_clean_exit", r.layer_clean_exit},
              {"records", r.records},
              {"unreadable_records", r.unreadable_records},
              {"opencl_commands", r.opencl_commands},
              {"failed_commands", r.failed_commands},
              {"commands_without_times", r.commands_without_times}};
    if (r.exit_code) j["exit_code"] = *r.exit_code;
    if (r.signal) j["signal"] = *r.signal;
    if (r.capture_seconds > 0) j["capture_seconds"] = r.capture_seconds;  // only traces that captured
    return j;
}

std::optional<int> optional_int(const json& j, const char* key) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return std::nullopt;
    return it->get<int>();
}

ProgramRunFacts run_from_json(const json& j) {
    ProgramRunFacts r;
    r.argv = j.value("argv", std::vector<std::string>{});
    r.wall_seconds = j.value("wall_seconds", 0.0);
    r.exit_code = optional_int(j, "exit_code");
    r.signal = optional_int(j, "signal");
    r.interrupted = j.value("interrupted", false);
    r.layer_loaded = j.value("layer_loaded", false);
    r.linked_opencl = j.value("linked_opencl", false);
    r.layer_clean_exit = j.value("layer_clean_exit", false);
    r.records = j.value("records", std::uint64_t{0});
    r.unreadable_records = j.value("unreadable_records", std::uint64_t{0});
    r.opencl_commands = j.value("opencl_commands", std::uint64_t{0});
    r.failed_commands = j.value("failed_commands", std::uint64_t{0});
    r.commands_without_times = j.value("commands_without_times", std::uint64_t{0});
    r.capture_seconds = j.value("capture_seconds", 0.0);
    return r;
}

json stages_to_json(const std::vector<AppStageTime>& list) {
    json stages = json::object();
    for (const auto& s : list)
        stages[std::string(to_string(s.stage))] = s.seconds;
    return stages;
}

// In AppStage order (a JSON object's keys come back sorted by name).
std::vector<AppStageTime> stages_from_json(const json& stages) {
    std::vector<AppStageTime> out;
    for (AppStage stage : all_app_stages)
        if (const auto it = stages.find(std::string(to_string(stage))); it != stages.end())
            out.push_back({stage, it->get<double>()});
    return out;
}

json process_to_json(const ProcessFacts& p) {
    return {{"pid", p.pid},
            {"ppid", p.ppid},
            {"origin", p.origin},
            {"command_line", p.command_line},
            {"rank", p.rank.empty() ? json(nullptr) : json(p.rank)},
            {"end", to_string(p.end)},
            {"exit_code", p.exit_code ? json(*p.exit_code) : json(nullptr)},
            {"signal", p.signal ? json(*p.signal) : json(nullptr)},
            {"start_seconds", p.start_seconds},
            {"wall_seconds", p.wall_seconds},
            {"records_end_seconds", p.records_end_seconds},
            {"opencl_commands", p.opencl_commands},
            {"commands_without_times", p.commands_without_times},
            {"device_seconds", p.device_seconds},
            {"stages", stages_to_json(p.stages)},
            {"pattern_seconds", p.pattern_seconds}};
}

ProcessFacts process_from_json(const json& j) {
    ProcessFacts p;
    p.pid = j.value("pid", 0);
    p.ppid = j.value("ppid", 0);
    p.origin = j.value("origin", "");
    p.command_line = j.value("command_line", "");
    if (const auto it = j.find("rank"); it != j.end() && it->is_string()) p.rank = it->get<std::string>();
    p.end = process_end_from(j.value("end", "")).value_or(ProcessEnd::no_exit_handler);
    p.exit_code = optional_int(j, "exit_code");
    p.signal = optional_int(j, "signal");
    p.start_seconds = j.value("start_seconds", 0.0);
    p.wall_seconds = j.value("wall_seconds", 0.0);
    p.records_end_seconds = j.value("records_end_seconds", 0.0);
    p.opencl_commands = j.value("opencl_commands", std::uint64_t{0});
    p.commands_without_times = j.value("commands_without_times", std::uint64_t{0});
    p.device_seconds = j.value("device_seconds", 0.0);
    p.stages = stages_from_json(j.value("stages", json::object()));
    p.pattern_seconds = j.value("pattern_seconds", std::map<std::string, double>{});
    return p;
}

}  // namespace

json to_json(const TraceFacts& f) {
    json processes = json::array();
    for (const auto& p : f.processes)
        processes.push_back(process_to_json(p));
    json out = {{"run", run_to_json(f.run)}, {"stages", stages_to_json(f.stages)},
                {"devices", f.devices},      {"kernels", f.kernels},
                {"transfers", f.transfers},  {"sync", f.sync},
                {"overlap", f.overlap},      {"builds", f.builds},
                {"memory", f.memory},        {"processes", processes},
                {"lanes", f.lanes},          {"balance", f.balance},
                {"fusion", f.fusion}};
    if (f.capture) out["capture"] = to_json(*f.capture);
    if (!f.work.empty()) out["work"] = f.work;  // only traces that counted work carry it
    return out;
}

std::optional<TraceFacts> trace_facts_from_json(const json& j) {
    if (!j.is_object()) return std::nullopt;
    try {
        TraceFacts f;
        f.run = run_from_json(j.value("run", json::object()));
        f.stages = stages_from_json(j.value("stages", json::object()));
        for (const auto& p : j.value("processes", json::array()))
            f.processes.push_back(process_from_json(p));
        f.devices = j.value("devices", std::vector<TracedDeviceFacts>{});
        f.kernels = j.value("kernels", std::vector<KernelFacts>{});
        f.transfers = j.value("transfers", std::vector<TransferFacts>{});
        f.sync = j.value("sync", SyncFacts{});
        f.overlap = j.value("overlap", OverlapFacts{});
        f.builds = j.value("builds", BuildFacts{});
        f.memory = j.value("memory", AllocationFacts{});
        if (j.contains("capture")) f.capture = capture_facts_from_json(j["capture"]);
        f.lanes = j.value("lanes", std::vector<DeviceLaneFacts>{});
        f.balance = j.value("balance", DeviceBalanceFacts{});
        f.fusion = j.value("fusion", std::vector<FusionFacts>{});
        f.work = j.value("work", std::vector<KernelWorkFacts>{});
        return f;
    } catch (const json::exception&) {
        return std::nullopt;
    }
}

void record_trace_facts(ProbeResult& out, const TraceFacts& facts) {
    out.attributes["facts"] = to_json(facts);
}

std::optional<TraceFacts> trace_facts_of(const RunReport& report) {
    const ProbeResult* p = find_result(report, trace_probe_id);
    if (!p || !p->attributes.is_object()) return std::nullopt;
    const auto it = p->attributes.find("facts");
    return it == p->attributes.end() ? std::nullopt : trace_facts_from_json(*it);
}

}  // namespace clprobe

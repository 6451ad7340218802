#include "trace/capture_windows.hpp"

#include <algorithm>
#include <charconv>
#include <map>

namespace clprobe {

std::vector<CaptureWindow> windows_from_control(std::string_view text, std::uint64_t start_ns, std::uint64_t end_ns) {
    std::vector<CaptureWindow> out;
    bool open = false;
    std::uint64_t opened = 0;
    const auto close_at = [&](std::uint64_t t) {
        const std::uint64_t b = std::clamp(opened, start_ns, end_ns), e = std::clamp(t, start_ns, end_ns);
        if (e > b) out.push_back({b, e});
        open = false;
    };
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        const auto space = line.find(' ');
        if (space == std::string_view::npos) continue;
        const std::string_view word = line.substr(0, space), number = line.substr(space + 1);
        std::uint64_t t = 0;
        const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), t);
        if (ec != std::errc() || end != number.data() + number.size()) continue;
        if (word == "open" && !open) {
            open = true;
            opened = t;
        } else if (word == "close" && open) {
            close_at(t);
        }
    }
    if (open) close_at(end_ns);
    return out;
}

namespace {

bool inside(const std::vector<CaptureWindow>& windows, std::uint64_t t) {
    return std::any_of(windows.begin(), windows.end(),
                       [&](const CaptureWindow& w) { return t >= w.begin_ns && t < w.end_ns; });
}

}  // namespace

ProgramTrace cut_to_windows(const ProgramTrace& trace, const std::vector<CaptureWindow>& windows,
                            bool keep_aggregates) {
    ProgramTrace out = trace;
    std::erase_if(out.commands, [&](const TracedCommand& c) { return !inside(windows, c.host_begin); });
    for (std::size_t i = 0; i < out.commands.size(); ++i)
        out.commands[i].seq = i + 1;
    std::erase_if(out.waits, [&](const TracedWait& w) { return !inside(windows, w.host_begin); });
    std::erase_if(out.builds, [&](const TracedBuild& b) { return !inside(windows, b.host_begin); });
    std::erase_if(out.allocations, [&](const TracedAllocation& a) { return !inside(windows, a.created_begin); });
    if (!keep_aggregates) out.aggregates.clear();
    return out;
}

JobRun in_windows(const JobRun& job, const std::vector<CaptureWindow>& windows, bool windowed) {
    if (!windowed) return job;
    JobRun out = job;
    const std::uint64_t end = job_lifetime(job).end_ns;
    out.program.start_ns = windows.empty() ? end : windows.front().begin_ns;
    out.program.end_ns = out.end_ns = windows.empty() ? end : windows.back().end_ns;
    for (auto& r : out.reaped)
        r.end_ns = std::min(r.end_ns, out.end_ns);
    return out;
}

void add_aggregates(const ProgramTrace& trace, TraceFacts& facts) {
    for (const TracedAggregate& a : trace.aggregates) {
        const std::uint64_t ok = a.count - std::min(a.count, a.failed);
        facts.run.opencl_commands += ok;
        facts.run.failed_commands += a.failed;
        facts.run.commands_without_times += ok - std::min(ok, a.timed);
        const double seconds = static_cast<double>(a.device_ns) * 1e-9;
        if (a.kind == CommandKind::kernel) {
            const std::string_view name =
                a.kernel >= 0 && static_cast<std::size_t>(a.kernel) < trace.kernel_names.size()
                    ? std::string_view(trace.kernel_names[static_cast<std::size_t>(a.kernel)])
                    : std::string_view("?");
            // Before analyse_trace sorts them, facts.kernels follows trace.kernel_names.
            auto k = a.kernel >= 0 && static_cast<std::size_t>(a.kernel) < facts.kernels.size() &&
                             facts.kernels[static_cast<std::size_t>(a.kernel)].name == name
                         ? facts.kernels.begin() + a.kernel
                         : std::find_if(facts.kernels.begin(), facts.kernels.end(),
                                        [&](const KernelFacts& f) { return f.name == name; });
            if (k == facts.kernels.end()) {
                facts.kernels.push_back({});
                k = facts.kernels.end() - 1;
                k->name = name;
                k->median_launch_seconds = a.timed ? seconds / static_cast<double>(a.timed) : 0;
            }
            k->launches += ok;
            k->seconds += seconds;
            k->bytes += static_cast<double>(a.bytes);
            continue;
        }
        std::string direction, path;
        const std::string memory(to_string(a.host_memory));
        switch (a.kind) {
            case CommandKind::write:
                direction = "h2d", path = memory;
                break;
            case CommandKind::read:
                direction = "d2h", path = memory;
                break;
            case CommandKind::copy:
                direction = "d2d", path = "copy";
                break;
            case CommandKind::fill:
                direction = "fill", path = "fill";
                break;
            case CommandKind::map:
                direction = "map", path = "map";
                break;
            case CommandKind::unmap:
                direction = "map", path = "unmap";
                break;
            case CommandKind::svm:
                direction = "svm", path = a.command;
                break;
            case CommandKind::migrate:
                direction = "migrate", path = "migrate";
                break;
            default:
                continue;
        }
        auto t = std::find_if(facts.transfers.begin(), facts.transfers.end(),
                              [&](const TransferFacts& f) { return f.direction == direction && f.path == path; });
        if (t == facts.transfers.end()) {
            facts.transfers.push_back({direction, path, 0, 0, 0, 0, {}});
            t = facts.transfers.end() - 1;
        }
        t->count += ok;
        t->bytes += static_cast<double>(a.bytes);
        t->seconds += seconds;
    }
}

void describe_sampling(const ProgramTrace& trace, std::uint64_t start_ns, CaptureFacts& out) {
    out.limited = trace.sampling.limited;
    out.timeline_commands = trace.commands.size();
    out.aggregated_commands = 0;
    for (const auto& a : trace.aggregates)
        out.aggregated_commands += a.count - std::min(a.count, a.failed);
    out.max_period = trace.sampling.max_period;
    out.dropped_writes = trace.sampling.dropped_writes;
    if (trace.sampling.since)
        out.sampled_since_seconds =
            *trace.sampling.since > start_ns ? static_cast<double>(*trace.sampling.since - start_ns) * 1e-9 : 0.0;
}

}  // namespace clprobe

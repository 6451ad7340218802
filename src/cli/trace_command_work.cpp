#include "cli/trace_command_work.hpp"

#include <fmt/core.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "core/atomic_file.hpp"
#include "core/stats.hpp"
#include "replay/capture_reader.hpp"
#include "runtime/child_process.hpp"
#include "work/work_tally.hpp"

namespace clprobe {

namespace fs = std::filesystem;

#ifndef CLPROBE_INSTALLED_LAYER_DIR
#define CLPROBE_INSTALLED_LAYER_DIR "../lib/clprobe"
#endif
#ifndef CLPROBE_OCLGRIND_ICD_PATH
#define CLPROBE_OCLGRIND_ICD_PATH ""
#endif

void add_work_options(CLI::App* cmd, WorkOptions& o) {
    cmd->add_option("--work", o.kernels,
                    "Count the work of one launch (FLOPs by precision, integer operations, bytes loaded and stored) "
                    "of each of the N kernels with the most device time, by simulating its captured launch under "
                    "Oclgrind, and judge each against the roof that binds it (default 5; 0: off)")
        ->check(CLI::Range(0, 1000));
    cmd->add_option("--work-budget", o.seconds,
                    "Seconds all work counting may take after the program ends (default 30); a kernel whose count "
                    "does not fit is left uncounted with the reason")
        ->check(CLI::Range(1.0, 86400.0));
}

namespace {

fs::path binary_dir() {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? fs::current_path() : exe.parent_path();
}

std::string first_readable(const std::vector<fs::path>& candidates) {
    for (const auto& c : candidates)
        if (!c.empty() && ::access(c.c_str(), R_OK) == 0) return fs::weakly_canonical(c).string();
    return {};
}

struct HotKernel {
    std::string name;
    double device_ns = 0;
    std::uint64_t launches = 0;
};

// Kernels by device time over every process (the launches a sampled timeline kept only in
// aggregate included), largest first.
std::vector<HotKernel> hottest(const std::vector<ProgramTrace>& processes) {
    std::map<std::string, HotKernel> by_name;
    for (const auto& p : processes) {
        for (const auto& c : p.commands) {
            if (c.kind != CommandKind::kernel || c.kernel < 0) continue;
            HotKernel& k = by_name[std::string(p.kernel_name(c))];
            ++k.launches;
            if (c.device && c.device->status == 0 && c.device->end > c.device->start)
                k.device_ns += static_cast<double>(c.device->end - c.device->start);
        }
        for (const auto& a : p.aggregates) {
            if (a.kind != CommandKind::kernel || a.kernel < 0 ||
                static_cast<std::size_t>(a.kernel) >= p.kernel_names.size())
                continue;
            HotKernel& k = by_name[p.kernel_names[static_cast<std::size_t>(a.kernel)]];
            k.launches += a.count;
            k.device_ns += static_cast<double>(a.device_ns);
        }
    }
    std::vector<HotKernel> out;
    for (auto& [name, k] : by_name) {
        k.name = name;
        if (k.device_ns > 0) out.push_back(k);
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const HotKernel& a, const HotKernel& b) { return a.device_ns > b.device_ns; });
    return out;
}

// Device times of the traced launches of `kernel` over exactly `items` work-items (the launches
// the counted one stands for, like for like), and the device time of all its traced launches.
struct LikeLaunches {
    std::vector<double> seconds;
    double all_seconds = 0;
};
LikeLaunches like_launches(const std::vector<ProgramTrace>& processes, const std::string& kernel, std::uint64_t items) {
    LikeLaunches out;
    for (const auto& p : processes)
        for (const auto& c : p.commands) {
            if (c.kind != CommandKind::kernel || c.kernel < 0 || !c.device || c.device->status != 0 ||
                c.device->end <= c.device->start || p.kernel_name(c) != kernel)
                continue;
            const double s = static_cast<double>(c.device->end - c.device->start) * 1e-9;
            out.all_seconds += s;
            if (c.global_items == items) out.seconds.push_back(s);
        }
    return out;
}

// The capture to count for a kernel: the first replayable one, else the first of its name (whose
// skip or problem is the reason it is not counted).
const replay::CaptureLoad* capture_for(const std::vector<replay::CaptureLoad>& loads, const std::string& kernel) {
    const replay::CaptureLoad* any = nullptr;
    for (const auto& l : loads) {
        if (!l.capture || l.capture->kernel != kernel) continue;
        if (!l.capture->skipped) return &l;
        if (!any) any = &l;
    }
    return any;
}

std::string not_captured_reason(const HotKernel& k, int capture_launch) {
    if (k.launches < static_cast<std::uint64_t>(capture_launch))
        return fmt::format("not captured: it was launched {} time{} (the layer captured launch {} of each kernel)",
                           k.launches, k.launches == 1 ? "" : "s", capture_launch);
    return "not captured: no capture of it was written (the capture budget, --replay-budget, may have run out)";
}

void fill_counts(KernelWorkFacts& w, const nlohmann::json& counts) {
    const work::Tally t = work::tally_from_json(counts.at("estimate"));
    w.counted = true;
    w.method = counts.at("exact").get<bool>() ? "exact" : "sampled";
    w.groups_total = counts.at("groups_total").get<std::uint64_t>();
    w.groups_counted = counts.at("groups_counted").get<std::uint64_t>();
    w.groups_covered = counts.at("groups_covered").get<std::uint64_t>();
    w.group_instructions_cv = counts.at("group_instructions").at("cv").get<double>();
    w.simulate_seconds = counts.at("seconds").get<double>();
    w.flops_fp16 = t.flops[0];
    w.flops_fp32 = t.flops[1];
    w.flops_fp64 = t.flops[2];
    w.special_ops = t.special[0] + t.special[1] + t.special[2];
    w.int_ops = t.int_ops;
    w.int64_ops = t.int64_ops;
    w.address_ops = t.address_ops;
    using work::Space;
    const auto bytes = [&](Space s, int d) { return t.bytes[static_cast<int>(s)][d]; };
    w.global_load_bytes = bytes(Space::global, 0);
    w.global_store_bytes = bytes(Space::global, 1);
    w.constant_load_bytes = bytes(Space::constant, 0);
    w.local_load_bytes = bytes(Space::local, 0);
    w.local_store_bytes = bytes(Space::local, 1);
    const double sampled = counts.value("footprint_sampled", 0.0);
    w.footprint_bytes = w.method == "exact" || w.groups_counted == 0
                            ? sampled
                            : sampled * static_cast<double>(w.groups_total) / static_cast<double>(w.groups_counted);
    w.atomics = t.atomics;
    w.barriers = t.barriers;
    w.instructions = t.instructions;
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
    try {
        return nlohmann::json::parse(read_file(path, 1 << 20));
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// Why a child left no counts, from what it wrote and how it ended.
std::string uncounted_reason(const ChildOutcome& o, const std::optional<nlohmann::json>& outcome, double budget) {
    if (!o.spawn_error.empty()) return "could not start the counting process: " + o.spawn_error;
    if (o.stopped == ChildOutcome::Stop::budget)
        return fmt::format("building and simulating it under Oclgrind took longer than its {:.0f} s budget", budget);
    if (o.stopped == ChildOutcome::Stop::interrupt) return "counting was interrupted";
    if (o.signal) return fmt::format("Oclgrind crashed ({}) simulating it", signal_name(o.signal));
    if (outcome) {
        const std::string status = outcome->value("status", "");
        const std::string reason = outcome->value("reason", "");
        if (status == "build_failed") return "Oclgrind could not build it: " + reason;
        if (status != "replayed") return reason.empty() ? status : reason;
    }
    // The last line Oclgrind or the driver printed says most.
    std::string tail = o.output_tail;
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' '))
        tail.pop_back();
    const auto nl = tail.rfind('\n');
    const std::string last = nl == std::string::npos ? tail : tail.substr(nl + 1);
    return last.empty() ? "the counting plugin reported nothing" : "the counting plugin reported nothing: " + last;
}

struct CountJob {
    HotKernel kernel;
    const replay::CaptureLoad* capture = nullptr;
    KernelWorkFacts facts;
};

void count_one(CountJob& job, const fs::path& work_dir, const WorkCounter& counter, double slot_seconds,
               std::size_t index) {
    const replay::Capture& c = *job.capture->capture;
    const fs::path out = work_dir / fmt::format("{}-{}.json", index, job.capture->folder.filename().string());
    std::error_code ec;
    fs::remove(out, ec);
    fs::remove(out.string() + ".counts", ec);
    // Simulation stops, extrapolating, at 60% of the slot: the build and the launch's set-up fit in the rest.
    const double simulate = 0.6 * slot_seconds;
    const std::vector<std::string> argv{(binary_dir() / "clprobe").string(),
                                        "__count-work",
                                        job.capture->folder.string(),
                                        "--out",
                                        out.string(),
                                        "--icd",
                                        counter.icd,
                                        "--plugin",
                                        counter.plugin,
                                        "--seconds",
                                        fmt::format("{:.3f}", simulate)};
    ChildLimits limits;
    limits.budget_seconds = slot_seconds;
    limits.forward_output = false;
    const ChildOutcome o = run_child(argv, limits, {});
    const auto outcome = read_json(out);
    const auto counts = read_json(out.string() + ".counts");
    KernelWorkFacts& w = job.facts;
    w.global_items = c.global_size[0] * c.global_size[1] * c.global_size[2];
    w.global_size = fmt::format("{}", fmt::join(c.global_size.begin(), c.global_size.begin() + c.work_dim, ","));
    if (counts) {
        try {
            fill_counts(w, *counts);
            if (w.method == "exact" && outcome) w.output_check = outcome->value("check", "");
            if (outcome) w.note = outcome->value("note", "");
            w.upper_bound = !w.note.empty();
            return;
        } catch (const std::exception& e) {
            w = KernelWorkFacts{w.kernel};
            w.reason = std::string("the counting plugin's result is unreadable: ") + e.what();
            return;
        }
    }
    w.reason = uncounted_reason(o, outcome, slot_seconds);
}

}  // namespace

ProbeResult work_result(const std::vector<KernelWorkFacts>& work, const WorkCounter& counter, double seconds) {
    ProbeResult r;
    r.id = "trace.work";
    r.layer = "trace";
    r.title = "Work of the hottest kernels, counted under Oclgrind";
    r.wall_seconds = seconds;
    std::size_t counted = 0;
    double simulated = 0;
    for (const auto& w : work) {
        counted += w.counted ? 1 : 0;
        simulated += w.simulate_seconds;
    }
    r.attributes["kernels"] = work.size();
    r.attributes["counted"] = counted;
    r.attributes["simulate_seconds"] = simulated;
    if (!counter.available()) {
        r.status = ProbeStatus::unsupported;
        r.reason = counter.unavailable;
    } else {
        r.status = ProbeStatus::ok;
        if (counted < work.size())
            r.reason =
                fmt::format("{} of {} kernels counted (facts.work gives each one's reason)", counted, work.size());
    }
    return r;
}

WorkCounter find_work_counter() {
    WorkCounter w;
    const fs::path dir = binary_dir();
    const char* plugin_env = std::getenv("CLPROBE_WORK_PLUGIN");
    w.plugin = plugin_env ? first_readable({plugin_env})
                          : first_readable({dir / "libclprobe_work_counter.so",
                                            dir / CLPROBE_INSTALLED_LAYER_DIR / "libclprobe_work_counter.so",
                                            dir / "../lib/clprobe/libclprobe_work_counter.so"});
    const char* icd_env = std::getenv("CLPROBE_OCLGRIND_ICD");
    w.icd = icd_env ? first_readable({icd_env})
                    : first_readable({CLPROBE_OCLGRIND_ICD_PATH, "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
                                      "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so",
                                      "/usr/local/lib/liboclgrind-rt-icd.so"});
    if (w.plugin.empty())
        w.unavailable = plugin_env ? fmt::format("CLPROBE_WORK_PLUGIN={} is not readable", plugin_env)
                                   : "this clprobe was built without its Oclgrind plugin (liboclgrind-dev and "
                                     "llvm-14-dev at build time)";
    else if (w.icd.empty())
        w.unavailable = icd_env ? fmt::format("CLPROBE_OCLGRIND_ICD={} is not readable", icd_env)
                                : "Oclgrind is not installed (Debian: apt install oclgrind)";
    return w;
}

std::vector<KernelWorkFacts> count_hot_kernels(const std::vector<ProgramTrace>& processes,
                                               const std::string& replay_dir, const WorkOptions& options,
                                               const WorkCounter& counter,
                                               const std::function<void(const std::string&)>& progress) {
    std::vector<HotKernel> hot = hottest(processes);
    if (hot.size() > static_cast<std::size_t>(options.kernels)) hot.resize(static_cast<std::size_t>(options.kernels));
    const std::vector<replay::CaptureLoad> loads = replay::read_captures(replay_dir);
    std::vector<CountJob> jobs;
    for (const auto& k : hot) {
        CountJob job{k, capture_for(loads, k.name), {}};
        job.facts.kernel = k.name;
        if (!counter.available())
            job.facts.reason = "work counting is not available: " + counter.unavailable;
        else if (!job.capture)
            job.facts.reason = not_captured_reason(k, options.capture_launch);
        else if (!job.capture->capture)
            job.facts.reason = "its capture is unreadable: " + job.capture->problem;
        else if (job.capture->capture->skipped)
            job.facts.reason = "its capture was skipped: " + *job.capture->capture->skipped;
        jobs.push_back(std::move(job));
    }
    const fs::path work_dir = fs::path(replay_dir).parent_path() / "work";
    ::mkdir(work_dir.c_str(), 0700);  // beside replay/, as private
    // Two at a time: the program has ended, and Oclgrind simulates on one thread per child.
    const std::size_t parallel = 2;
    std::size_t to_count = 0;
    for (const auto& j : jobs)
        to_count += j.facts.reason.empty() ? 1 : 0;
    // Each count may run until the budget's end, less a reserve of `min_slot` for each count not yet
    // started (spread over the workers): a slow count (hashcat's MD5 kernel, rebuilt unoptimised,
    // on a loaded machine) takes the time that quicker ones left, and the whole stays in the budget.
    const double min_slot = options.seconds / (2.0 * static_cast<double>(std::max<std::size_t>(1, to_count)));
    const auto start = std::chrono::steady_clock::now();
    std::mutex lock;
    std::size_t next = 0;
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            double limit;
            {
                const std::lock_guard<std::mutex> guard(lock);
                while (next < jobs.size() && !jobs[next].facts.reason.empty())
                    ++next;
                if (next >= jobs.size()) return;
                i = next++;
                std::size_t not_started = 0;
                for (std::size_t k = next; k < jobs.size(); ++k)
                    not_started += jobs[k].facts.reason.empty() ? 1 : 0;
                const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
                limit = options.seconds - spent -
                        min_slot * static_cast<double>(not_started) / static_cast<double>(parallel);
                if (limit < min_slot) {
                    jobs[i].facts.reason =
                        fmt::format("the counting budget (--work-budget {:.0f} s) was spent", options.seconds);
                    continue;
                }
                if (progress) progress(fmt::format("counting the work of {} under Oclgrind", jobs[i].kernel.name));
            }
            count_one(jobs[i], work_dir, counter, limit, i);
        }
    };
    std::vector<std::thread> workers;
    for (std::size_t t = 0; t < parallel && t < to_count; ++t)
        workers.emplace_back(worker);
    for (auto& t : workers)
        t.join();
    std::vector<KernelWorkFacts> out;
    for (auto& j : jobs) {
        if (j.facts.counted) {
            const LikeLaunches like = like_launches(processes, j.kernel.name, j.facts.global_items);
            j.facts.like_launches = like.seconds.size();
            double like_seconds = 0;
            for (double s : like.seconds)
                like_seconds += s;
            if (like.all_seconds > 0) j.facts.like_share = like_seconds / like.all_seconds;
            if (!like.seconds.empty())
                j.facts.launch_seconds = median_of(like.seconds);
            else if (j.capture && j.capture->capture && j.capture->capture->traced_ns)
                j.facts.launch_seconds = static_cast<double>(*j.capture->capture->traced_ns) * 1e-9;
        }
        out.push_back(std::move(j.facts));
    }
    return out;
}

}  // namespace clprobe

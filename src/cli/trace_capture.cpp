#include "cli/trace_capture.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <charconv>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/core.h>

#include "cli/cli_common.hpp"
#include "cli/exit_codes.hpp"
#include "core/atomic_file.hpp"
#include "core/byte_size.hpp"
#include "core/memory_roofs.hpp"
#include "rules/analysis.hpp"
#include "trace/trace_analysis.hpp"

namespace clprobe {

namespace {

std::uint64_t monotonic_ns() {
    timespec t{};
    clock_gettime(CLOCK_MONOTONIC, &t);
    return static_cast<std::uint64_t>(t.tv_sec) * 1000000000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// Whether the control file's last line opens a window. Async-signal-safe (fstat, pread).
bool control_is_open(int fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || st.st_size == 0) return false;
    char tail[96] = {};
    const off_t from = st.st_size > 95 ? st.st_size - 95 : 0;
    const ssize_t n = pread(fd, tail, 95, from);
    if (n <= 0) return false;
    ssize_t end = n;
    while (end > 0 && tail[end - 1] == '\n')
        --end;
    ssize_t begin = end;
    while (begin > 0 && tail[begin - 1] != '\n')
        --begin;
    return end - begin >= 4 && std::memcmp(tail + begin, "open", 4) == 0;
}

// Appends "open <t>" or "close <t>" (one write on an O_APPEND descriptor: whole lines, whoever
// writes). Async-signal-safe. False when the write failed.
bool append_control(int fd, bool open) {
    char line[64];
    const char* word = open ? "open " : "close ";
    const std::size_t w = std::strlen(word);
    std::memcpy(line, word, w);
    char* end = std::to_chars(line + w, line + sizeof line - 1, monotonic_ns()).ptr;
    *end++ = '\n';
    return ::write(fd, line, static_cast<std::size_t>(end - line)) == end - line;
}

// SIGUSR1 in dormant mode: toggles the window.
int signal_control_fd = -1;
struct sigaction previous_usr1 {};

extern "C" void on_usr1(int) {
    const int saved = errno;
    if (signal_control_fd >= 0) (void)append_control(signal_control_fd, !control_is_open(signal_control_fd));
    errno = saved;
}

void write_file(const std::string& path, const void* data, std::size_t n) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || (n && ::write(fd, data, n) != static_cast<ssize_t>(n)) || ::close(fd) != 0)
        throw OutputError(fmt::format("{}: {}", path, std::strerror(errno)));
}

double seconds_since(std::uint64_t start, std::uint64_t t) {
    return t > start ? static_cast<double>(t - start) * 1e-9 : 0.0;
}

double records_bytes(const std::string& dir) {
    double total = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(dir, ec))
        if (e.path().extension() == ".rec") total += static_cast<double>(e.file_size(ec));
    return total;
}

nlohmann::json findings_json(const std::vector<Finding>& findings) {
    nlohmann::json out = nlohmann::json::array();
    for (const Finding& f : findings) {
        if (f.layer != "trace") continue;
        nlohmann::json j = {{"id", f.id}, {"title", f.title}, {"rank", f.rank}};
        if (f.estimated_gain) j["estimated_gain"] = *f.estimated_gain;
        out.push_back(std::move(j));
    }
    return out;
}

}  // namespace

void add_capture_options(CLI::App* cmd, CaptureOptions& o) {
    cmd->add_option("--delay", o.delay,
                    "Record only commands enqueued from SECONDS after the program starts (the analysis covers the "
                    "window; the program runs untouched)")
        ->check(CLI::Range(0.0, 31536000.0));
    cmd->add_option("--duration", o.duration,
                    "Record only commands enqueued within SECONDS after --delay (default: to the end)")
        ->check(CLI::Range(0.0, 31536000.0));
    cmd->add_option("--capture", o.mode,
                    "all: record from the start; dormant: record nothing until a window is opened (SIGUSR1 to "
                    "clprobe toggles one; or `clprobe capture open|close --records DIR`); each window is analysed "
                    "on its own")
        ->check(CLI::IsMember({"all", "dormant"}));
    cmd->add_option("--max-size", o.max_size,
                    "Cap on the records of all the job's processes together (64M, 1G; 0: none; default 128M): past "
                    "half of it the timeline is sampled, per-kernel and per-transfer totals stay exact");
}

CaptureSession::CaptureSession(const CaptureOptions& o, const std::string& records_dir)
    : options_(o), records_dir_(records_dir) {
    const auto size = parse_byte_size(o.max_size);
    if (!size) throw UsageError(fmt::format("--max-size {}: not a size (64K, 256M, 1G, or bytes)", o.max_size));
    max_bytes_ = *size;
    if (max_bytes_ != 0 && max_bytes_ < 16 * 1024)
        throw UsageError(fmt::format("--max-size {}: below 16K, too small to hold a trace's structure", o.max_size));
    if (o.mode == "dormant" && (o.delay > 0 || o.duration > 0))
        throw UsageError("--capture dormant opens its windows on demand: it takes no --delay or --duration");
    control_path_ = records_dir_ + "/" + capture_control_name;
    std::error_code ec;
    std::filesystem::remove(control_path_, ec);
    if (o.mode == "dormant") write_file(control_path_, "", 0);
}

CaptureSession::~CaptureSession() {
    finish();
}

std::vector<std::string> CaptureSession::start() {
    std::vector<std::string> env;
    if (max_bytes_) {
        // The job's shared counter: bytes used, when half was used, the job's start.
        const std::uint64_t counter[3] = {0, 0, monotonic_ns()};
        const std::string path = records_dir_ + "/space.cnt";
        write_file(path, counter, sizeof counter);
        env.push_back(fmt::format("CLPROBE_TRACE_MAX_BYTES={}", max_bytes_));
        env.push_back("CLPROBE_TRACE_SPACE=" + path);
        // Chunks no larger than the cap needs: a small cap keeps a small file while it runs.
        env.push_back(fmt::format("CLPROBE_TRACE_CHUNK_BYTES={}",
                                  std::clamp<std::uint64_t>(max_bytes_ / 4, 64 * 1024, std::uint64_t{8} << 20)));
    }
    if (options_.delay > 0 || options_.duration > 0) {
        window_from_ = monotonic_ns() + static_cast<std::uint64_t>(options_.delay * 1e9);
        window_to_ = options_.duration > 0 ? window_from_ + static_cast<std::uint64_t>(options_.duration * 1e9) : 0;
        env.push_back(fmt::format("CLPROBE_TRACE_WINDOW={}:{}", window_from_, window_to_));
    }
    if (options_.mode == "dormant") {
        env.push_back(std::string("CLPROBE_TRACE_CONTROL=") + control_path_);
        signal_control_fd = ::open(control_path_.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
        if (signal_control_fd < 0) throw OutputError(fmt::format("{}: {}", control_path_, std::strerror(errno)));
        struct sigaction action {};
        action.sa_handler = on_usr1;
        sigemptyset(&action.sa_mask);
        action.sa_flags = SA_RESTART;
        sigaction(SIGUSR1, &action, &previous_usr1);
        signal_armed_ = true;
        fmt::print(stderr,
                   "[clprobe trace] dormant: nothing is recorded until a window opens: `kill -USR1 {}` toggles one, "
                   "or `clprobe capture open|close --records {}`\n",
                   ::getpid(), records_dir_);
    }
    return env;
}

void CaptureSession::finish() {
    if (!signal_armed_) return;
    sigaction(SIGUSR1, &previous_usr1, nullptr);
    ::close(signal_control_fd);
    signal_control_fd = -1;
    signal_armed_ = false;
}

std::vector<CaptureWindow> CaptureSession::windows(const JobRun& job) const {
    const ChildRun run = job_lifetime(job);
    if (options_.mode == "dormant") {
        std::ifstream in(control_path_);
        std::stringstream text;
        text << in.rdbuf();
        return windows_from_control(text.str(), run.start_ns, run.end_ns);
    }
    if (!windowed()) return {{run.start_ns, run.end_ns}};
    const std::uint64_t from = std::clamp(window_from_, run.start_ns, run.end_ns);
    const std::uint64_t to = window_to_ ? std::clamp(window_to_, run.start_ns, run.end_ns) : run.end_ns;
    if (to <= from) return {};
    return {{from, to}};
}

void CaptureSession::describe(RunReport& report, const ProgramTrace& merged, const JobRun& job) const {
    auto it = std::find_if(report.results.begin(), report.results.end(),
                           [](const ProbeResult& r) { return r.id == trace_probe_id; });
    if (it == report.results.end()) return;
    const std::uint64_t start = job.program.start_ns;
    CaptureFacts capture;
    capture.mode = options_.mode == "dormant" ? "dormant" : windowed() ? "window" : "all";
    capture.max_bytes = static_cast<double>(max_bytes_);
    capture.records_bytes = records_bytes(records_dir_);
    describe_sampling(merged, start, capture);
    const std::vector<CaptureWindow> spans = windows(job);
    nlohmann::json analyses = nlohmann::json::array();
    if (windowed()) {
        const RunReport context = report;
        for (std::size_t i = 0; i < spans.size(); ++i) {
            const CaptureWindow& w = spans[i];
            // With one window the sampled-out totals are all its own; with several they cannot be
            // told apart, so each window's totals are its timeline's.
            const ProgramTrace cut = cut_to_windows(merged, {w}, spans.size() == 1);
            ChildRun run = job.program;
            run.start_ns = w.begin_ns;
            run.end_ns = w.end_ns;
            TraceAnalysis a = analyse_trace(cut, run, bandwidth_roofs_of(report.results));
            capture.windows.push_back(
                {seconds_since(start, w.begin_ns), seconds_since(start, w.end_ns), a.facts.run.opencl_commands});
            // The window alone, through the same rules as the whole run.
            RunReport alone = context;
            std::erase_if(alone.results, [](const ProbeResult& r) { return r.id == trace_probe_id; });
            alone.findings.clear();
            alone.results.push_back(program_probe_result(a));
            analyze(alone);
            nlohmann::json entry = {{"index", i + 1},
                                    {"begin_seconds", capture.windows.back().begin_seconds},
                                    {"end_seconds", capture.windows.back().end_seconds},
                                    {"facts", to_json(a.facts)},
                                    {"findings", findings_json(alone.findings)}};
            analyses.push_back(std::move(entry));
        }
    }
    const bool sampled = capture.sampled_since_seconds || capture.dropped_writes > 0;
    if (!windowed() && !sampled) return;
    auto facts = trace_facts_from_json(it->attributes["facts"]);
    if (!facts) return;
    facts->capture = capture;
    record_trace_facts(*it, *facts);
    if (windowed()) it->attributes["windows"] = std::move(analyses);
}

CommandRunner add_capture_command(CLI::App& app) {
    struct Options {
        std::string action, records;
    };
    auto o = std::make_shared<Options>();
    CLI::App* cmd = app.add_subcommand(
        "capture",
        "Open or close a capture window of a `clprobe trace --capture dormant` (clprobe capture open "
        "--records DIR)");
    cmd->add_option("action", o->action, "open or close")->required()->check(CLI::IsMember({"open", "close"}));
    cmd->add_option("--records", o->records, "The records folder of the dormant trace (its --records DIR)")->required();
    return [o] {
        const std::string path = o->records + "/" + capture_control_name;
        const int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CLOEXEC);
        if (fd < 0) {
            fmt::print(stderr,
                       "clprobe capture: {}: {} (is a `clprobe trace --capture dormant --records {}` running?)\n", path,
                       std::strerror(errno), o->records);
            return exit_code::usage;
        }
        const bool open = o->action == "open";
        if (control_is_open(fd) == open) {
            ::close(fd);
            fmt::print(stderr, "clprobe capture: the window is already {}\n", open ? "open" : "closed");
            return exit_code::ok;
        }
        const bool written = append_control(fd, open);
        if (::close(fd) != 0 || !written) {
            fmt::print(stderr, "clprobe capture: {}: {}\n", path, std::strerror(errno));
            return exit_code::output;
        }
        fmt::print(stderr, "clprobe capture: window {}\n", open ? "opened" : "closed");
        return exit_code::ok;
    };
}

}  // namespace clprobe

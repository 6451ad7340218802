#include "layer/process_stream.hpp"

#include <errno.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "layer/command_log.hpp"
#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/replay_capture.hpp"
#include "layer/space_budget.hpp"
#include "layer/trace_format.hpp"

namespace clprobe::layer {

std::atomic<bool> g_stream_pending{false};

namespace {

// Copied at clInitLayer: a forked child opens its stream from these, whatever the program did to
// its environment since.
std::string* records_dir = nullptr;  // CLPROBE_TRACE_DIR; null in single-file mode
size_t chunk_bytes = size_t{8} << 20;
std::atomic<uint64_t> fork_time{0};  // the child's start: when on_fork_child ran

// The process's start on CLOCK_MONOTONIC, from /proc/self/stat (clock ticks since boot, so 10 ms
// resolution): the layer is loaded at the first OpenCL call, often well after the process began.
// 0 when unreadable.
uint64_t process_start_ns() {
    FILE* f = std::fopen("/proc/self/stat", "r");
    if (!f) return 0;
    char text[1024] = {};
    const size_t n = std::fread(text, 1, sizeof text - 1, f);
    std::fclose(f);
    text[n] = '\0';
    // The command name (field 2) may hold spaces and parentheses: fields resume after the last ')'.
    const char* p = std::strrchr(text, ')');
    if (!p) return 0;
    ++p;
    // Field 22 (starttime) is the 20th after the name: state is field 3.
    for (int field = 3; field < 22 && *p; ++field) {
        while (*p == ' ')
            ++p;
        while (*p && *p != ' ')
            ++p;
    }
    const unsigned long long ticks = std::strtoull(p, nullptr, 10);
    const long hz = sysconf(_SC_CLK_TCK);
    timespec boot{}, mono{};
    if (ticks == 0 || hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &boot) != 0 ||
        clock_gettime(CLOCK_MONOTONIC, &mono) != 0)
        return 0;
    const auto ns_of = [](const timespec& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; };
    const int64_t start_boot = static_cast<int64_t>(ticks) * (1000000000 / hz);
    const int64_t start = start_boot - (ns_of(boot) - ns_of(mono));
    return start > 0 ? static_cast<uint64_t>(start) : 0;
}

// /proc/self/cmdline with its NULs as spaces (RecordLine::text cuts it to fit a record).
std::string command_line() {
    std::string out;
    FILE* f = std::fopen("/proc/self/cmdline", "r");
    if (!f) return out;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0 && out.size() < 4096)
        out.append(buf, n);
    std::fclose(f);
    while (!out.empty() && out.back() == '\0')
        out.pop_back();
    std::replace(out.begin(), out.end(), '\0', ' ');
    return out;
}

// <dir>/<pid>.rec, or <pid>-<n>.rec when that name is taken: a pid the kernel reused within one job,
// or a process that recorded, exec'd another OpenCL program and loaded the layer again.
bool open_in_dir(const std::string& dir) {
    const std::string base = dir + "/" + std::to_string(getpid());
    for (int n = 0; n < 100; ++n) {
        const std::string path = n == 0 ? base + ".rec" : base + "-" + std::to_string(n) + ".rec";
        if (writer().open(path.c_str(), chunk_bytes, true)) return true;
        if (errno != EEXIST) return false;
    }
    return false;
}

// V records of the variables clprobe asked for (the launchers' rank variables): which rank of an
// MPI job this process is, as the launcher told it.
void write_environment() {
    const char* names = std::getenv(trace_format::environment_env);
    if (names == nullptr) return;
    const std::string list(names);
    for (std::size_t pos = 0; pos <= list.size();) {
        const std::size_t comma = std::min(list.find(',', pos), list.size());
        const std::string name = list.substr(pos, comma - pos);
        pos = comma + 1;
        const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
        if (value == nullptr) continue;
        RecordLine v('V');
        v.word(name).text(value);
        emit(v.line());
    }
}

// H, then O and V: who this process is, where it came from and when it started.
void write_header(const char* origin, uint64_t start_ns) {
    RecordLine header('H');
    header.num(trace_format::version).num(static_cast<uint64_t>(getpid())).num(now_ns());
    emit(header.line());
    RecordLine o('O');
    o.num(static_cast<uint64_t>(getppid())).word(origin).num(start_ns).text(command_line());
    emit(o.line());
    write_environment();
}

}  // namespace

bool open_process_stream() {
    if (const char* text = std::getenv("CLPROBE_TRACE_CHUNK_BYTES"))
        chunk_bytes = std::max<size_t>(std::strtoull(text, nullptr, 10), 64 * 1024);
    const char* dir = std::getenv(trace_format::dir_env);
    if (dir && *dir) {
        records_dir = new std::string(dir);
        if (!open_in_dir(*records_dir)) return false;
    } else {
        const char* path = std::getenv(trace_format::file_env);
        if (!path || !*path || !writer().open(path, chunk_bytes, false)) return false;
    }
    write_header("exec", process_start_ns());
    g_recording.store(true);
    return true;
}

bool open_pending_stream() {
    // Only ever taken in a forked child, by its threads' first OpenCL calls.
    static std::mutex* opening = new std::mutex;
    std::lock_guard lock(*opening);
    if (g_recording.load()) return true;
    if (!g_stream_pending.exchange(false)) return false;
    if (!records_dir || !open_in_dir(*records_dir)) return false;
    write_header("fork", fork_time.load());
    g_recording.store(true);
    return true;
}

void on_fork_child() {
    fork_time.store(now_ns());
    g_recording.store(false);
    if (!records_dir) {
        // One file for the whole job (CLPROBE_TRACE_FILE alone, as tests of the layer set it): the
        // mapping is the parent's file, so the child records nothing.
        g_forked_child.store(true);
        writer().abandon();
        return;
    }
    reset_objects_after_fork();
    reset_stages_after_fork();
    reset_space_after_fork();
    reset_replay_after_fork();
    g_stream_pending.store(true);
}

}  // namespace clprobe::layer

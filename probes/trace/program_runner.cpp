#include "trace/program_runner.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "core/launcher_env.hpp"
#include "core/scoped_signals.hpp"

namespace clprobe {

namespace {

std::atomic<pid_t> child_pid{0};
std::atomic<int> received_signal{0};

// Another process's kill() has si_code <= 0 (SI_USER, SI_QUEUE, SI_TKILL); a terminal's Ctrl-C
// comes from the kernel to the whole foreground process group, the child included, so forwarding
// that one would deliver it twice.
void on_signal(int signal_number, siginfo_t* info, void*) {
    received_signal.store(signal_number);
    const pid_t pid = child_pid.load();
    if (pid > 0 && info && info->si_code <= 0) ::kill(pid, signal_number);
}

struct sigaction forwarding_action() {
    struct sigaction action {};
    action.sa_sigaction = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    return action;
}

std::uint64_t now_ns() {
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
            .count());
}

bool maps_opencl(pid_t pid) {
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("libOpenCL.so") != std::string::npos) return true;
    return false;
}

// The child's environment: clprobe's own plus the layer and the records file, prepared before
// fork because a child of a threaded process may only call async-signal-safe functions.
std::vector<std::string> child_environment(const TracedLaunch& launch) {
    std::string layers = launch.layer_library;
    if (const char* existing = std::getenv("OPENCL_LAYERS"); existing && *existing)
        layers += std::string(":") + existing;
    std::vector<std::string> env;
    for (char** e = environ; e && *e; ++e) {
        const std::string_view entry(*e);
        if (entry.starts_with("OPENCL_LAYERS=") || entry.starts_with("CLPROBE_TRACE_FILE=") ||
            entry.starts_with("CLPROBE_TRACE_DIR=") || entry.starts_with("CLPROBE_TRACE_WINDOW=") ||
            entry.starts_with("CLPROBE_TRACE_CONTROL=") || entry.starts_with("CLPROBE_TRACE_MAX_BYTES=") ||
            entry.starts_with("CLPROBE_TRACE_SPACE=") || entry.starts_with("CLPROBE_TRACE_ENV="))
            continue;
        env.emplace_back(entry);
    }
    env.push_back("OPENCL_LAYERS=" + layers);
    env.push_back("CLPROBE_TRACE_DIR=" + launch.records_dir);
    env.insert(env.end(), launch.extra_env.begin(), launch.extra_env.end());
    // Each process records its launcher's rank variables: `clprobe trace -- mpirun ...` names the ranks.
    std::string names;
    for (const auto& name : launcher_variables())
        names += (names.empty() ? "" : ",") + name;
    env.push_back("CLPROBE_TRACE_ENV=" + names);
    return env;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

}  // namespace

std::optional<ProgramNotRunnable> check_runnable(const std::string& name) {
    const auto verdict = [](const std::string& path) -> std::optional<ProgramNotRunnable> {
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0) return ProgramNotRunnable{127, path + ": not found"};
        if (S_ISDIR(st.st_mode)) return ProgramNotRunnable{126, path + ": is a directory"};
        if (::access(path.c_str(), X_OK) != 0) return ProgramNotRunnable{126, path + ": not executable"};
        return std::nullopt;
    };
    if (name.empty()) return ProgramNotRunnable{127, "empty program name"};
    if (name.find('/') != std::string::npos) return verdict(name);
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::optional<ProgramNotRunnable> last;
    for (std::size_t start = 0; start <= dirs.size();) {
        const auto colon = dirs.find(':', start);
        std::string dir = dirs.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        start = colon == std::string::npos ? dirs.size() + 1 : colon + 1;
        auto v = verdict((dir.empty() ? "." : dir) + "/" + name);
        if (!v) return std::nullopt;
        if (v->exit_code == 126) last = v;  // found, but not runnable: say so rather than "not found"
    }
    if (last) return last;
    return ProgramNotRunnable{127, name + ": not found in PATH"};
}

namespace {

void note_reaped(JobRun& job, pid_t pid, int status) {
    ReapedProcess r;
    r.pid = pid;
    r.end_ns = now_ns();
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    job.reaped.push_back(r);
}

// Waits for the program, reaping any orphan that reaches clprobe meanwhile; with a timeout, polls
// so that a program past it can be ended: SIGTERM (its chance to flush), then SIGKILL after a
// grace period.
void wait_for_program(pid_t pid, double timeout_seconds, int& status, bool& timed_out, JobRun& job) {
    using Clock = std::chrono::steady_clock;
    constexpr double grace_seconds = 2;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    bool killed = false;
    for (;;) {
        int got_status = 0;
        // Blocking when there is no timeout to watch: any child's end wakes it.
        const pid_t got = ::waitpid(-1, &got_status, timeout_seconds > 0 ? WNOHANG : 0);
        if (got > 0) {
            note_reaped(job, got, got_status);
            if (got == pid) {
                status = got_status;
                return;
            }
            continue;
        }
        if (got < 0 && errno != EINTR) return;
        if (timeout_seconds <= 0) continue;
        if (!timed_out && elapsed() > timeout_seconds) {
            timed_out = true;
            ::kill(pid, SIGTERM);
        } else if (timed_out && !killed && elapsed() > timeout_seconds + grace_seconds) {
            killed = true;
            ::kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

// Every process descended from clprobe (through /proc's parent links): what is left of the job.
std::vector<int> descendants_of(pid_t root) {
    std::vector<std::pair<int, int>> parent_of;  // pid, ppid
    if (DIR* d = ::opendir("/proc")) {
        while (const dirent* e = ::readdir(d)) {
            const int pid = std::atoi(e->d_name);
            if (pid <= 0) continue;
            std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
            std::string text;
            std::getline(stat, text);
            const auto close = text.rfind(')');
            if (close == std::string::npos) continue;
            char state = 0;
            int ppid = 0;
            if (std::sscanf(text.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && state != 'Z')
                parent_of.emplace_back(pid, ppid);
        }
        ::closedir(d);
    }
    std::vector<int> out{static_cast<int>(root)};
    for (std::size_t i = 0; i < out.size(); ++i)
        for (const auto& [pid, ppid] : parent_of)
            if (ppid == out[i]) out.push_back(pid);
    out.erase(out.begin());
    return out;
}

// After the program ended: its descendants still running are reaped as they end (each was
// orphaned to clprobe, or descends from one that was) until none is left, the limit passes or
// clprobe is interrupted. Those left are listed, not killed: a daemon is meant to outlive it.
void wait_for_descendants(double limit_seconds, JobRun& job) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    for (;;) {
        int status = 0;
        const pid_t got = ::waitpid(-1, &status, WNOHANG);
        if (got > 0) {
            note_reaped(job, got, status);
            continue;
        }
        if (got < 0 && errno == ECHILD) break;  // no descendant left
        if (received_signal != 0 || std::chrono::duration<double>(Clock::now() - start).count() >= limit_seconds) {
            job.still_running = descendants_of(::getpid());
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace

LaunchOutcome run_traced_program(const TracedLaunch& launch) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    const ScopedInterruptHandlers handlers(forwarding_action());
    received_signal = 0;
    LaunchOutcome out;
    out.run.argv = launch.argv;
    out.run.start_ns = now_ns();
    std::vector<std::string> env = child_environment(launch), args = launch.argv;
    const std::vector<char*> envp = pointers_to(env), argv = pointers_to(args);
    // Orphans of the job are reparented to clprobe rather than to init, so clprobe sees them end.
    const bool subreaper = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
    const pid_t pid = ::fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // clprobe ignores SIGPIPE (src/cli/main.cpp); the program gets the default it would
        // have had without clprobe, so `trace -- prog | head` behaves as `prog | head`.
        ::signal(SIGPIPE, SIG_DFL);
        ::execvpe(argv[0], argv.data(), envp.data());
        const int e = errno;
        [[maybe_unused]] auto written = ::write(pipe_fds[1], &e, sizeof e);
        ::_exit(e == ENOENT ? 127 : 126);
    }
    child_pid = pid;
    ::close(pipe_fds[1]);
    // The pipe closes at a successful exec (CLOEXEC) or carries exec's errno: only after that do
    // the child's mappings stop being a copy of clprobe's own (which include libOpenCL).
    int exec_errno = 0;
    ssize_t got = 0;
    while ((got = ::read(pipe_fds[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR) {
    }
    ::close(pipe_fds[0]);
    if (got == sizeof exec_errno) out.exec_error = std::string(launch.argv[0]) + ": " + std::strerror(exec_errno);

    // Sampled from outside, so a loader that ignores OPENCL_LAYERS is still told apart from a
    // program that never touched OpenCL.
    std::atomic<bool> done{false}, linked{false};
    std::thread watcher([&] {
        while (!out.exec_error && !done && !linked) {
            if (maps_opencl(pid)) linked = true;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    });
    int status = 0;
    wait_for_program(pid, launch.timeout_seconds, status, out.run.timed_out, out.job);
    out.run.end_ns = now_ns();
    child_pid = 0;
    done = true;
    watcher.join();
    if (WIFEXITED(status)) out.run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.run.signal = WTERMSIG(status);
    out.run.interrupted = received_signal != 0;
    out.run.linked_opencl = linked;

    if (!out.exec_error && subreaper) wait_for_descendants(launch.descendants_wait_seconds, out.job);
    if (subreaper) ::prctl(PR_SET_CHILD_SUBREAPER, 0);
    out.job.program = out.run;
    out.job.wait_limit_seconds = launch.descendants_wait_seconds;
    // The job ends with its last process: the last one reaped, or now when some are still running.
    out.job.end_ns = out.run.end_ns;
    for (const auto& r : out.job.reaped)
        out.job.end_ns = std::max(out.job.end_ns, r.end_ns);
    if (!out.job.still_running.empty()) out.job.end_ns = now_ns();
    out.run.interrupted = received_signal != 0;
    out.job.program.interrupted = out.run.interrupted;
    return out;
}

int shell_status(const ChildRun& run) {
    if (run.signal) return 128 + *run.signal;
    return run.exit_code.value_or(1);
}

}  // namespace clprobe

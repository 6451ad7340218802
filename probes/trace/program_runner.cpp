#include "trace/program_runner.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string_view>
#include <thread>

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
        if (entry.starts_with("OPENCL_LAYERS=") || entry.starts_with("CLPROBE_TRACE_FILE=")) continue;
        env.emplace_back(entry);
    }
    env.push_back("OPENCL_LAYERS=" + layers);
    env.push_back("CLPROBE_TRACE_FILE=" + launch.records_file);
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

// Waits for the program; with a timeout, polls so that a program past it can be ended: SIGTERM
// (its chance to flush), then SIGKILL after a grace period.
void wait_for_program(pid_t pid, double timeout_seconds, int& status, bool& timed_out) {
    if (timeout_seconds <= 0) {
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        return;
    }
    using Clock = std::chrono::steady_clock;
    constexpr double grace_seconds = 2;
    const auto start = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
    bool killed = false;
    for (;;) {
        const pid_t got = ::waitpid(pid, &status, WNOHANG);
        if (got == pid || (got < 0 && errno != EINTR)) return;
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
    wait_for_program(pid, launch.timeout_seconds, status, out.run.timed_out);
    out.run.end_ns = now_ns();
    child_pid = 0;
    done = true;
    watcher.join();

    if (WIFEXITED(status)) out.run.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) out.run.signal = WTERMSIG(status);
    out.run.interrupted = received_signal != 0;
    out.run.linked_opencl = linked;
    return out;
}

int shell_status(const ChildRun& run) {
    if (run.signal) return 128 + *run.signal;
    return run.exit_code.value_or(1);
}

}  // namespace clprobe

#include "runtime/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "core/child_channel.hpp"
#include "core/stop_points.hpp"

namespace clprobe {

namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t tail_bytes = 4096;
// How long a reaped child's pipes may stay open (a grandchild holding them) before we stop reading.
constexpr double drain_seconds = 0.5;

double since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// In the forked child, before exec: only async-signal-safe calls.
[[noreturn]] void exec_child(char* const* argv, int channel, int output, pid_t parent) {
    // Dies with clprobe; a parent already gone before this line is caught by the check below.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Above 3 first, so moving one onto fd 1, 2 or 3 cannot overwrite the other.
    const int c = ::fcntl(channel, F_DUPFD_CLOEXEC, 10), o = ::fcntl(output, F_DUPFD_CLOEXEC, 10);
    const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (c < 0 || o < 0 || null_in < 0) ::_exit(127);
    // dup2 clears close-on-exec on the target, so exactly 0-3 reach the program.
    if (::dup2(null_in, 0) < 0 || ::dup2(o, 1) < 0 || ::dup2(o, 2) < 0 || ::dup2(c, 3) < 0) ::_exit(127);
#ifdef SYS_close_range
    // Descriptors the driver opened without close-on-exec stay out of the child too.
    ::syscall(SYS_close_range, 4u, ~0u, 0u);
#endif
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execv(argv[0], argv);
    ::_exit(127);
}

void keep_tail(std::string& tail, const char* data, std::size_t n) {
    tail.append(data, n);
    if (tail.size() > tail_bytes) tail.erase(0, tail.size() - tail_bytes);
}

// Reads what is there; false at end of file (or an error), when the descriptor is closed.
bool drain(int& fd, std::string* tail, ChildChannelReader* channel) {
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            if (channel) channel->feed(std::string_view(buf, static_cast<std::size_t>(n)));
            if (tail) {
                keep_tail(*tail, buf, static_cast<std::size_t>(n));
                // The child's driver chatter still reaches the user, as it did in one process.
                [[maybe_unused]] const ssize_t w = ::write(STDERR_FILENO, buf, static_cast<std::size_t>(n));
            }
            if (static_cast<std::size_t>(n) < sizeof buf) return true;
            continue;
        }
        if (n < 0 && (errno == EINTR)) continue;
        if (n < 0 && errno == EAGAIN) return true;
        ::close(fd);
        fd = -1;
        return false;
    }
}

}  // namespace

std::string signal_name(int signal_number) {
    const char* abbrev = ::sigabbrev_np(signal_number);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal_number);
}

ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits) {
    ChildOutcome out;
    const auto start = Clock::now();
    int channel[2], output[2];
    if (::pipe2(channel, O_CLOEXEC) != 0) {
        out.spawn_error = std::string("pipe: ") + std::strerror(errno);
        return out;
    }
    if (::pipe2(output, O_CLOEXEC) != 0) {
        out.spawn_error = std::string("pipe: ") + std::strerror(errno);
        ::close(channel[0]);
        ::close(channel[1]);
        return out;
    }
    // Built before fork: the child may not allocate.
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) exec_child(args.data(), channel[1], output[1], parent);
    ::close(channel[1]);
    ::close(output[1]);
    if (pid < 0) {
        out.spawn_error = std::string("fork: ") + std::strerror(errno);
        ::close(channel[0]);
        ::close(output[0]);
        return out;
    }
    int channel_fd = channel[0], output_fd = output[0];
    for (const int fd : {channel_fd, output_fd})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

    ChildChannelReader reader;
    bool reaped = false;
    int status = 0;
    Clock::time_point reaped_at{}, signalled_at{}, result_at{};
    for (;;) {
        pollfd fds[2];
        nfds_t n = 0;
        for (const int fd : {channel_fd, output_fd})
            if (fd >= 0) fds[n++] = {fd, POLLIN, 0};
        if (n > 0)
            ::poll(fds, n, 100);  // wakes for output, a signal (EINTR), or the periodic checks below
        else
            ::usleep(20000);
        if (channel_fd >= 0) drain(channel_fd, nullptr, &reader);
        if (output_fd >= 0) drain(output_fd, &out.output_tail, nullptr);
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            reaped_at = Clock::now();
        }
        if (reaped) {
            if ((channel_fd < 0 && output_fd < 0) || since(reaped_at) > drain_seconds) break;
            continue;
        }
        if (reader.result() && !out.killed_after_result) {
            if (result_at == Clock::time_point{}) result_at = Clock::now();
            if (since(result_at) > limits.exit_seconds) {
                out.killed_after_result = true;
                ::kill(pid, SIGKILL);
            }
            continue;
        }
        if (out.stopped == ChildOutcome::Stop::none) {
            const bool interrupted = interrupt_requested();
            if (interrupted || since(start) > limits.budget_seconds) {
                out.stopped = interrupted ? ChildOutcome::Stop::interrupt : ChildOutcome::Stop::budget;
                out.last_signal_sent = SIGTERM;
                ::kill(pid, SIGTERM);
                signalled_at = Clock::now();
            }
        } else if (out.last_signal_sent == SIGTERM && since(signalled_at) > limits.grace_seconds) {
            out.last_signal_sent = SIGKILL;
            ::kill(pid, SIGKILL);
        }
    }
    for (const int fd : {channel_fd, output_fd})
        if (fd >= 0) ::close(fd);
    if (WIFEXITED(status)) {
        out.exited = true;
        out.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        out.signal = WTERMSIG(status);
    }
    out.breadcrumb = reader.last_breadcrumb();
    out.result = reader.result();
    out.trace = reader.trace();
    out.seconds = since(start);
    return out;
}

}  // namespace clprobe

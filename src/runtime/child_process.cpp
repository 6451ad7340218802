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
[[noreturn]] void exec_child(char* const* argv, int channel, int go, int output, pid_t parent) {
    // Dies with clprobe; a parent already gone before this line is caught by the check below.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    // Above 4 first, so moving one onto fd 1 to 4 cannot overwrite another.
    const int c = ::fcntl(channel, F_DUPFD_CLOEXEC, 10), g = ::fcntl(go, F_DUPFD_CLOEXEC, 10),
              o = ::fcntl(output, F_DUPFD_CLOEXEC, 10);
    const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (c < 0 || g < 0 || o < 0 || null_in < 0) ::_exit(127);
    // dup2 clears close-on-exec on the target, so exactly 0-4 reach the program.
    if (::dup2(null_in, 0) < 0 || ::dup2(o, 1) < 0 || ::dup2(o, 2) < 0 || ::dup2(c, 3) < 0 || ::dup2(g, 4) < 0)
        ::_exit(127);
#ifdef SYS_close_range
    // Descriptors the driver opened without close-on-exec stay out of the child too.
    ::syscall(SYS_close_range, 5u, ~0u, 0u);
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
bool drain(int& fd, std::string* tail, ChildChannelReader* channel, bool forward = true) {
    char buf[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            if (channel) channel->feed(std::string_view(buf, static_cast<std::size_t>(n)));
            if (tail) {
                keep_tail(*tail, buf, static_cast<std::size_t>(n));
                // The child's driver chatter still reaches the user, as it did in one process.
                if (forward) [[maybe_unused]]
                    const ssize_t w = ::write(STDERR_FILENO, buf, static_cast<std::size_t>(n));
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

namespace {

// The pipes of one child: its channel and output (we read), its go pipe (we write).
struct ChildPipes {
    int channel[2] = {-1, -1}, go[2] = {-1, -1}, output[2] = {-1, -1};
    ~ChildPipes() {
        for (int* p : {channel, go, output})
            for (int i = 0; i < 2; ++i)
                if (p[i] >= 0) ::close(p[i]);
    }
    // After fork: the parent keeps its ends only.
    void keep_parent_ends() {
        for (int* fd : {&channel[1], &go[0], &output[1]}) {
            ::close(*fd);
            *fd = -1;
        }
    }
};

// Hands a result or trace message to the conversation.
void dispatch(const ChildMessage& m, const ChildConversation& c) {
    if (m.kind == ChildMessage::Kind::result && c.on_result) c.on_result(m.text);
    if (m.kind == ChildMessage::Kind::trace && c.on_trace) c.on_trace(m.text);
}

}  // namespace

ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits,
                       const ChildConversation& conversation) {
    ChildOutcome out;
    const auto start = Clock::now();
    ChildPipes pipes;
    for (int* p : {pipes.channel, pipes.go, pipes.output})
        if (::pipe2(p, O_CLOEXEC) != 0) {
            out.spawn_error = std::string("pipe: ") + std::strerror(errno);
            return out;
        }
    // Built before fork: the child may not allocate.
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) exec_child(args.data(), pipes.channel[1], pipes.go[0], pipes.output[1], parent);
    pipes.keep_parent_ends();
    if (pid < 0) {
        out.spawn_error = std::string("fork: ") + std::strerror(errno);
        return out;
    }
    int& channel_fd = pipes.channel[0];
    int& output_fd = pipes.output[0];
    for (const int fd : {channel_fd, output_fd})
        ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);

    ChildChannelReader reader;
    bool reaped = false;
    int status = 0;
    Clock::time_point reaped_at{}, signalled_at{}, delivered_at{}, probe_start = start;
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
        if (output_fd >= 0) drain(output_fd, &out.output_tail, nullptr, limits.forward_output);
        while (reader.has_message()) {
            const ChildMessage m = reader.take_message();
            if (m.kind != ChildMessage::Kind::start) {
                dispatch(m, conversation);
                continue;
            }
            // Never started once we signalled it, or once it is gone.
            const bool go = !reaped && out.stopped == ChildOutcome::Stop::none && conversation.on_start &&
                            conversation.on_start(m.text);
            const char answer = go ? 'g' : 'q';
            // A child already dead makes this EPIPE (SIGPIPE is ignored in clprobe): nothing to do.
            [[maybe_unused]] const ssize_t w = ::write(pipes.go[1], &answer, 1);
            if (go) probe_start = Clock::now();
        }
        if (!reaped && ::waitpid(pid, &status, WNOHANG) == pid) {
            reaped = true;
            reaped_at = Clock::now();
        }
        if (reaped) {
            if ((channel_fd < 0 && output_fd < 0) || since(reaped_at) > drain_seconds) break;
            continue;
        }
        if (conversation.all_delivered && conversation.all_delivered() && !out.killed_after_results) {
            if (delivered_at == Clock::time_point{}) delivered_at = Clock::now();
            if (since(delivered_at) > limits.exit_seconds) {
                out.killed_after_results = true;
                ::kill(pid, SIGKILL);
            }
            continue;
        }
        if (out.stopped == ChildOutcome::Stop::none) {
            const bool interrupted = interrupt_requested();
            if (interrupted || since(probe_start) > limits.budget_seconds) {
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
    // A result that arrived with the last bytes.
    while (reader.has_message()) {
        const ChildMessage m = reader.take_message();
        if (m.kind != ChildMessage::Kind::start) dispatch(m, conversation);
    }
    if (WIFEXITED(status)) {
        out.exited = true;
        out.exit_status = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        out.signal = WTERMSIG(status);
    }
    out.breadcrumb = reader.last_breadcrumb();
    out.seconds = since(start);
    out.seconds_in_probe = since(probe_start);
    return out;
}

}  // namespace clprobe

#pragma once
// Starts a program (fork + exec, never a bare fork: the parent may hold an OpenCL driver's threads
// and locks, which a forked copy would inherit mid-use) and supervises it: its channel (fd 3 in
// the child, core/child_channel) and its stdout and stderr (forwarded to ours, the tail kept) are
// read as they arrive; past its budget, or when this process is interrupted, it gets SIGTERM, then
// SIGKILL after a grace period. It dies with us (PR_SET_PDEATHSIG), so a killed clprobe leaves no
// child measuring behind it.
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

struct ChildLimits {
    double budget_seconds = 60;  // then SIGTERM
    double grace_seconds = 2;    // after SIGTERM, then SIGKILL
    // After its result arrived, how long it may take to exit before SIGKILL (a driver that hangs
    // in its teardown): the result stands either way.
    double exit_seconds = 2;
};

struct ChildOutcome {
    enum class Stop { none, budget, interrupt };  // why we signalled it, if we did
    std::string spawn_error;                      // fork or pipe failed: nothing ran
    bool exited = false;                          // exited on its own; exit_status holds the code
    int exit_status = 0;
    int signal = 0;  // the signal that ended it; 0 when it exited
    Stop stopped = Stop::none;
    int last_signal_sent = 0;          // SIGTERM, or SIGKILL when the grace ran out
    bool killed_after_result = false;  // sent its result, then did not exit in time
    std::string breadcrumb;            // the child's last "B" line: the command it was in
    std::optional<std::string> result, trace;
    std::string output_tail;  // the end of its stdout and stderr, for a crash report
    double seconds = 0;
};

// Runs `argv` (argv[0] the executable's path) to its end. Never throws.
ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits);

// "SIGSEGV"; "signal 42" for one without a name.
std::string signal_name(int signal_number);

}  // namespace clprobe

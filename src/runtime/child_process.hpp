#pragma once
// Starts a program (fork + exec, never a bare fork: the parent may hold an OpenCL driver's threads
// and locks, which a forked copy would inherit mid-use) and supervises it: its channel (fd 3 in
// the child, core/child_channel) and its stdout and stderr (forwarded to ours, the tail kept) are
// read as they arrive, and its "S" requests answered on fd 4. Past its budget, or when this
// process is interrupted, it gets SIGTERM, then SIGKILL after a grace period. It dies with us
// (PR_SET_PDEATHSIG), so a killed clprobe leaves no child measuring behind it.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

struct ChildLimits {
    // From the start, and again from each 'g' the parent sends: the budget of the probe the
    // child is running; then SIGTERM.
    double budget_seconds = 60;
    double grace_seconds = 2;  // after SIGTERM, then SIGKILL
    // After its last expected result arrived, how long it may take to exit before SIGKILL (a
    // driver that hangs in its teardown): the results stand either way.
    double exit_seconds = 2;
    // Its stdout and stderr also reach ours (a probe's driver chatter, as in one process); off for
    // children whose output is only evidence (a simulator's messages): the tail is kept either way.
    bool forward_output = true;
};

// What the supervisor hands to its caller as the child speaks.
struct ChildConversation {
    // "S <probe id>": answer true to let it start (the budget clock restarts), false to stop it.
    std::function<bool(const std::string& probe_id)> on_start;
    std::function<void(const std::string& json)> on_result;
    std::function<void(const std::string& json)> on_trace;
    // True once every result the child owes has arrived: it has exit_seconds left to exit.
    std::function<bool()> all_delivered;
};

struct ChildOutcome {
    enum class Stop { none, budget, interrupt };  // why we signalled it, if we did
    std::string spawn_error;                      // fork or pipe failed: nothing ran
    bool exited = false;                          // exited on its own; exit_status holds the code
    int exit_status = 0;
    int signal = 0;  // the signal that ended it; 0 when it exited
    Stop stopped = Stop::none;
    int last_signal_sent = 0;           // SIGTERM, or SIGKILL when the grace ran out
    bool killed_after_results = false;  // sent every result, then did not exit in time
    std::string breadcrumb;             // where its last probe was: the last "B" since an "S" or "R"
    std::string output_tail;            // the end of its stdout and stderr, for a crash report
    double seconds = 0;                 // since it started
    double seconds_in_probe = 0;        // since its last 'g' (or start): the probe it was in
};

// Runs `argv` (argv[0] the executable's path) to its end. Never throws (the conversation's
// callbacks must not either).
ChildOutcome run_child(const std::vector<std::string>& argv, const ChildLimits& limits,
                       const ChildConversation& conversation);

// "SIGSEGV"; "signal 42" for one without a name.
std::string signal_name(int signal_number);

}  // namespace clprobe

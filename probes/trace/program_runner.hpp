#pragma once
// Runs the user's program as a child of clprobe with the trace layer loaded, and watches it from
// outside: its lifetime on the host clock, how it ended, whether it mapped an OpenCL library, and
// signals sent to clprobe (forwarded to it). Its stdin, stdout and stderr are clprobe's own,
// untouched, so the program's output is what it would be without clprobe.
#include <optional>
#include <string>
#include <vector>

#include "trace/job_trace.hpp"

namespace clprobe {

// A program that cannot be started; exit codes as a shell gives them (127 not found, 126 found
// but not executable).
struct ProgramNotRunnable {
    int exit_code = 127;
    std::string message;
};

// Finds `name` as execvp would (a name with a '/' is a path, otherwise each $PATH entry).
std::optional<ProgramNotRunnable> check_runnable(const std::string& name);

struct TracedLaunch {
    std::vector<std::string> argv;
    std::string layer_library;  // loaded through OPENCL_LAYERS
    std::string records_dir;    // CLPROBE_TRACE_DIR: a file per process
    // --timeout: past it the program gets SIGTERM, then SIGKILL 2 s later; 0: no limit.
    double timeout_seconds = 0;
    // --wait-descendants: how long descendants still running after the program ended are waited
    // for (then named in the report and left running); 0: not at all.
    double descendants_wait_seconds = 10;
    // More of the layer's environment ("NAME=value": capture windows, bounded space).
    std::vector<std::string> extra_env;
};

// Starts the program and waits for it, then for its descendants. clprobe is the job's subreaper
// (PR_SET_CHILD_SUBREAPER) while it runs, so a descendant whose parent ended (a daemonised child)
// becomes clprobe's to reap, with its exit status; once none is left, or the wait limit passed,
// the job is over. SIGINT and SIGTERM sent to clprobe by another process are forwarded to the
// program (a terminal's Ctrl-C reaches both already); either marks the run interrupted and ends the
// wait for descendants. Throws std::runtime_error when fork fails, ProgramNotRunnable-worthy failures
// of exec come back as exit code 126/127 with `exec_error` set.
struct LaunchOutcome {
    ChildRun run;  // the program itself
    JobRun job;    // the program and its descendants
    std::optional<std::string> exec_error;
};
LaunchOutcome run_traced_program(const TracedLaunch& launch);

// The shell's status for how the child ended: its exit code, or 128 + the signal that killed it.
int shell_status(const ChildRun& run);

}  // namespace clprobe

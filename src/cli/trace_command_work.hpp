#pragma once
// `clprobe trace --work N` (docs/trace.md, "How work is counted"): the N kernels with the most
// device time have the work of one launch counted — their launch as the layer captured it,
// replayed once under Oclgrind with clprobe's counting plugin, each in a child process with a time
// budget (`clprobe __count-work`), so a simulator crash or hang costs that kernel's count only.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "core/kernel_work_facts.hpp"
#include "core/report.hpp"
#include "trace/program_trace.hpp"

namespace clprobe {

struct WorkOptions {
    int capture_launch = 2;  // which launch of a kernel the layer captured (ReplayOptions::capture_launch)
    int kernels = 5;         // --work N: the hottest N kernels; 0: off
    double seconds = 30;     // --work-budget: wall time all counting may take
    bool enabled() const { return kernels > 0; }
};

void add_work_options(CLI::App* cmd, WorkOptions& o);

// What counting needs on this machine: clprobe's plugin and Oclgrind's ICD library.
struct WorkCounter {
    std::string plugin, icd;
    std::string unavailable;  // why counting cannot run here; empty when it can
    bool available() const { return unavailable.empty(); }
};
// The plugin next to the clprobe binary (or where an install puts it; CLPROBE_WORK_PLUGIN names
// another) and Oclgrind's ICD library (CLPROBE_OCLGRIND_ICD, else where Oclgrind's packages put it).
WorkCounter find_work_counter();

// The `kernels` hottest kernels of the job by device time, each counted from its capture under
// `replay_dir` (or uncounted, with the reason), hottest first. Runs two children at a time and
// stops starting new ones when the budget is spent. `progress` may be empty.
std::vector<KernelWorkFacts> count_hot_kernels(const std::vector<ProgramTrace>& processes,
                                               const std::string& replay_dir, const WorkOptions& options,
                                               const WorkCounter& counter,
                                               const std::function<void(const std::string&)>& progress);

// The probe result trace.work: how long counting took (its wall_seconds: what --work added to the
// trace), how many kernels were counted, and, when counting cannot run here, unsupported with why.
ProbeResult work_result(const std::vector<KernelWorkFacts>& work, const WorkCounter& counter, double seconds);

}  // namespace clprobe

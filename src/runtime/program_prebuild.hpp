#pragma once
// Builds a run's kernel programs ahead of its device probes, in parallel: one builder process
// (`clprobe __prebuild`) per hardware thread, each building its share through the KernelLibrary
// the probes use. What it leaves behind is the point: the driver's on-disk cache (PoCL's kcache)
// and, for a driver without one, clprobe's binary cache, so the probes' own builds become loads.
//
// Processes, not threads: PoCL serialises the builds of one process behind its compiler lock, and
// a compiler that crashes or hangs takes its builder down, not clprobe. The parent holds its own
// context already (the drift monitor); the builders open theirs, as the probe children do.
//
// A builder can also run probes warm-up only (runtime/sampler, set_warm_up_only) after its builds:
// one launch per variant, at the probe's shapes, so the code a driver compiles at first launch
// (PoCL: a work-group function per local size) is in its cache before the probe runs.
//
// It is an optimisation only: a builder that fails, crashes or overruns is forgotten (its probes
// build what it did not), and it ends with clprobe's interruption like any child (SIGTERM).
#include <string>
#include <vector>

#include "core/program_plan.hpp"

namespace clprobe {

struct PrebuildSettings {
    std::string executable;        // /proc/self/exe
    std::string device_selector;   // "P:D", the device the probes open
    std::string kernel_dir;        // the probes' --kernel-dir: the builders build the same sources
    std::string run_options_json;  // runtime/run_options_json, for the probes a builder warms up
    bool use_cache = true;
    double budget_seconds = 120;  // per builder; then SIGTERM, and its probes build the rest
};

struct PrebuildOutcome {
    std::size_t programs = 0;
    std::size_t workers = 0;
    std::size_t failed_workers = 0;  // exited non-zero, crashed or overran
    double seconds = 0;
};

// One builder per share (core/program_plan, plan_builders); blocks until every one has ended.
// Never throws.
PrebuildOutcome prebuild_programs(const std::vector<BuilderShare>& shares, const PrebuildSettings& settings);

}  // namespace clprobe

#pragma once
// Capture windows and bounded space for `clprobe trace` (docs/trace.md, "Capture windows and
// bounded space"): the options, the files the layer reads in the records folder (the control file
// windows are opened and closed through, the job's shared byte counter), SIGUSR1 while the program
// runs, and after it the windows the analysis covers, each analysed on its own.
//
// `clprobe capture open|close --records DIR` opens or closes a window of a dormant trace from
// another shell: it appends to the control file, which every process of the job polls, so the
// program itself is never signalled.
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "core/report.hpp"
#include "trace/capture_windows.hpp"
#include "trace/job_trace.hpp"

namespace clprobe {

struct CaptureOptions {
    double delay = 0;     // --delay: seconds after the start before recording
    double duration = 0;  // --duration: seconds recorded; 0 to the end
    std::string mode = "all";
    // 128M rather than the 256M the budget allows: clprobe's analysis holds about 1 KiB per
    // command of the timeline, so 256M of records (1.5 million commands) would take it past 1 GiB
    // (docs/trace.md, "Bounded-space benchmark").
    std::string max_size = "128M";
};

void add_capture_options(CLI::App* cmd, CaptureOptions& o);

// The control file in a records folder.
inline constexpr const char* capture_control_name = "capture.ctl";

class CaptureSession {
  public:
    // Checks the options (UsageError) and prepares the control and counter files in `records_dir`.
    CaptureSession(const CaptureOptions& o, const std::string& records_dir);
    ~CaptureSession();
    CaptureSession(const CaptureSession&) = delete;
    CaptureSession& operator=(const CaptureSession&) = delete;

    // The layer's environment; the fixed window (--delay/--duration) starts counting now. In
    // dormant mode SIGUSR1 to clprobe toggles a window from now until finish().
    std::vector<std::string> start();
    // After the program (and its descendants) ended: SIGUSR1 back to what it was.
    void finish();

    bool windowed() const { return options_.mode == "dormant" || options_.delay > 0 || options_.duration > 0; }
    // The windows to analyse, within the job's lifetime.
    std::vector<CaptureWindow> windows(const JobRun& job) const;
    // The capture facts (windows, sampling, sizes) added to the trace.program result, and each
    // window's own stage table and findings (`report`: the analysed report, whose context and
    // ceilings the windows' analyses reuse) under its attribute "windows".
    void describe(RunReport& report, const ProgramTrace& merged, const JobRun& job) const;

  private:
    CaptureOptions options_;
    std::string records_dir_, control_path_;
    std::uint64_t max_bytes_ = 0;
    std::uint64_t window_from_ = 0, window_to_ = 0;  // the fixed window, CLOCK_MONOTONIC ns; to 0: open-ended
    bool signal_armed_ = false;
};

// `clprobe capture open|close --records DIR`.
CommandRunner add_capture_command(CLI::App& app);

}  // namespace clprobe

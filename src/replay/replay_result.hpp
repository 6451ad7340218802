#pragma once
// What a replay measured on one capture (docs/replay.md): plain data the engine fills, the
// findings (reports/rules/replay_findings) and renderers (reports/render/replay_text,
// reports/json/replay_json) read. No OpenCL.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/stats.hpp"

namespace clprobe::replay {

enum class ReplayStatus {
    replayed,              // the reference reproduced the captured outputs; variants ran
    skipped,               // the layer skipped the capture (its reason), or the kernel cannot be replayed
    invalid,               // the capture folder failed the reader's checks
    device_not_available,  // no platform + device of the captured names here
    build_failed,          // the captured program would not build with the captured options
    not_reproducible,      // the launch as captured did not give the captured outputs bitwise
    failed,                // an OpenCL call failed during the replay
};

enum class OutputCheck {
    identical,         // every buffer bitwise equal to the captured output
    within_tolerance,  // floating-point buffers within the stated tolerance, the rest bitwise equal
    changed,           // the answer differs: never ranked
    not_checked,       // the variant did not run
};

enum class VariantKind { as_captured, local_size, build_options, placement };

struct OutputErrors {
    double max_abs = 0;           // largest |replayed - captured| over the floating-point elements
    double max_rel = 0;           // largest |replayed - captured| / max(|replayed|, |captured|)
    std::uint64_t differing = 0;  // elements (or bytes, for buffers compared bitwise) that differ
    std::string where;            // "arg 2 (float): 37 of 1024 elements", the worst buffer
};

struct VariantResult {
    VariantKind kind = VariantKind::as_captured;
    std::string label;               // "256", "-cl-fast-relaxed-math", "host-visible (CL_MEM_ALLOC_HOST_PTR)"
    std::string local_size;          // the local size it launched with ("NULL" for the driver's choice)
    std::string options;             // the build options it was built with
    std::vector<double> samples_ns;  // device time (END - START) of each timed launch
    std::optional<Summary> summary;  // of samples_ns; absent when the variant did not run
    OutputCheck check = OutputCheck::not_checked;
    std::optional<OutputErrors> errors;  // set when the outputs are not identical
    std::string failure;                 // why the variant did not run ("" when it ran)
};

// The replayed kernel's bandwidth against a copy of the same buffers on this device: its place on
// the memory roof. bytes = the buffers' sizes read, plus those of the buffers it changed, written.
struct BandwidthCheck {
    double bytes = 0;
    double kernel_gbps = 0;               // bytes / the as-captured median
    double copy_gbps = 0;                 // the roof: the faster of the two below (each its fastest sample)
    std::string copy_method;              // which one: "same-traffic kernel" or "clEnqueueCopyBuffer/Image"
    double api_copy_gbps = 0;             // clEnqueueCopyBuffer/Image of the same objects: 2 x their size moved
    double kernel_copy_gbps = 0;          // kernels with the replayed kernel's footprint; 0: they did not build
    std::vector<double> copy_samples_ns;  // the API's copies
};

struct ReplayResult {
    std::string folder;  // the capture folder's name, e.g. "1234-0"
    std::string kernel;
    long long pid = 0;
    std::string device;  // "platform / device"
    ReplayStatus status = ReplayStatus::failed;
    std::string reason;  // one line when not replayed
    std::optional<long long> traced_ns;
    bool reliable = false;
    std::string reliability;              // the rule with its numbers, either way
    double tolerance = 0;                 // the relative output tolerance applied to floating-point buffers
    double build_ms = 0;                  // host time of the reference build
    std::vector<VariantResult> variants;  // variants[0] is the launch as captured once replayed
    std::optional<BandwidthCheck> bandwidth;
};

// The trace's figures for one kernel (by name), which the trace analysis fills: a replay's gain is
// a share of the program's wall time only with them.
struct KernelTotals {
    double device_ns = 0;  // the kernel's device time summed over all its traced launches
    std::uint64_t launches = 0;
    double median_ns = 0;  // median traced launch
    double spread = 0;     // relative spread of the traced launches (e.g. (max - min) / median)
};

struct ReplayContext {
    std::map<std::string, KernelTotals> kernels;  // by kernel name
    std::optional<double> wall_ns;                // the traced program's wall time
};

std::string_view to_string(ReplayStatus s);
std::string_view to_string(OutputCheck c);
std::string_view to_string(VariantKind k);

// Reliability (docs/replay.md): the as-captured median within max(25%, the traced launches'
// spread) of traced_ns. Sets result.reliable and result.reliability.
inline constexpr double min_reliability_band = 0.25;
void judge_reliability(ReplayResult& result, const std::optional<KernelTotals>& totals);

}  // namespace clprobe::replay

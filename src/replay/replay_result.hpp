#pragma once
// What a replay measured on one capture (docs/replay.md): plain data the engine fills, the
// findings (reports/rules/replay_findings) and renderers (reports/render/replay_text,
// reports/json/replay_json) read. No OpenCL.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/speedup_stats.hpp"
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
    std::string label;       // "256", "-cl-fast-relaxed-math", "host-visible (CL_MEM_ALLOC_HOST_PTR)"
    std::string local_size;  // the local size it launched with ("NULL" for the driver's choice)
    std::string options;     // the build options it was built with
    // Device time (END - START) of each timed launch. A variant's first `first_round` samples are
    // its first round, the rest its confirmation round (run only when the first round gained);
    // the launch as captured holds every one of its launches timed beside the variants.
    std::vector<double> samples_ns;
    // A variant's: beside samples_ns[i], the launch as captured timed just before and just after
    // it (their mean), so each pair saw the same machine (docs/replay.md, "Side by side").
    std::vector<double> reference_ns;
    std::size_t first_round = 0;
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
    std::string reason;                  // one line when not replayed
    std::optional<long long> traced_ns;  // the captured launch's own device time in the program
    long long launch_ordinal = 0;        // which launch of the kernel in its process was captured
    // The traced launches like the captured one (the same global size and buffers bound): the
    // times the replay is checked against, and their two modes when they flip between two levels.
    std::optional<Summary> traced_like;
    std::string traced_like_basis;  // "12 traced launches of global size 1024,1,1 and 8.0 MiB bound"
    double traced_like_spread = 0;  // (10th - 90th percentile) / median of those launches
    std::optional<TimeModes> traced_modes;
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
    // The timed launches by shape: shapes[k] is (global size as recorded, bytes of the buffers
    // bound), times_ns[k] the device times of its launches.
    std::vector<std::pair<std::string, std::uint64_t>> shapes;
    std::vector<std::vector<double>> times_ns;
};

struct ReplayContext {
    std::map<std::string, KernelTotals> kernels;  // by kernel name
    std::optional<double> wall_ns;                // the traced program's wall time
    // Per (pid, kernel name): the shape (index into KernelTotals::shapes) of each of its launches
    // in the order the process made them, -1 for one without a device time; absent where the
    // timeline was sampled (--max-size), whose launches are not all in it.
    std::map<std::pair<long long, std::string>, std::vector<int>> launch_shapes;
};

// The traced launches the replay of `r` is checked against: those of the captured launch's shape
// when the timeline holds it (by pid and launch ordinal), else every timed launch of the kernel.
// Sets r.traced_like, traced_like_basis, traced_like_spread and traced_modes.
void find_like_launches(ReplayResult& r, const ReplayContext& context);

std::string_view to_string(ReplayStatus s);
std::string_view to_string(OutputCheck c);
std::string_view to_string(VariantKind k);

// Reliability (docs/replay.md): the as-captured median within max(25%, the like launches'
// spread) of their median (find_like_launches first). Sets result.reliable and result.reliability.
inline constexpr double min_reliability_band = 0.25;
void judge_reliability(ReplayResult& result);

}  // namespace clprobe::replay

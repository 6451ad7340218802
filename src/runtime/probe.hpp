#pragma once
// The probe interface. A probe measures and returns data: it never prints and never exits.
// Unsupported and skipped outcomes are exceptions so a probe can bail out from any depth.
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/probe_selection.hpp"
#include "core/report.hpp"
#include "core/workloads.hpp"  // known_workloads: the workloads --workloads accepts
#include "runtime/sampler.hpp"

namespace clprobe {

class DeviceSession;
class ActivityMonitor;
class ProbeLoadMeter;
class NodeTurn;
class Probe;

enum class RunMode { quick, standard, full };
std::string_view to_string(RunMode mode);

struct RunOptions {
    RunMode mode = RunMode::standard;
    std::vector<std::string> layers;  // empty: all
    bool use_cache = true;
    std::string topology_xml;  // --topology: analyse this saved hwloc XML instead of the live machine
    std::string device_pci;    // --device-pci: the device's PCI address (DDDD:BB:DD.F) inside that topology
    double probe_timeout = 0;  // seconds per probe; 0: probe_budget_for(mode)

    // Workloads of the kernel layer (--workloads); empty: all of them.
    std::vector<std::string> workloads;
    // Problem shapes; 0 means the mode's default (each workload documents its defaults).
    struct GlmShape {
        std::uint64_t rows = 0;   // --glm-rows: observations n
        std::uint64_t cols = 0;   // --glm-cols: features p
        double density = 0;       // --glm-density: non-zero fraction of the sparse X
        std::uint64_t batch = 0;  // --glm-batch: rows per mini-batch
    } glm;
    struct AttentionShape {
        std::uint32_t batch = 0;     // --attn-batch
        std::uint32_t heads = 0;     // --attn-heads
        std::uint32_t seq = 0;       // --attn-seq: prompt length for prefill
        std::uint32_t head_dim = 0;  // --attn-head-dim
        std::uint32_t kv_len = 0;    // --attn-kv-len: KV-cache length for decode
        bool causal = false;         // --attn-causal
    } attention;
    // Transfer layer sweep bounds in bytes; 0: the mode's default (4 KiB up to 256 MiB). Sizes
    // beyond what the device and host can hold are reported as skipped, with the reason.
    struct TransferShape {
        std::uint64_t min_bytes = 0;
        std::uint64_t max_bytes = 0;
    } transfer;
    // --probes / --skip, within the layers and workloads above (core/probe_selection.hpp).
    ProbeSelection selection;
};

// How long one probe may run before it ends as an error: generous (several times a normal
// probe's time) so only a hung or pathologically slow device trips it.
double probe_budget_for(RunMode mode);

// How much longer than a default run a probe takes in `mode` (quick is about a third).
double mode_time_factor(RunMode mode);

// Sampling effort per mode: quick keeps `diagnose --quick` inside seconds, full trades time for
// tighter confidence intervals.
SamplerConfig sampler_for(RunMode mode);
// The same for device ceilings: each sample is the fastest of a few batches (see SamplerConfig).
SamplerConfig ceiling_sampler_for(RunMode mode);

// What the run offers probes besides the options: the open device and the monitor that samples
// host activity over the whole run. Either may be null.
struct RunServices {
    DeviceSession* device = nullptr;
    ActivityMonitor* activity = nullptr;
    std::string device_error;  // why `device` is null, when it is
    // Held around the node-local layers when several ranks share the node (docs/fleet.md);
    // null when this process has the node to itself.
    NodeTurn* node_turn = nullptr;
    // Runs a batch of probes that runs_in_own_process names (consecutive, one layer) in child
    // processes (runtime/probe_isolation): `starting(k)` before the batch's k-th probe starts,
    // `finished` with each result in order; returns how many got one (fewer only when the run was
    // interrupted). Empty: every probe runs in this process (--no-isolation, the integration tests).
    std::function<std::size_t(const std::vector<const Probe*>& batch, const std::vector<ProbeResult>& earlier,
                              const std::function<void(std::size_t)>& starting,
                              const std::function<void(ProbeResult)>& finished)>
        isolate;
    // Measures the host's other load around each probe (ProbeResult::host_load); null: not measured.
    ProbeLoadMeter* load_meter = nullptr;
};

struct ProbeContext {
    DeviceSession* device = nullptr;  // null for probes that do not need one
    const RunOptions& options;
    const std::vector<ProbeResult>& earlier;  // results of probes that ran before this one
    ActivityMonitor* activity = nullptr;      // samples /proc since the run started (system layer)
    std::string device_error;                 // why `device` is null, when the device failed to open
};

class ProbeUnsupported : public std::runtime_error {
    using std::runtime_error::runtime_error;
};
class ProbeSkipped : public std::runtime_error {
    using std::runtime_error::runtime_error;
};
// A workload whose output did not match the host reference: its time must not count.
class VerificationError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

class Probe {
  public:
    virtual ~Probe() = default;
    virtual std::string id() const = 0;  // stable dotted id, e.g. kernel.bandwidth
    virtual std::string layer() const = 0;
    virtual std::string title() const = 0;
    virtual bool needs_device() const { return true; }
    // The workload this probe measures ("glm", "attention"), or "" for layer probes; --workloads
    // selects among them.
    virtual std::string workload() const { return {}; }
    // How long the probe usually takes in `mode` on a small machine (2 cores, PoCL), for the
    // progress line's time-left estimate only; the default is by layer.
    virtual double expected_seconds(RunMode mode) const;
    // Fills out.measurements and out.attributes; throws to end in another status.
    virtual void run(ProbeContext& ctx, ProbeResult& out) = 0;
};

using ProbeList = std::vector<std::unique_ptr<Probe>>;

}  // namespace clprobe

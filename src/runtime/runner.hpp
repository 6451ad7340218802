#pragma once
// Runs the selected probes in registry order. A probe that throws ends in its own status; the run
// always goes on to the next probe.
#include <functional>
#include <string>
#include <vector>

#include "runtime/probe.hpp"

namespace clprobe {

// The layers `--layers` accepts, in the order they run.
const std::vector<std::string>& known_layers();

struct RunnerHooks {
    // The probes that will run, in order, before the first starts.
    std::function<void(const std::vector<const Probe*>&)> on_plan;
    std::function<void(const Probe&, std::size_t index, std::size_t total)> on_start;
    std::function<void(const ProbeResult&)> on_finish;
};

// Layers whose figures another process on the same node would disturb; ranks sharing a node take
// turns at them. Layers not in this list (the network layer) need every rank at once.
bool is_node_local_layer(const std::string& layer);

// The probes that run in a child process of their own when isolation is on: those that use the
// device in the device layers (kernel, transfer, and the workloads in the kernel layer). Host-only
// probes read /proc, sysfs and hwloc and cannot crash a driver; the network layer's probes share
// MPI_COMM_WORLD, which a child process is not part of.
bool runs_in_own_process(const Probe& probe);

// The registry's probes the options select (layers, workloads, --probes, --skip), in run order.
std::vector<Probe*> selected_probes(const ProbeList& probes, const RunOptions& options);

// Runs one probe with all failure handling; used by run_probes and by tests.
ProbeResult run_probe(Probe& probe, ProbeContext& ctx);

std::vector<ProbeResult> run_probes(const ProbeList& probes, const RunServices& services, const RunOptions& options,
                                    const RunnerHooks& hooks = {});

}  // namespace clprobe

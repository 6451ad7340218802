#include "runtime/runner.hpp"

#include "runtime/probe_load_meter.hpp"

#include <algorithm>
#include <chrono>
#include <new>
#include <sstream>
#include <stdexcept>

#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "core/stop_points.hpp"
#include "runtime/probe_load_meter.hpp"
#include "system/node_turn.hpp"

namespace clprobe {

const std::vector<std::string>& known_layers() {
    static const std::vector<std::string> layers{"system", "topology", "transfer", "kernel", "network"};
    return layers;
}

bool is_node_local_layer(const std::string& layer) {
    static const std::vector<std::string> local{"system", "topology", "transfer", "kernel"};
    return std::find(local.begin(), local.end(), layer) != local.end();
}

bool runs_in_own_process(const Probe& probe) {
    return probe.needs_device() && (probe.layer() == "kernel" || probe.layer() == "transfer");
}

std::vector<Probe*> selected_probes(const ProbeList& probes, const RunOptions& options) {
    auto chosen = [](const std::vector<std::string>& list, const std::string& item) {
        return list.empty() || std::find(list.begin(), list.end(), item) != list.end();
    };
    std::vector<Probe*> selected;
    for (const auto& p : probes)
        if (chosen(options.layers, p->layer()) && (p->workload().empty() || chosen(options.workloads, p->workload())) &&
            options.selection.selects(p->id()))
            selected.push_back(p.get());
    return selected;
}

namespace {

// Build logs can run to pages; the report keeps enough to see the first errors.
std::string first_lines(const std::string& text, std::size_t max_lines) {
    std::istringstream in(text);
    std::string out;
    std::size_t n = 0;
    for (std::string line; std::getline(in, line) && n < max_lines; ++n)
        out += line + "\n";
    if (n == max_lines) out += "...\n";
    return out;
}

}  // namespace

ProbeResult run_probe(Probe& probe, ProbeContext& ctx) {
    ProbeResult r;
    r.id = probe.id();
    r.layer = probe.layer();
    r.title = probe.title();
    const auto start = std::chrono::steady_clock::now();
    try {
        if (probe.needs_device() && ctx.device == nullptr) {
            if (!ctx.device_error.empty()) throw std::runtime_error(ctx.device_error);
            throw ProbeSkipped("no OpenCL device is open");
        }
        const DeadlineScope deadline(ctx.options.probe_timeout > 0 ? ctx.options.probe_timeout
                                                                   : probe_budget_for(ctx.options.mode));
        check_stop();
        CommandTrace::instance().set_probe(r.id);
        probe.run(ctx, r);
        r.status = ProbeStatus::ok;
    } catch (const RunInterrupted& e) {
        // What the probe measured before the signal is real, but a half-swept probe is not a
        // result: it is marked skipped, and its headline is not claimed.
        r.status = ProbeStatus::skipped;
        r.reason = e.what();
    } catch (const ProbeTimeout& e) {
        r.status = ProbeStatus::error;
        r.reason = e.what();
    } catch (const ProbeUnsupported& e) {
        r.status = ProbeStatus::unsupported;
        r.reason = e.what();
    } catch (const ProbeSkipped& e) {
        r.status = ProbeStatus::skipped;
        r.reason = e.what();
    } catch (const KernelBuildError& e) {
        r.status = ProbeStatus::error;
        r.reason = e.what();
        r.attributes["build_log"] = first_lines(e.log(), 40);
    } catch (const ClError& e) {
        r.status = ProbeStatus::error;
        r.reason = e.what();
    } catch (const cl::Error& e) {
        r.status = ProbeStatus::error;
        r.reason = to_cl_error(e).what();
    } catch (const VerificationError& e) {
        r.status = ProbeStatus::error;
        r.reason = std::string("verification failed: ") + e.what();
    } catch (const std::bad_alloc&) {
        r.status = ProbeStatus::error;
        r.reason = "out of host memory";
    } catch (const std::exception& e) {
        r.status = ProbeStatus::error;
        r.reason = e.what();
    }
    r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

namespace {

// Where the batch of isolated probes that starts at `first` ends: the consecutive probes of its
// layer that run in their own process.
std::size_t batch_end(const std::vector<Probe*>& selected, std::size_t first) {
    std::size_t end = first + 1;
    while (end < selected.size() && runs_in_own_process(*selected[end]) &&
           selected[end]->layer() == selected[first]->layer())
        ++end;
    return end;
}

ProbeResult not_run(const Probe& probe) {
    ProbeResult r;
    r.id = probe.id();
    r.layer = probe.layer();
    r.title = probe.title();
    r.status = ProbeStatus::skipped;
    r.reason = "not run: the run was interrupted";
    return r;
}

}  // namespace

std::vector<ProbeResult> run_probes(const ProbeList& probes, const RunServices& services, const RunOptions& options,
                                    const RunnerHooks& hooks) {
    std::vector<ProbeResult> results;
    const std::vector<Probe*> selected = selected_probes(probes, options);
    if (hooks.on_plan) hooks.on_plan(std::vector<const Probe*>(selected.begin(), selected.end()));
    auto finished = [&](ProbeResult r) {
        if (services.load_meter != nullptr) r.host_load = services.load_meter->stop();
        results.push_back(std::move(r));
        if (hooks.on_finish) hooks.on_finish(results.back());
    };
    for (std::size_t i = 0; i < selected.size();) {
        if (interrupt_requested()) {
            results.push_back(not_run(*selected[i++]));
            continue;
        }
        if (services.node_turn != nullptr) {
            // Released before the first layer that needs all ranks together (its barrier would
            // otherwise wait forever for a rank queued behind this one's lock).
            if (is_node_local_layer(selected[i]->layer()))
                services.node_turn->acquire();
            else
                services.node_turn->release();
        }
        if (services.isolate && runs_in_own_process(*selected[i])) {
            const std::size_t end = batch_end(selected, i);
            const std::vector<const Probe*> batch(selected.begin() + static_cast<std::ptrdiff_t>(i),
                                                  selected.begin() + static_cast<std::ptrdiff_t>(end));
            auto starting = [&, first = i](std::size_t k) {
                if (hooks.on_start) hooks.on_start(*batch[k], first + k, selected.size());
                if (services.load_meter != nullptr) services.load_meter->start();
            };
            // `results` grows while the batch runs; the isolator reads it again for a new child.
            i += services.isolate(batch, results, starting, finished);
            continue;
        }
        if (hooks.on_start) hooks.on_start(*selected[i], i, selected.size());
        if (services.load_meter != nullptr) services.load_meter->start();
        ProbeContext ctx{services.device, options, results, services.activity, services.device_error};
        finished(run_probe(*selected[i], ctx));
        ++i;
    }
    if (services.node_turn != nullptr) services.node_turn->release();
    // A layer the user asked for that has no probes yet is said so, not silently dropped (one whose
    // probes --probes or --skip left out is not such a layer).
    for (const auto& layer : options.layers) {
        const bool has_probe =
            std::any_of(probes.begin(), probes.end(), [&](const auto& p) { return p->layer() == layer; });
        if (!has_probe) {
            ProbeResult r;
            r.id = layer + ".layer";
            r.layer = layer;
            r.title = "The " + layer + " layer";
            r.status = ProbeStatus::skipped;
            r.reason = "this clprobe version has no probes in the " + layer + " layer yet";
            results.push_back(std::move(r));
        }
    }
    return results;
}

}  // namespace clprobe

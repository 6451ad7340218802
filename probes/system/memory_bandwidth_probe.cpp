// system.memory_bandwidth: the host's memory bandwidth ceiling (host.memory.bandwidth), measured
// with STREAM's triad on every CPU the process may use. Next to kernel.peak.bandwidth it says how
// much of the host's memory roof an OpenCL CPU device reaches (and for a GPU, what staging copies
// on the host can sustain). The CPU clock is read under that load for the frequency finding.
#include <fmt/core.h>

#include <algorithm>
#include <numeric>
#include <thread>

#include "common/probe_support.hpp"
#include "probe_factories.hpp"
#include "system/affinity.hpp"
#include "system/cgroup_limits.hpp"
#include "system/cpu_facts.hpp"
#include "system/cpu_list.hpp"
#include "system/memory_facts.hpp"
#include "system/system_support.hpp"
#include "system/triad_team.hpp"

namespace clprobe {

namespace {

// STREAM's rule: each array at least 4x all the last-level cache in use, so caches cannot serve
// the working set; and never below these sizes, which outgrow any cache sysfs fails to report.
constexpr std::uint64_t cache_factor = 4;
std::uint64_t minimum_array_bytes(RunMode mode) {
    return mode == RunMode::quick ? (64ull << 20) : mode == RunMode::full ? (512ull << 20) : (128ull << 20);
}
// Below this the triad measures caches and call overhead, not memory.
constexpr std::uint64_t smallest_array_bytes = 8ull << 20;
// Frequency readings under load: a few extra triad batches, not counted as bandwidth samples
// (reading sysfs on the timing thread would disturb the timed batches).
constexpr int frequency_batches = 3;

class MemoryBandwidthProbe final : public Probe {
  public:
    std::string id() const override { return "system.memory_bandwidth"; }
    std::string layer() const override { return "system"; }
    std::string title() const override { return "Host memory bandwidth (STREAM triad)"; }
    // A few triad passes over ~4x the last-level cache.
    double expected_seconds(RunMode mode) const override { return 0.9 * mode_time_factor(mode); }
    bool needs_device() const override { return false; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const SystemFiles files;
        const std::vector<int> cpus = process_affinity();
        if (cpus.empty()) throw ProbeUnsupported("sched_getaffinity did not report the process's CPUs");
        const std::uint64_t bytes = array_bytes(files, cpus, ctx.options.mode, out);
        const std::size_t elements = bytes / sizeof(double);

        TriadTeam team(cpus, elements);
        team.initialise();
        const SamplerConfig config = ceiling_sampler_for(ctx.options.mode);
        const SampleSet set = run_samples(
            [&](std::int64_t n) {
                return TimedBatch{team.run(n), TimerKind::host_steady_clock};
            },
            config);
        if (const auto wrong = team.count_wrong())
            throw VerificationError(
                fmt::format("{} of {} elements of a differ from b + {}*c", wrong, elements, TriadTeam::scalar));

        const double moved = TriadTeam::bytes_per_element * static_cast<double>(elements);
        Measurement m = make_measurement("host.memory.bandwidth", "GB/s", {}, to_rates(set, moved, 1e-9), set.timer);
        m.iterations_per_sample = set.iterations;
        out.measurements.push_back(std::move(m));

        out.attributes["threads"] = team.threads();
        out.attributes["cpus"] = format_cpu_list(cpus);
        out.attributes["pinned"] = team.pinned();
        out.attributes["array_bytes"] = bytes;
        out.attributes["arrays"] = 3;
        out.attributes["bytes_counted"] =
            "24 bytes per element per triad (STREAM's convention: read b and c, write a; the write-allocate read of a "
            "is not counted)";
        out.attributes["kernel"] =
            fmt::format("a[i] = b[i] + {}*c[i], doubles, one contiguous slice per thread", TriadTeam::scalar);
        out.attributes["verification"] =
            "every element of a compared with b + 3c after the samples (exact: small integers)";
        out.attributes["sampling"] = fmt::format(
            "up to {} samples, each the fastest of {} batches (STREAM's convention for a ceiling: interference only "
            "slows a run down); host steady clock around each batch of {} triads",
            config.samples, config.best_of, set.iterations);

        const double batch_seconds = set.seconds_per_iteration.front() * static_cast<double>(set.iterations);
        record_loaded_frequency(files, cpus, team, set.iterations, batch_seconds, out);
    }

  private:
    // Each array's size: STREAM's rule, capped so the three arrays take at most half of what the
    // process can allocate (host memory and its cgroup limit).
    static std::uint64_t array_bytes(const SystemFiles& files, const std::vector<int>& cpus, RunMode mode,
                                     ProbeResult& out) {
        const auto llc = read_last_level_cache(files, cpus);
        std::uint64_t wanted = minimum_array_bytes(mode);
        if (llc) {
            wanted = std::max(wanted, cache_factor * llc->total_bytes);
            out.attributes["last_level_cache"] = {{"level", llc->level},
                                                  {"bytes_per_instance", llc->bytes_per_instance},
                                                  {"instances", llc->instances},
                                                  {"total_bytes", llc->total_bytes}};
        } else {
            out.attributes["last_level_cache"] = unknown;
        }
        const MemoryFacts mem = read_memory_facts(files);
        const CgroupLimits limits = read_cgroup_limits(files);
        const auto headroom =
            memory_headroom_bytes(mem.available_bytes, limits.memory_limit_bytes, limits.memory_working_set_bytes);
        std::uint64_t bytes = wanted;
        if (headroom) bytes = std::min(bytes, *headroom / 2 / 3);
        bytes -= bytes % (1ull << 20);
        if (bytes < smallest_array_bytes)
            throw ProbeUnsupported(fmt::format("only {} of memory can be allocated: the triad needs 3 arrays of {}",
                                               headroom ? format_bytes(*headroom) : std::string(unknown),
                                               format_bytes(smallest_array_bytes)));
        if (llc && bytes < cache_factor * llc->total_bytes)
            out.attributes["cache_warning"] = fmt::format(
                "arrays of {} are less than {}x the {} last-level cache (memory is short): caches may "
                "serve part of the triad",
                format_bytes(bytes), cache_factor, format_bytes(llc->total_bytes));
        return bytes;
    }

    static void record_loaded_frequency(const SystemFiles& files, const std::vector<int>& cpus, TriadTeam& team,
                                        std::int64_t iterations, double batch_seconds, ProbeResult& out) {
        if (read_current_mhz(files, cpus).empty()) {
            out.attributes["frequency_under_load"] = unknown;
            return;
        }
        std::vector<double> samples;
        // The kernel's reading averages over its last tick: let the load run first.
        const auto settle = std::chrono::duration<double>(std::min(0.05, batch_seconds / 2));
        for (int i = 0; i < frequency_batches; ++i)
            team.run(iterations, [&] {
                std::this_thread::sleep_for(settle);
                const auto mhz = read_current_mhz(files, cpus);
                if (!mhz.empty())
                    samples.push_back(std::accumulate(mhz.begin(), mhz.end(), 0.0) / static_cast<double>(mhz.size()));
            });
        if (samples.empty()) {
            out.attributes["frequency_under_load"] = unknown;
            return;
        }
        out.attributes["frequency_under_load"] = fmt::format(
            "scaling_cur_freq averaged over the triad's CPUs, read during {} extra triad batches", samples.size());
        out.measurements.push_back(
            make_measurement("system.cpu.frequency.loaded", "MHz", {}, std::move(samples), TimerKind::none));
    }
};

}  // namespace

std::unique_ptr<Probe> make_memory_bandwidth_probe() {
    return std::make_unique<MemoryBandwidthProbe>();
}

}  // namespace clprobe

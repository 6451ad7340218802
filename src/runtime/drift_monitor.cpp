#include "runtime/drift_monitor.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <stdexcept>

#include "cl/cl_error.hpp"
#include "cl/command_timing.hpp"
#include "cl/command_trace.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "core/clock.hpp"
#include "core/stats.hpp"

namespace clprobe {

namespace {

constexpr const char* source_file = "drift/reference.cl";
// The FMA recurrence a = a * b + c (kernels/drift/reference.cl) with b = 1 and c = 2^-k, the
// smallest power of two with n c <= 1 for n iterations: a_n = a_0 + n c, exact in float (a_0 is a
// multiple of 2^-10, c of 2^-22 at least, every value below 2), so the result depends on both the
// start (the work-item) and the count the host asked for at any n. A recurrence that converges
// (b < 1) forgets its start after a few thousand steps, and a driver that computed one item's
// chains for all was then caught only when the calibrated count happened to be small.
constexpr float fma_b = 1.0f;
constexpr std::uint32_t max_fma_iterations = 1u << 22;
constexpr int fma_chains = 8, fma_lanes = 8;
// The kernel's sums over eight chains round at about 1e-7; a start or step that is off moves a sum
// by a few percent at least.
constexpr double fma_tolerance = 1e-5;

// c for n iterations: 2^-k with 2^k >= n.
float fma_step(std::uint32_t iterations) {
    int k = 0;
    while ((std::uint64_t{1} << k) < iterations)
        ++k;
    return std::ldexp(1.0f, -k);
}

// The start of chain j in lane l of work-item `item` (kernels/drift/reference.cl): it depends on
// the work-item, so a driver cannot compute one result for many items.
double fma_start(std::size_t item, int chain, int lane) {
    return static_cast<double>((item * 64 + static_cast<std::size_t>(chain * 8 + lane)) & 1023) / 1024.0;
}

// The sum over the chains that lane `lane` of work-item `item` holds after `iterations` steps of
// a = a + c.
double expected_fma_sum(std::size_t item, int lane, std::uint32_t iterations) {
    const double walked = static_cast<double>(iterations) * fma_step(iterations);
    double sum = 0;
    for (int j = 0; j < fma_chains; ++j)
        sum += fma_start(item, j, lane) + walked;
    return sum;
}

// The memory reference's kernels, with the pattern each reports and the uint lanes of its vector
// (per_item counts 64-byte vectors; the uint4 kernel reads four times as many of its own).
struct ReadKernel {
    const char* name;
    const char* pattern;
    std::uint32_t lanes;
};
constexpr ReadKernel read_kernels[] = {{"drift_read_chunked", "chunked", 4},
                                       {"drift_read_chunked_wide", "chunked_wide", 16},
                                       {"drift_read_interleaved", "interleaved", 16}};

}  // namespace

struct DriftMonitor::State {
    DeviceSession& session;
    DriftMonitorConfig config;
    MachineDrift drift;
    bool active = false;
    std::size_t local = 1, fma_items = 0, read_items = 0;
    std::uint32_t iterations = 64, per_item = 0;
    std::uint64_t read_bytes = 0;
    cl::Kernel fma, read;
    std::string read_pattern;  // chunked, chunked_wide or interleaved: the fastest here
    std::uint32_t read_lanes = 16;
    cl::Buffer fma_out, data, read_out;

    State(DeviceSession& s, DriftMonitorConfig c) : session(s), config(std::move(c)) {}

    // Enqueues `launches` launches of each kernel back to back and waits once (a round trip per
    // launch would cost PoCL about as much as the launch), then takes each kernel's median
    // device time.
    std::vector<double> median_seconds(const std::vector<std::pair<cl::Kernel*, std::size_t>>& kernels,
                                       const char* label) {
        cl::CommandQueue& q = session.queue();
        const std::size_t launches = static_cast<std::size_t>(std::max(1, config.launches));
        std::vector<cl::Event> events;
        for (const auto& [kernel, items] : kernels)
            for (std::size_t i = 0; i < launches; ++i) {
                events.emplace_back();
                q.enqueueNDRangeKernel(*kernel, cl::NullRange, cl::NDRange(items), cl::NDRange(local), nullptr,
                                       &events.back());
            }
        q.finish();
        std::vector<double> medians;
        for (std::size_t k = 0; k < kernels.size(); ++k) {
            std::vector<double> times;
            for (std::size_t i = 0; i < launches; ++i) {
                const cl::Event& e = events[k * launches + i];
                CommandTrace::instance().record(e, label);
                times.push_back(command_seconds(e));
            }
            medians.push_back(median_of(times));
        }
        return medians;
    }

    void setup() {
        const DeviceInfo& info = session.info();
        local = std::bit_floor(std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size)));
        const std::size_t units = std::max<std::size_t>(1, info.compute_units);
        fma_items = std::max<std::size_t>(8, units * 8) * local;
        read_items = std::max<std::size_t>(8, units * 32) * local;
        // Several times the device's cache, so the read comes from memory; within a fraction of
        // what the device may allocate, so the monitor never crowds out a probe.
        std::uint64_t wanted = std::max(config.min_buffer_bytes, 4 * info.global_mem_cache_bytes);
        if (info.max_alloc_bytes) wanted = std::min(wanted, info.max_alloc_bytes / 2);
        if (info.global_mem_bytes) wanted = std::min(wanted, info.global_mem_bytes / 8);
        per_item = static_cast<std::uint32_t>(wanted / 64 / read_items / 4 * 4);  // uint16 vectors
        if (per_item == 0) throw std::runtime_error("the device has too little memory for the reference read");
        read_bytes = std::uint64_t{read_items} * per_item * 64;

        KernelLibrary& lib = session.kernels();
        fma = lib.kernel(source_file, "drift_fma");
        cl::Kernel fill = lib.kernel(source_file, "drift_fill");
        cl::Context& ctx = session.context();
        fma_out = cl::Buffer(ctx, CL_MEM_READ_WRITE, fma_items * fma_lanes * sizeof(float));
        data = cl::Buffer(ctx, CL_MEM_READ_WRITE, read_bytes);
        read_out = cl::Buffer(ctx, CL_MEM_READ_WRITE, read_items * 16 * sizeof(std::uint32_t));
        set_args(fill, data);
        session.queue().enqueueNDRangeKernel(fill, cl::NullRange, cl::NDRange(read_bytes / 4), cl::NullRange);
        choose_read(lib);
        calibrate();
        verify();
    }

    // Keeps the fastest of the read kernels on this device: which one streams depends on how the
    // driver maps work-items to cores and SIMD lanes (PoCL's CPU device streams chunks; GPUs and
    // Intel's CPU runtime, which runs work-items as SIMD lanes, stream interleaved reads or whole
    // cache lines and turn 16-byte chunked loads into gathers, up to 10 times slower). Each
    // kernel's first launch, one work-group, is a warm-up (Intel's runtime made a first full read
    // 40 times slower than the next); then the faster of two timed reads of the whole buffer each.
    void choose_read(KernelLibrary& lib) {
        std::vector<cl::Kernel> kernels;
        for (const ReadKernel& rk : read_kernels) {
            kernels.push_back(lib.kernel(source_file, rk.name));
            set_args(kernels.back(), data, read_out, static_cast<cl_uint>(per_item * (16 / rk.lanes)));
        }
        cl::CommandQueue& q = session.queue();
        for (cl::Kernel& k : kernels)
            q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(local), cl::NDRange(local));
        constexpr std::size_t timed = 2;
        std::vector<cl::Event> events(kernels.size() * timed);
        for (std::size_t r = 0; r < timed; ++r)
            for (std::size_t k = 0; k < kernels.size(); ++k)
                q.enqueueNDRangeKernel(kernels[k], cl::NullRange, cl::NDRange(read_items), cl::NDRange(local), nullptr,
                                       &events[r * kernels.size() + k]);
        q.finish();
        std::vector<double> seconds(kernels.size(), 0);
        for (std::size_t i = 0; i < events.size(); ++i) {
            CommandTrace::instance().record(events[i], "drift.pattern");
            const double t = command_seconds(events[i]);
            double& s = seconds[i % kernels.size()];
            if (s == 0 || t < s) s = t;
        }
        const auto best = static_cast<std::size_t>(std::min_element(seconds.begin(), seconds.end()) - seconds.begin());
        read = kernels[best];
        read_pattern = read_kernels[best].pattern;
        read_lanes = read_kernels[best].lanes;
    }

    // Scales the FMA loop so one launch takes about the target time on this device.
    void calibrate() {
        set_args(fma, fma_out, fma_b, fma_step(iterations), iterations);
        const double first = median_seconds({{&fma, fma_items}}, "drift.calibrate").front();
        const double scale = first > 0 ? config.target_seconds / first : 1.0;
        iterations = static_cast<std::uint32_t>(std::clamp(iterations * scale, 64.0, double(max_fma_iterations)));
        set_args(fma, fma_out, fma_b, fma_step(iterations), iterations);
    }

    // Runs both kernels once more and checks what they computed; throws naming the mismatch.
    void verify() {
        cl::CommandQueue& q = session.queue();
        q.enqueueNDRangeKernel(fma, cl::NullRange, cl::NDRange(fma_items), cl::NDRange(local));
        q.enqueueNDRangeKernel(read, cl::NullRange, cl::NDRange(read_items), cl::NDRange(local));
        std::vector<float> sums(fma_items * fma_lanes);
        std::vector<std::uint32_t> reads(read_items * read_lanes);
        q.enqueueReadBuffer(fma_out, CL_TRUE, 0, sums.size() * sizeof(float), sums.data());
        q.enqueueReadBuffer(read_out, CL_TRUE, 0, reads.size() * sizeof(std::uint32_t), reads.data());
        if (config.tamper) config.tamper(sums, reads);
        // Every lane of every item: a kernel that ignored the work-item id, skipped chains or
        // steps fails here.
        for (std::size_t i = 0; i < sums.size(); ++i) {
            const std::size_t item = i / fma_lanes;
            const int lane = static_cast<int>(i % fma_lanes);
            const double want = expected_fma_sum(item, lane, iterations);
            if (!(std::fabs(sums[i] - want) <= fma_tolerance * want))
                throw std::runtime_error(fmt::format(
                    "the FMA reference computed {} at item {} lane {}, expected {:.6g}", sums[i], item, lane, want));
        }
        std::uint32_t total = 0;
        for (const std::uint32_t r : reads)
            total += r;
        const std::uint64_t n = read_bytes / 4;
        const auto expected = static_cast<std::uint32_t>(n * (n - 1) / 2);
        if (total != expected)
            throw std::runtime_error(
                fmt::format("the memory reference summed to {}, expected {} (mod 2^32)", total, expected));
    }

    void measure(const std::string& probe_id) {
        const double offset = seconds_since(config.run_start);
        const auto seconds = median_seconds({{&fma, fma_items}, {&read, read_items}}, "drift.reference");
        const double fma_seconds = seconds[0], read_seconds = seconds[1];
        if (fma_seconds <= 0 || read_seconds <= 0) throw std::runtime_error("a reference launch took no time");
        const double flops = double(fma_items) * fma_lanes * fma_chains * 2.0 * iterations;
        drift.checks.push_back(
            {offset, probe_id, flops / fma_seconds * 1e-9, double(read_bytes) / read_seconds * 1e-9});
    }
};

DriftMonitor::DriftMonitor(DeviceSession& session, DriftMonitorConfig config)
    : state_(std::make_unique<State>(session, std::move(config))) {
    const auto started = std::chrono::steady_clock::now();
    if (!session.profiling()) {
        state_->drift.note = "the device cannot timestamp commands, so the drift reference was not timed";
        return;
    }
    try {
        state_->setup();
        state_->active = true;
    } catch (const KernelBuildError& e) {
        state_->drift.note = fmt::format("the drift reference did not build ({}): no drift checks", e.what());
    } catch (const cl::Error& e) {
        state_->drift.note = fmt::format("the drift reference failed ({}): no drift checks", to_cl_error(e).what());
    } catch (const std::exception& e) {
        state_->drift.note = fmt::format("the drift reference was wrong or failed ({}): no drift checks", e.what());
    }
    state_->drift.cost_seconds += seconds_since(started);
}

DriftMonitor::~DriftMonitor() = default;

void DriftMonitor::check(const std::string& probe_id) {
    if (!state_->active) return;
    const auto started = std::chrono::steady_clock::now();
    CommandTrace::instance().set_probe("drift");
    try {
        state_->measure(probe_id);
    } catch (const cl::Error& e) {
        state_->active = false;
        state_->drift.note = fmt::format("a drift check failed ({}): the checks stop there", to_cl_error(e).what());
    } catch (const std::exception& e) {
        state_->active = false;
        state_->drift.note = fmt::format("a drift check failed ({}): the checks stop there", e.what());
    }
    state_->drift.cost_seconds += seconds_since(started);
}

bool DriftMonitor::active() const {
    return state_->active;
}

const std::string& DriftMonitor::read_pattern() const {
    return state_->read_pattern;
}

const MachineDrift& DriftMonitor::drift() const {
    return state_->drift;
}

std::unique_ptr<DriftMonitor> make_drift_monitor(DeviceSession* session, const RunOptions& options,
                                                 std::chrono::steady_clock::time_point run_start) {
    const auto& layers = options.layers;
    const bool device_layer = layers.empty() || std::find(layers.begin(), layers.end(), "kernel") != layers.end() ||
                              std::find(layers.begin(), layers.end(), "transfer") != layers.end();
    if (session == nullptr || !device_layer) return nullptr;
    DriftMonitorConfig config;
    config.run_start = run_start;
    return std::make_unique<DriftMonitor>(*session, std::move(config));
}

bool drift_check_precedes(const Probe& probe) {
    // The same probes that run isolated: the check runs in this process just before each child.
    return runs_in_own_process(probe);
}

RunnerHooks with_drift_checks(RunnerHooks hooks, DriftMonitor& monitor) {
    hooks.on_start = [inner = std::move(hooks.on_start), &monitor](const Probe& p, std::size_t i, std::size_t n) {
        if (inner) inner(p, i, n);
        if (drift_check_precedes(p)) monitor.check(p.id());
    };
    return hooks;
}

}  // namespace clprobe

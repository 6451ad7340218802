// transfer.bandwidth: host->device, device->host and device->device bandwidth over a size sweep,
// for every path a user could write: pageable memory with read/write buffer, pinned memory
// (CL_MEM_ALLOC_HOST_PTR, mapped once, as the staging source/target), map/unmap of a device
// buffer, CL_MEM_USE_HOST_PTR zero-copy, and a copy kernel between a host-visible
// (CL_MEM_ALLOC_HOST_PTR) buffer and a device buffer; blocking and non-blocking enqueues. Every
// variant's destination is poisoned before and checked after, so a copy that did not happen
// cannot count.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"
#include "transfer/transfer_support.hpp"

namespace clprobe {

namespace {

using namespace transfer;

enum class Path { pageable, pinned, map, zero_copy, kernel_copy, device };
enum class Direction { h2d, d2h, d2d };

const char* name_of(Path p) {
    // Path's order; a zero-copy path hands the driver the host's pointer (CL_MEM_USE_HOST_PTR).
    constexpr const char* names[] = {"pageable", "pinned", "map", "use_host_ptr", "kernel_copy", "copy_buffer"};
    return names[static_cast<std::size_t>(p)];
}
const char* name_of(Direction d) {
    return d == Direction::h2d ? "h2d" : d == Direction::d2h ? "d2h" : "d2d";
}

// The metric ids (docs/report-schema.md): pageable memory on one side, driver-allocated (pinned)
// memory on the other (the staging buffer, or the region a map hands out); the kernel copy has its
// own, so the driver's copies and a kernel's stay comparable side by side (as nvbandwidth's CE and
// SM copies). Zero-copy moves nothing where the device shares host memory: its size over its time
// would be a rate of no copy (tens of TB/s), so it is recorded as what it is, the time a map +
// unmap takes to make the data available (transfer.<dir>.zero_copy.time, microseconds).
std::string metric_of(Direction d, Path p) {
    if (d == Direction::d2d) return "transfer.d2d.bandwidth";
    if (p == Path::zero_copy) return fmt::format("transfer.{}.zero_copy.time", name_of(d));
    const char* kind = p == Path::pageable ? "pageable" : p == Path::kernel_copy ? "kernel_copy" : "pinned";
    return fmt::format("transfer.{}.{}.bandwidth", name_of(d), kind);
}

// Above this, a command's own overhead is well under 1% of its copy and non-blocking enqueues
// take the same device time as blocking ones: they are measured only where they can differ.
constexpr std::uint64_t non_blocking_up_to = 1ull << 20;
constexpr std::uint32_t pageable_seed = 1, pinned_seed = 2, zero_copy_seed = 3, kernel_copy_seed = 4;

struct Variant {
    Direction direction;
    Path path;
    bool blocking;
    std::uint64_t size;
};

// Buffers of the largest size; each variant moves the first `size` bytes.
struct Buffers {
    std::uint64_t bytes = 0;
    HostMemory host_src, host_dst, zero_copy_host;
    cl::Buffer device, device2, pinned, zero_copy;
    std::uint32_t* staging = nullptr;  // `pinned`, mapped for the whole probe
    // The kernel copy's host side: CL_MEM_ALLOC_HOST_PTR, the flag a user writes for a buffer the
    // driver can hand to a kernel cheaply (pinned memory on discrete GPUs, plain host memory on
    // CPU devices). CL_MEM_USE_HOST_PTR would need page-aligned user memory and lets some drivers
    // copy or re-pin it at each use. Unmapped between steps: a kernel must not touch a mapped buffer.
    cl::Buffer host_visible;
};

// The copy kernels (kernels/transfer/copy.cl): two access patterns, and the chunked one with
// streaming stores for transfers larger than the cache.
enum class CopyKernel { chunked, chunked_stream, interleaved };
const char* name_of(CopyKernel k) {
    return k == CopyKernel::chunked          ? "copy_chunked"
           : k == CopyKernel::chunked_stream ? "copy_chunked_stream"
                                             : "copy_interleaved";
}

// The trial's verdict: the best kernel with plain stores for every size, and the best of all for
// transfers of at least `large_from` bytes (where streaming stores can pay).
struct CopyChoice {
    CopyKernel small = CopyKernel::chunked, large = CopyKernel::chunked;
    std::uint64_t large_from = 0;
    CopyKernel for_size(std::uint64_t bytes) const { return bytes >= large_from ? large : small; }
};

// From this size on, a copy's source and destination no longer fit the device's cache together:
// its destination is not worth caching. Never when the driver reports no cache size.
std::uint64_t streaming_from(const DeviceInfo& info) {
    return info.global_mem_cache_bytes ? info.global_mem_cache_bytes / 2 : std::numeric_limits<std::uint64_t>::max();
}

// One launch of the copy kernel over `bytes`.
struct CopyLaunch {
    cl::NDRange global, local;
    cl_ulong count = 0;  // vectors
    cl_uint per_item = 0;
};

// Work sizes per kernel. Each keeps one local size at every transfer size, since PoCL compiles a
// kernel once per local size. chunked: work-groups of one item, each streaming at least 64 KiB,
// at most 64 per compute unit (enough to balance cores on a shared host; larger chunks keep the
// prefetcher on one stream). interleaved: groups of up to 256 items, about 32 groups per compute
// unit, each item copying up to 16 vectors a group's width apart.
CopyLaunch copy_launch(CopyKernel kind, std::uint64_t bytes, const DeviceInfo& info) {
    const std::uint64_t units = std::max<std::uint64_t>(1, info.compute_units);
    CopyLaunch l;
    if (kind != CopyKernel::interleaved) {
        l.count = bytes / 64;
        const std::uint64_t per_item = std::max<std::uint64_t>(1024, (l.count + units * 64 - 1) / (units * 64));
        l.per_item = static_cast<cl_uint>(per_item);
        l.global = cl::NDRange((l.count + per_item - 1) / per_item);
        l.local = cl::NDRange(1);
        return l;
    }
    l.count = bytes / 16;
    const std::size_t local =
        std::bit_floor(std::min<std::uint64_t>(256, std::max<std::uint64_t>(1, info.max_work_group_size)));
    l.per_item = static_cast<cl_uint>(std::clamp<std::uint64_t>(l.count / (local * units * 32), 1, 16));
    const std::uint64_t per_group = std::uint64_t{local} * l.per_item;
    l.global = cl::NDRange((l.count + per_group - 1) / per_group * local);
    l.local = cl::NDRange(local);
    return l;
}

// A copy kernel with its arguments bound: `from` -> `to`, the first `bytes` bytes.
cl::Kernel copy_kernel(DeviceSession& s, CopyKernel kind, cl::Buffer& from, cl::Buffer& to, const CopyLaunch& l) {
    cl::Kernel k = s.kernels().kernel("transfer/copy.cl", name_of(kind));
    set_args(k, from, to, l.count, l.per_item);
    return k;
}

cl::Event launch(cl::CommandQueue& q, const cl::Kernel& k, const CopyLaunch& l) {
    cl::Event e;
    q.enqueueNDRangeKernel(k, cl::NullRange, l.global, l.local, nullptr, &e);
    return e;
}

class BandwidthSweepProbe final : public Probe {
  public:
    std::string id() const override { return "transfer.bandwidth"; }
    std::string layer() const override { return "transfer"; }
    std::string title() const override { return "Host<->device bandwidth by path, direction and size"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        const std::vector<std::uint64_t> sizes = fitting_sizes(ctx.options, info, out);
        Buffers b;
        out.attributes["setup_seconds"] = host_seconds([&] { b = allocate(s, sizes.back()); });
        CopyChoice choice;
        out.attributes["kernel_copy"] = choose_copy_kernel(s, b, choice);
        const std::vector<Variant> variants = plan(sizes);
        const SamplerConfig config = sampler_config(ctx.options.mode);
        InterleavedSampler sampler(config);
        bool dev_holds_pinned_data = false;
        for (const auto& v : variants) {
            if (v.direction != Direction::h2d && !dev_holds_pinned_data) {
                // Device-side data for the d2h and d2d variants: the pinned pattern.
                s.queue().enqueueWriteBuffer(b.device, CL_TRUE, 0, b.bytes, b.staging);
                dev_holds_pinned_data = true;
            }
            prepare(s, b, v);
            sampler.add(
                v.path == Path::kernel_copy ? kernel_copy_batch(s, b, v, choice.for_size(v.size)) : batch(s, b, v),
                static_cast<double>(v.size));
            check(s, b, v);
        }
        std::vector<SampleSet> sets;
        out.attributes["sampling_seconds"] = host_seconds([&] { sets = sampler.run(); });
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const Variant& v = variants[i];
            Labels labels{{"path", name_of(v.path)}, {"size", std::to_string(v.size)}};
            if (v.direction != Direction::d2d) labels["blocking"] = v.blocking ? "true" : "false";
            // Zero-copy: microseconds per hand-over (lower is better); every other path: GB/s.
            Measurement m = v.path == Path::zero_copy
                                ? make_measurement(metric_of(v.direction, v.path), "us", std::move(labels),
                                                   to_times(sets[i], 1e6), sets[i].timer, false)
                                : make_measurement(metric_of(v.direction, v.path), "GB/s", std::move(labels),
                                                   to_rates(sets[i], static_cast<double>(v.size), 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            if (v.path == Path::kernel_copy) m.note = fmt::format("kernel {}", name_of(choice.for_size(v.size)));
            out.measurements.push_back(std::move(m));
        }
        add_headlines(out, sizes.back());
        add_half_peak_sizes(out);
        s.queue().enqueueUnmapMemObject(b.pinned, b.staging);
        s.queue().finish();

        out.attributes["sizes"] = sizes;
        out.attributes["largest_bytes"] = sizes.back();
        out.attributes["sampling"] = sampling_note(config);
        describe_paths(out);
        out.attributes["efficiency"] = efficiency(info, ctx.earlier, out);
    }

  private:
    // The sweep's sizes that fit the device and host (six buffers of the largest size and the
    // kernel copy's host-visible one); the others are listed in `skipped_sizes` with the reason.
    static std::vector<std::uint64_t> fitting_sizes(const RunOptions& options, const DeviceInfo& info,
                                                    ProbeResult& out) {
        const std::uint64_t smallest =
            std::max<std::uint64_t>(granule, options.transfer.min_bytes - options.transfer.min_bytes % granule);
        const std::uint64_t wanted = std::max(smallest, wanted_largest(options));
        const std::vector<std::uint64_t> planned = sweep_sizes(options.mode, smallest, wanted);
        constexpr int buffer_count = 7;
        std::uint64_t cap = 0;
        std::string cap_reason;
        try {
            cap = fit_buffer_bytes(info, wanted, buffer_count, granule);
        } catch (const ProbeUnsupported& e) {
            cap_reason = e.what();
        }
        if (cap_reason.empty())
            cap_reason = fmt::format(
                "larger than the {} per buffer that the device ({} max allocation, {} global "
                "memory) and host memory allow for {} buffers",
                format_bytes(cap), format_bytes(info.max_alloc_bytes), format_bytes(info.global_mem_bytes),
                buffer_count);
        std::vector<std::uint64_t> sizes;
        nlohmann::json skipped = nlohmann::json::array();
        for (auto size : planned) {
            if (size <= cap)
                sizes.push_back(size);
            else
                skipped.push_back({{"size", size}, {"reason", cap_reason}});
        }
        out.attributes["skipped_sizes"] = skipped;
        if (sizes.empty())
            throw ProbeSkipped(fmt::format("every planned size ({} to {}) is {}", format_bytes(planned.front()),
                                           format_bytes(planned.back()), cap_reason));
        return sizes;
    }

    static void describe_paths(ProbeResult& out) {
        out.attributes["paths"] = {
            {"pageable", "clEnqueueWrite/ReadBuffer between malloc'd (page-aligned) host memory and a device buffer"},
            {"pinned",
             "clEnqueueWrite/ReadBuffer between a CL_MEM_ALLOC_HOST_PTR buffer's mapping (mapped once) and "
             "a device buffer"},
            {"map", "clEnqueueMapBuffer of the device buffer, memcpy from/to malloc'd memory, unmap (host clock)"},
            {"use_host_ptr",
             "zero-copy: the data lives in a CL_MEM_USE_HOST_PTR buffer; map + unmap hand it over "
             "(host clock; nothing is copied where the device shares host memory, so it is recorded as the time "
             "to make the data available, transfer.<dir>.zero_copy.time in microseconds, not as a rate)"},
            {"kernel_copy",
             "a copy kernel (kernels/transfer/copy.cl) between a CL_MEM_ALLOC_HOST_PTR buffer the host fills or "
             "reads through a map and a CL_MEM_READ_WRITE device buffer; map + unmap around each copy (see "
             "kernel_copy)"},
            {"copy_buffer", "clEnqueueCopyBuffer between two device buffers"}};
        out.attributes["bytes_counted"] =
            "the transfer size once per transfer (device-to-device as well); zero-copy hand-overs count no bytes: "
            "their metric is a time";
        out.attributes["non_blocking_sizes"] = fmt::format(
            "non-blocking variants of the pageable and pinned paths up to {}: above it a command's overhead is "
            "negligible and the device time equals the blocking one (the kernel copy enqueues without waiting at "
            "every size: see kernel_copy)",
            format_bytes(non_blocking_up_to));
    }

    static nlohmann::json efficiency(const DeviceInfo& info, const std::vector<ProbeResult>& earlier,
                                     const ProbeResult& out) {
        const EfficiencyReference ref = efficiency_reference(info, earlier);
        nlohmann::json eff = {{"applies", ref.kind}, {"reference_metric", ref.metric}, {"note", ref.note}};
        if (ref.gb_per_s <= 0) return eff;
        eff["reference_gb_per_s"] = ref.gb_per_s;
        for (const char* d : {"h2d", "d2h"})
            for (const char* kind : {"pinned", "kernel_copy"})
                for (const auto& m : out.measurements)
                    if (m.labels.empty() && m.metric == fmt::format("transfer.{}.{}.bandwidth", d, kind))
                        eff[fmt::format("{}_{}_fraction", d, kind)] = m.summary.median / ref.gb_per_s;
        return eff;
    }

    static SamplerConfig sampler_config(RunMode mode) {
        SamplerConfig c = sampler_for(mode);
        // Short batches: a sweep has dozens of variants, and a transfer's time is dominated by the
        // copy, not by timer resolution, once a batch lasts a few milliseconds.
        c.target_seconds = mode == RunMode::quick ? 0.002 : mode == RunMode::full ? 0.03 : 0.008;
        c.budget_seconds = mode == RunMode::quick ? 0.5 : mode == RunMode::full ? 10 : 2;
        // Five samples in the default mode as well: the sweep's dozens of variants (and its
        // 256 MiB copies) would otherwise dominate the whole run.
        c.samples = std::min(c.samples, mode == RunMode::full ? 15 : 5);
        // Device time calibrates the batches, but a small transfer costs the host far more than
        // the device (tens of microseconds per command on PoCL): without a cap, thousands of
        // 4 KiB commands would make each "3 ms" batch last a second of host time.
        c.max_iterations = 256;
        return c;
    }

    static std::vector<Variant> plan(const std::vector<std::uint64_t>& sizes) {
        // Host-to-device first (each source has its own pattern), then the rest, which read the
        // device buffer once it holds the pinned pattern.
        std::vector<Variant> out;
        for (Direction d : {Direction::h2d, Direction::d2h})
            for (auto size : sizes)
                for (Path p : {Path::pageable, Path::pinned, Path::map, Path::zero_copy, Path::kernel_copy}) {
                    // The kernel copy enqueues without waiting (kernel_copy_batch): labelled so.
                    out.push_back({d, p, p != Path::kernel_copy, size});
                    if ((p == Path::pageable || p == Path::pinned) && size <= non_blocking_up_to)
                        out.push_back({d, p, false, size});
                }
        for (auto size : sizes)
            out.push_back({Direction::d2d, Path::device, true, size});
        return out;
    }

    static Buffers allocate(DeviceSession& s, std::uint64_t bytes) {
        Buffers b;
        b.bytes = bytes;
        const std::uint64_t words = bytes / 4;
        b.host_src = allocate_host(bytes);
        fill_pattern(b.host_src.get(), words, pageable_seed);
        // Untouched pages of the targets fault in during each variant's warm-up batch, which the
        // sampler discards.
        b.host_dst = allocate_host(bytes);
        b.device = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.device2 = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        b.pinned = make_buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
        try {
            b.staging = static_cast<std::uint32_t*>(
                s.queue().enqueueMapBuffer(b.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
        } catch (const cl::Error& e) {
            throw ClError("clEnqueueMapBuffer", e.err(), "pinned staging buffer");
        }
        fill_pattern(b.staging, words, pinned_seed);
        b.zero_copy_host = allocate_host(bytes);
        fill_pattern(b.zero_copy_host.get(), words, zero_copy_seed);
        try {
            b.zero_copy =
                cl::Buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, b.zero_copy_host.get());
        } catch (const cl::Error& e) {
            throw ClError("clCreateBuffer", e.err(), "CL_MEM_USE_HOST_PTR");
        }
        // The kernel copy's source, filled once through a map as a user would fill it.
        b.host_visible = make_buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
        std::uint32_t* p = map(s.queue(), b.host_visible, CL_MAP_WRITE_INVALIDATE_REGION, bytes);
        fill_pattern(p, words, kernel_copy_seed);
        s.queue().enqueueUnmapMemObject(b.host_visible, p);
        s.queue().finish();
        return b;
    }

    // Tries the copy kernels once, h2d on 32 MiB or the cache size (twice that in flight: past the
    // cache, yet only tens of milliseconds), each verified, and keeps the fastest for the sweep.
    // CPU devices favour a chunk per work-item and GPUs the coalesced pattern, but a CPU runtime
    // that vectorises across work-items (Intel's) favours the coalesced one too, so the device
    // type alone is no safe guide. Streaming stores compete only where the trial is past the cache.
    static nlohmann::json choose_copy_kernel(DeviceSession& s, Buffers& b, CopyChoice& choice) {
        const std::uint64_t bytes =
            std::min<std::uint64_t>(b.bytes, std::max<std::uint64_t>(32ull << 20, s.info().global_mem_cache_bytes));
        choice.large_from = streaming_from(s.info());
        std::vector<CopyKernel> candidates{CopyKernel::chunked, CopyKernel::interleaved};
        if (bytes >= choice.large_from) candidates.push_back(CopyKernel::chunked_stream);
        nlohmann::json trial = {{"bytes", bytes}};
        double best_plain = 0, best = 0;
        trial["seconds"] = host_seconds([&] {
            for (CopyKernel kind : candidates) {
                const double rate = trial_rate(s, b, kind, bytes, trial);
                if (kind != CopyKernel::chunked_stream && rate > best_plain) {
                    best_plain = rate;
                    choice.small = kind;
                }
                if (rate > best) {
                    best = rate;
                    choice.large = kind;
                }
            }
        });
        nlohmann::json notes = kernel_copy_notes();
        nlohmann::json used = nlohmann::json::array({{{"from_bytes", 0}, {"kernel", name_of(choice.small)}}});
        if (choice.large != choice.small)
            used.push_back({{"from_bytes", choice.large_from}, {"kernel", name_of(choice.large)}});
        notes["kernels_used"] = used;
        notes["trial"] = trial;
        return notes;
    }

    // One trial candidate: poison, a warm-up launch, the best of 3 timed ones, verification.
    static double trial_rate(DeviceSession& s, Buffers& b, CopyKernel kind, std::uint64_t bytes,
                             nlohmann::json& trial) {
        cl::CommandQueue& q = s.queue();
        const CopyLaunch l = copy_launch(kind, bytes, s.info());
        const cl::Kernel k = copy_kernel(s, kind, b.host_visible, b.device, l);
        poison_buffer(q, b.device, bytes);
        launch(q, k, l);  // a first launch pays for compilation and page faults
        TimedBatch fastest;
        for (int i = 0; i < 3; ++i) {
            const TimedBatch t = time_commands(
                q, s.profiling(), 1, [&] { return launch(q, k, l); }, "kernel_copy trial");
            if (i == 0 || t.seconds < fastest.seconds) fastest = t;
        }
        verify_buffer(q, b.device, bytes, kernel_copy_seed, fmt::format("kernel copy trial ({})", name_of(kind)));
        const double rate = static_cast<double>(bytes) / fastest.seconds * 1e-9;
        trial[fmt::format("{}_gb_per_s", name_of(kind))] = rate;
        trial["timer"] = std::string(to_string(fastest.timer));
        return rate;
    }

    static nlohmann::json kernel_copy_notes() {
        return {
            {"kernels",
             "kernels/transfer/copy.cl: copy_chunked (64-byte uint16 vectors, a contiguous chunk of at least 64 KiB "
             "per work-item, work-groups of one), copy_chunked_stream (the same with streaming stores) or "
             "copy_interleaved (16-byte uint4 vectors, consecutive work-items on consecutive vectors, work-groups "
             "of up to 256)"},
            {"choice",
             "each kernel is tried once on `trial.bytes` (best of 3 launches after a warm-up, output verified; "
             "copy_chunked_stream only when the trial is at least half the device's global memory cache). The "
             "fastest plain kernel runs every size; where copy_chunked_stream won, it runs the sizes from half the "
             "cache up, where a copy's destination no longer fits beside its source (`kernels_used`). Both "
             "directions use the same kernels"},
            {"host_buffer",
             "CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR: what a user writes for memory both the host and a kernel "
             "use (pinned on discrete GPUs, so the kernel reads it over PCIe; plain host memory on CPU devices); "
             "CL_MEM_USE_HOST_PTR needs page-aligned user memory and some drivers copy or re-pin it at each use"},
            {"device_buffer", "CL_MEM_READ_WRITE, the same device buffer the driver copies use"},
            {"timed",
             "device time of every command a user needs per transfer: h2d = clEnqueueMapBuffer(CL_MAP_WRITE) + "
             "unmap of the host-visible buffer, then the kernel; d2h = the kernel, then clEnqueueMapBuffer"
             "(CL_MAP_READ) + unmap. The map/unmap is included: a kernel must not use a mapped buffer, and the "
             "host sees a kernel's output only through a map. CL_MAP_WRITE rather than "
             "CL_MAP_WRITE_INVALIDATE_REGION because the data is written once and must survive every map. The "
             "probe enqueues the maps non-blocking and waits once per batch: no command's device time changes, and "
             "the host is spared a round trip per transfer (a user waits for each map; that wait is host time, "
             "which no device-timed path counts)"},
            {"user_fill",
             "not timed, as for the pinned path: the data is produced in (h2d) or consumed from (d2h) the mapping. "
             "Data that sits in malloc'd memory needs a memcpy into the mapping first, which costs about what the "
             "`map` path measures (transfer.<dir>.pinned.bandwidth{path=map}); against a driver copy from pageable "
             "memory, add that time to the kernel copy's"}};
    }

    static std::uint32_t* map(cl::CommandQueue& q, cl::Buffer& buffer, cl_map_flags flags, std::uint64_t size) {
        try {
            return static_cast<std::uint32_t*>(q.enqueueMapBuffer(buffer, CL_TRUE, flags, 0, size));
        } catch (const cl::Error& e) {
            throw ClError("clEnqueueMapBuffer", e.err());
        }
    }

    // The kernel copy: h2d = map (CL_MAP_WRITE) + unmap of the host-visible buffer, then the
    // kernel into the device buffer; d2h = the kernel into the host-visible buffer, then map
    // (CL_MAP_READ) + unmap. The device time of all three commands counts (kernel_copy_notes). The
    // maps do not block (the variant's `blocking` label is false): a blocking map per step would
    // cost the probe a host round trip per transfer (seconds over a sweep's small sizes) without
    // changing any command's device time.
    static BatchFunction kernel_copy_batch(DeviceSession& s, Buffers& b, const Variant& v, CopyKernel kind) {
        cl::CommandQueue& q = s.queue();
        const bool h2d = v.direction == Direction::h2d;
        const CopyLaunch l = copy_launch(kind, v.size, s.info());
        const cl::Kernel k =
            h2d ? copy_kernel(s, kind, b.host_visible, b.device, l) : copy_kernel(s, kind, b.device, b.host_visible, l);
        cl::Buffer* host_visible = &b.host_visible;
        const bool profiling = s.profiling();
        const std::string label = fmt::format("{} kernel_copy {}", name_of(v.direction), v.size);
        const std::size_t size = v.size;
        return [&q, host_visible, k, l, h2d, size, profiling, label](std::int64_t n) {
            return time_command_steps(
                q, profiling, n,
                [&](std::vector<cl::Event>& events) {
                    if (!h2d) events.push_back(launch(q, k, l));
                    cl::Event mapped, unmapped;
                    void* p = q.enqueueMapBuffer(*host_visible, CL_FALSE, h2d ? CL_MAP_WRITE : CL_MAP_READ, 0, size,
                                                 nullptr, &mapped);
                    q.enqueueUnmapMemObject(*host_visible, p, nullptr, &unmapped);
                    events.push_back(mapped);
                    events.push_back(unmapped);
                    if (h2d) events.push_back(launch(q, k, l));
                },
                label);
        };
    }

    // Poisons what the variant will write, so only its own copy can make the check pass.
    static void prepare(DeviceSession& s, Buffers& b, const Variant& v) {
        cl::CommandQueue& q = s.queue();
        if (v.direction == Direction::h2d) {
            poison_buffer(q, v.path == Path::zero_copy ? b.device2 : b.device, v.size);
        } else if (v.direction == Direction::d2d) {
            poison_buffer(q, b.device2, v.size);
        } else if (v.path == Path::pinned) {
            poison_windows(b.staging, v.size);
        } else if (v.path == Path::kernel_copy) {
            std::uint32_t* p = map(q, b.host_visible, CL_MAP_WRITE, v.size);
            poison_windows(p, v.size);
            q.enqueueUnmapMemObject(b.host_visible, p);
            q.finish();
        } else if (v.path == Path::zero_copy) {
            // The device produces the data in the zero-copy buffer; the host then maps it.
            std::uint32_t* p = map(q, b.zero_copy, CL_MAP_WRITE, v.size);
            poison_windows(p, v.size);
            q.enqueueUnmapMemObject(b.zero_copy, p);
            q.enqueueCopyBuffer(b.device, b.zero_copy, 0, 0, v.size);
            q.finish();
        } else {
            poison_windows(b.host_dst.get(), v.size);
        }
    }

    static void check(DeviceSession& s, Buffers& b, const Variant& v) {
        cl::CommandQueue& q = s.queue();
        const std::string what = fmt::format("{} {} {} of {}", name_of(v.direction), name_of(v.path),
                                             v.blocking ? "blocking" : "non-blocking", format_bytes(v.size));
        if (v.direction == Direction::h2d) {
            if (v.path == Path::zero_copy) {
                // What the device sees in the zero-copy buffer, copied out by the device itself.
                q.enqueueCopyBuffer(b.zero_copy, b.device2, 0, 0, v.size);
                verify_buffer(q, b.device2, v.size, zero_copy_seed, what);
            } else {
                const std::uint32_t seed = v.path == Path::pinned        ? pinned_seed
                                           : v.path == Path::kernel_copy ? kernel_copy_seed
                                                                         : pageable_seed;
                verify_buffer(q, b.device, v.size, seed, what);
            }
        } else if (v.direction == Direction::d2d) {
            verify_buffer(q, b.device2, v.size, pinned_seed, what);
        } else if (v.path == Path::pinned) {
            verify_windows(b.staging, v.size, pinned_seed, what);
        } else if (v.path == Path::kernel_copy) {
            std::uint32_t* p = map(q, b.host_visible, CL_MAP_READ, v.size);
            verify_windows(p, v.size, pinned_seed, what);
            q.enqueueUnmapMemObject(b.host_visible, p);
            q.finish();
        } else if (v.path == Path::zero_copy) {
            std::uint32_t* p = map(q, b.zero_copy, CL_MAP_READ, v.size);
            verify_windows(p, v.size, pinned_seed, what);
            q.enqueueUnmapMemObject(b.zero_copy, p);
            q.finish();
        } else {
            verify_windows(b.host_dst.get(), v.size, pinned_seed, what);
        }
    }

    static BatchFunction batch(DeviceSession& s, Buffers& b, const Variant& v) {
        cl::CommandQueue& q = s.queue();
        const bool profiling = s.profiling();
        const std::string label = fmt::format("{} {} {}", name_of(v.direction), name_of(v.path), v.size);
        const cl_bool blocking = v.blocking ? CL_TRUE : CL_FALSE;
        const std::size_t size = v.size;
        switch (v.path) {
            case Path::pageable:
            case Path::pinned: {
                std::uint32_t* host = v.path == Path::pinned          ? b.staging
                                      : v.direction == Direction::h2d ? b.host_src.get()
                                                                      : b.host_dst.get();
                cl::Buffer* dev = &b.device;
                const bool h2d = v.direction == Direction::h2d;
                return [&q, profiling, label, blocking, size, host, dev, h2d](std::int64_t n) {
                    return time_commands(
                        q, profiling, n,
                        [&] {
                            cl::Event e;
                            if (h2d)
                                q.enqueueWriteBuffer(*dev, blocking, 0, size, host, nullptr, &e);
                            else
                                q.enqueueReadBuffer(*dev, blocking, 0, size, host, nullptr, &e);
                            return e;
                        },
                        label);
                };
            }
            case Path::map: {
                // The copy happens on the host between map and unmap: only the host clock sees it all.
                cl::Buffer* dev = &b.device;
                std::uint32_t* user = v.direction == Direction::h2d ? b.host_src.get() : b.host_dst.get();
                const bool h2d = v.direction == Direction::h2d;
                return [&q, dev, user, h2d, size](std::int64_t n) {
                    const double t = host_seconds([&] {
                        for (std::int64_t i = 0; i < n; ++i) {
                            check_stop_every(i);
                            std::uint32_t* p = map(q, *dev, h2d ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ, size);
                            if (h2d)
                                std::memcpy(p, user, size);
                            else
                                std::memcpy(user, p, size);
                            q.enqueueUnmapMemObject(*dev, p);
                        }
                        q.finish();
                    });
                    return TimedBatch{t, TimerKind::host_steady_clock};
                };
            }
            case Path::zero_copy: {
                cl::Buffer* zc = &b.zero_copy;
                const bool h2d = v.direction == Direction::h2d;
                return [&q, zc, h2d, size](std::int64_t n) {
                    const double t = host_seconds([&] {
                        for (std::int64_t i = 0; i < n; ++i) {
                            check_stop_every(i);
                            std::uint32_t* p = map(q, *zc, h2d ? CL_MAP_WRITE : CL_MAP_READ, size);
                            q.enqueueUnmapMemObject(*zc, p);
                        }
                        q.finish();
                    });
                    return TimedBatch{t, TimerKind::host_steady_clock};
                };
            }
            default: {
                cl::Buffer* src = &b.device;
                cl::Buffer* dst = &b.device2;
                return [&q, profiling, label, src, dst, size](std::int64_t n) {
                    return time_commands(
                        q, profiling, n,
                        [&] {
                            cl::Event e;
                            q.enqueueCopyBuffer(*src, *dst, 0, 0, size, nullptr, &e);
                            return e;
                        },
                        label);
                };
            }
        }
    }

    static void check_stop_every(std::int64_t i) {
        if (i % 64 == 0) check_stop();
    }

    // The headline figures: the best path of each metric at the largest size, without labels.
    static void add_headlines(ProbeResult& out, std::uint64_t largest) {
        const std::string size = std::to_string(largest);
        for (const char* metric :
             {"transfer.h2d.pageable.bandwidth", "transfer.h2d.pinned.bandwidth", "transfer.d2h.pageable.bandwidth",
              "transfer.d2h.pinned.bandwidth", "transfer.h2d.zero_copy.time", "transfer.d2h.zero_copy.time",
              "transfer.h2d.kernel_copy.bandwidth", "transfer.d2h.kernel_copy.bandwidth", "transfer.d2d.bandwidth"}) {
            std::vector<const Measurement*> at_largest;
            for (const auto& m : out.measurements)
                if (m.metric == metric && label_value(m, "size") == size) at_largest.push_back(&m);
            if (const auto* best = best_median(at_largest))
                out.measurements.push_back(headline_from(*best, metric, at_largest.size()));
        }
    }

    static std::string label_value(const Measurement& m, const char* key) {
        const auto it = m.labels.find(key);
        return it == m.labels.end() ? std::string() : it->second;
    }

    // For each series (metric, path, blocking): the size at which it first reaches half of its
    // best bandwidth, interpolated on log2(size) between the two sizes around the crossing.
    static void add_half_peak_sizes(ProbeResult& out) {
        std::map<std::pair<std::string, Labels>, std::vector<std::pair<double, double>>> series;
        for (const auto& m : out.measurements) {
            if (m.labels.empty() || m.metric.find("zero_copy") != std::string::npos) continue;
            Labels key = m.labels;
            key.erase("size");
            series[{m.metric, key}].push_back({std::stod(m.labels.at("size")), m.summary.median});
        }
        for (auto& [key, points] : series) {
            std::sort(points.begin(), points.end());
            double peak = 0;
            for (const auto& p : points)
                peak = std::max(peak, p.second);
            const double half = peak / 2;
            double at = points.front().first;
            std::string note = "the smallest size measured already reaches half of the peak";
            for (std::size_t i = 1; i < points.size() && points.front().second < half; ++i)
                if (points[i].second >= half) {
                    const auto [x0, y0] = points[i - 1];
                    const auto [x1, y1] = points[i];
                    const double f = (half - y0) / (y1 - y0);
                    at = std::exp2(std::log2(x0) + f * (std::log2(x1) - std::log2(x0)));
                    note = fmt::format("interpolated between {} and {} on a log scale", format_bytes(x0),
                                       format_bytes(x1));
                    break;
                }
            Labels labels = key.second;
            const std::string& metric = key.first;
            labels["direction"] = metric.substr(std::string("transfer.").size(), 3);
            Measurement m =
                make_measurement("transfer.half_peak_size", "bytes", labels, {std::round(at)}, TimerKind::none, false);
            m.note = fmt::format("half of {:.3g} GB/s ({}); {}", peak, metric, note);
            out.measurements.push_back(std::move(m));
        }
    }
};

}  // namespace

std::unique_ptr<Probe> make_transfer_bandwidth_probe() {
    return std::make_unique<BandwidthSweepProbe>();
}

}  // namespace clprobe

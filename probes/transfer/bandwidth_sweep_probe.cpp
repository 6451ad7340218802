// transfer.bandwidth: host->device, device->host and device->device bandwidth over a size sweep,
// for every path a user could write: pageable memory with read/write buffer, pinned memory
// (CL_MEM_ALLOC_HOST_PTR, mapped once, as the staging source/target), map/unmap of a device
// buffer, and CL_MEM_USE_HOST_PTR zero-copy; blocking and non-blocking enqueues. Every variant's
// destination is poisoned before and checked after, so a copy that did not happen cannot count.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "transfer/transfer_probes.hpp"
#include "transfer/transfer_support.hpp"

namespace clprobe {

namespace {

using namespace transfer;

enum class Path { pageable, pinned, map, zero_copy, device };
enum class Direction { h2d, d2h, d2d };

const char* name_of(Path p) {
    switch (p) {
        case Path::pageable:
            return "pageable";
        case Path::pinned:
            return "pinned";
        case Path::map:
            return "map";
        case Path::zero_copy:
            return "use_host_ptr";
        default:
            return "copy_buffer";
    }
}
const char* name_of(Direction d) {
    return d == Direction::h2d ? "h2d" : d == Direction::d2h ? "d2h" : "d2d";
}

// The metric ids: pageable memory on one side, driver-allocated (pinned) memory on the
// other (the staging buffer, or the region a map hands out); zero-copy moves nothing and gets its
// own metric, so it never inflates a copy's headline.
std::string metric_of(Direction d, Path p) {
    if (d == Direction::d2d) return "transfer.d2d.bandwidth";
    const char* kind = p == Path::pageable ? "pageable" : p == Path::zero_copy ? "zero_copy" : "pinned";
    return fmt::format("transfer.{}.{}.bandwidth", name_of(d), kind);
}

// Above this, a command's own overhead is well under 1% of its copy and non-blocking enqueues
// take the same device time as blocking ones: they are measured only where they can differ.
constexpr std::uint64_t non_blocking_up_to = 1ull << 20;
constexpr std::uint32_t pageable_seed = 1, pinned_seed = 2, zero_copy_seed = 3;

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
};

class BandwidthSweepProbe final : public Probe {
  public:
    std::string id() const override { return "transfer.bandwidth"; }
    std::string layer() const override { return "transfer"; }
    std::string title() const override { return "Host<->device bandwidth by path, direction and size"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        const std::uint64_t smallest =
            std::max<std::uint64_t>(granule, ctx.options.transfer.min_bytes - ctx.options.transfer.min_bytes % granule);
        const std::uint64_t wanted = std::max(smallest, wanted_largest(ctx.options));
        const std::vector<std::uint64_t> planned = sweep_sizes(ctx.options.mode, smallest, wanted);

        // Six buffers of the largest size: pageable source and target, two device buffers, the
        // pinned staging buffer and the zero-copy one.
        constexpr int buffer_count = 6;
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

        Buffers b;
        out.attributes["setup_seconds"] = host_seconds([&] { b = allocate(s, sizes.back()); });
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
            sampler.add(batch(s, b, v), static_cast<double>(v.size));
            check(s, b, v);
        }
        std::vector<SampleSet> sets;
        out.attributes["sampling_seconds"] = host_seconds([&] { sets = sampler.run(); });
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const Variant& v = variants[i];
            Labels labels{{"path", name_of(v.path)}, {"size", std::to_string(v.size)}};
            if (v.direction != Direction::d2d) labels["blocking"] = v.blocking ? "true" : "false";
            Measurement m = make_measurement(metric_of(v.direction, v.path), "GB/s", std::move(labels),
                                             to_rates(sets[i], static_cast<double>(v.size), 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        add_headlines(out, sizes.back());
        add_half_peak_sizes(out);
        s.queue().enqueueUnmapMemObject(b.pinned, b.staging);
        s.queue().finish();

        out.attributes["sizes"] = sizes;
        out.attributes["largest_bytes"] = sizes.back();
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["paths"] = {
            {"pageable", "clEnqueueWrite/ReadBuffer between malloc'd (page-aligned) host memory and a device buffer"},
            {"pinned",
             "clEnqueueWrite/ReadBuffer between a CL_MEM_ALLOC_HOST_PTR buffer's mapping (mapped once) and "
             "a device buffer"},
            {"map", "clEnqueueMapBuffer of the device buffer, memcpy from/to malloc'd memory, unmap (host clock)"},
            {"use_host_ptr",
             "zero-copy: the data lives in a CL_MEM_USE_HOST_PTR buffer; map + unmap hand it over "
             "(host clock; nothing is copied where the device shares host memory)"},
            {"copy_buffer", "clEnqueueCopyBuffer between two device buffers"}};
        out.attributes["bytes_counted"] = "the transfer size once per transfer (device-to-device as well)";
        out.attributes["non_blocking_sizes"] = fmt::format(
            "non-blocking variants up to {}: above it a command's overhead is negligible and the device "
            "time equals the blocking one",
            format_bytes(non_blocking_up_to));
        const EfficiencyReference ref = efficiency_reference(info, ctx.earlier);
        nlohmann::json eff = {{"applies", ref.kind}, {"reference_metric", ref.metric}, {"note", ref.note}};
        if (ref.gb_per_s > 0) {
            eff["reference_gb_per_s"] = ref.gb_per_s;
            for (const char* d : {"h2d", "d2h"})
                for (const auto& m : out.measurements)
                    if (m.labels.empty() && m.metric == fmt::format("transfer.{}.pinned.bandwidth", d))
                        eff[fmt::format("{}_pinned_fraction", d)] = m.summary.median / ref.gb_per_s;
        }
        out.attributes["efficiency"] = eff;
    }

  private:
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
                for (Path p : {Path::pageable, Path::pinned, Path::map, Path::zero_copy}) {
                    out.push_back({d, p, true, size});
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
        return b;
    }

    static std::uint32_t* map(cl::CommandQueue& q, cl::Buffer& buffer, cl_map_flags flags, std::uint64_t size) {
        try {
            return static_cast<std::uint32_t*>(q.enqueueMapBuffer(buffer, CL_TRUE, flags, 0, size));
        } catch (const cl::Error& e) {
            throw ClError("clEnqueueMapBuffer", e.err());
        }
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
                verify_buffer(q, b.device, v.size, v.path == Path::pinned ? pinned_seed : pageable_seed, what);
            }
        } else if (v.direction == Direction::d2d) {
            verify_buffer(q, b.device2, v.size, pinned_seed, what);
        } else if (v.path == Path::pinned) {
            verify_windows(b.staging, v.size, pinned_seed, what);
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
              "transfer.d2h.pinned.bandwidth", "transfer.h2d.zero_copy.bandwidth", "transfer.d2h.zero_copy.bandwidth",
              "transfer.d2d.bandwidth"}) {
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

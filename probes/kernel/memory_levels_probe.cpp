// kernel.memory_levels: read bandwidth over working sets from inside the first cache level to
// several times the last one (kernel.memory_levels.bandwidth), and a roof per memory level found
// on that curve (kernel.roof.bandwidth, label level). Workloads whose data sits in a cache are
// held against that level's roof instead of kernel.peak.bandwidth, which they can exceed.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "cl/kernel_args.hpp"
#include "common/device_caches.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "core/memory_roofs.hpp"
#include "core/stats.hpp"
#include "core/stop_points.hpp"
#include "core/topology_facts.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

constexpr std::uint64_t vector_bytes = 64;  // uint16
constexpr std::uint64_t unroll = 8;         // UNROLL in kernels/peak/memory_levels.cl
constexpr std::size_t lanes = 16;
constexpr const char* kernel_file = "peak/memory_levels.cl";
enum Shape { chunked, interleaved };
constexpr Shape shapes[] = {chunked, interleaved};
const char* name_of(Shape s) {
    return s == chunked ? "chunked" : "interleaved";
}

using LaneSums = std::array<std::uint32_t, lanes>;

// The input: distinct-looking 32-bit values whose lane sums the host knows exactly (mod 2^32).
std::uint32_t input_value(std::uint64_t index) {
    return static_cast<std::uint32_t>(index * 2654435761u) ^ static_cast<std::uint32_t>(index >> 9);
}

// How the work is cut: one work-group per core on a CPU device (PoCL runs a group on one core, so
// the slice a group re-reads is that core's working set); a few resident groups per compute unit
// on other devices, which hide latency with many work-items in flight.
struct Plan {
    DeviceCaches capacities;
    std::size_t groups = 0;
    std::array<std::size_t, 2> local{};  // per shape
    std::uint64_t stream_bytes = 0;      // each launch reads at least this much
    std::vector<std::uint64_t> sizes;    // working sets, ascending
};

Plan plan(const ProbeContext& ctx, const DeviceInfo& info) {
    Plan p;
    p.capacities = device_caches(ctx.earlier, info);
    const auto& caches = p.capacities.caches;
    const bool cpu = info.type == "cpu";
    const std::size_t units = std::max<std::size_t>(1, info.compute_units);
    p.groups = cpu ? units : units * 4;
    // From a quarter of the first level (L1) to eight times the last, so that two doubling steps
    // lie at or beyond four times the last cache (memory) and form a plateau of their own.
    const std::uint64_t llc = caches.empty() ? 0 : caches.back().bytes;
    const std::uint64_t first =
        !caches.empty() && caches.front().level == "L1" ? caches.front().bytes / 4 : 16 * 1024 * std::uint64_t{units};
    // The shapes' work-group sizes, small enough that the smallest slice still gives each
    // work-item one unrolled step.
    const std::uint64_t max_local = std::bit_floor(std::max<std::uint64_t>(1, info.max_work_group_size));
    const std::uint64_t fits = std::bit_floor(std::max<std::uint64_t>(1, first / p.groups / vector_bytes / unroll));
    p.local[chunked] = cpu ? 1 : std::min<std::uint64_t>({64, max_local, fits});
    p.local[interleaved] = std::min<std::uint64_t>({cpu ? 16u : 256u, max_local, fits});
    const std::uint64_t granule = p.groups * std::max(p.local[0], p.local[1]) * unroll * vector_bytes;
    const std::uint64_t wanted = std::max<std::uint64_t>(64ull << 20, 8 * llc);
    const std::uint64_t top = fit_buffer_bytes(info, wanted, 1, granule);
    for (std::uint64_t ws = std::max(first, granule); ws <= top; ws *= 2) {
        const std::uint64_t rounded = ws - ws % granule;
        if (p.sizes.empty() || rounded > p.sizes.back()) p.sizes.push_back(rounded);
    }
    if (p.sizes.size() < 2)
        throw ProbeUnsupported(fmt::format("device memory holds no curve: at most {}", format_bytes(top)));
    // 128 MiB per launch is already a few milliseconds at any level on a CPU; the default run keeps
    // it (not more) to stay under one clpeak run.
    p.stream_bytes = ctx.options.mode == RunMode::full ? (512ull << 20) : (128ull << 20);
    return p;
}

// Writes the input through a mapping (no host copy of a buffer of several times the last cache)
// and returns each working set's lane sums, which every shape's output must reproduce. One vector
// at a time, so the lane loop vectorises: this runs in every default diagnose.
std::vector<LaneSums> fill_input(cl::CommandQueue& q, cl::Buffer& buffer, const std::vector<std::uint64_t>& sizes) {
    const std::uint64_t bytes = sizes.back();
    auto* values =
        static_cast<std::uint32_t*>(q.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_WRITE_INVALIDATE_REGION, 0, bytes));
    std::vector<LaneSums> sums;
    LaneSums running{};
    std::size_t next = 0;
    for (std::uint64_t v = 0; v < bytes / vector_bytes; ++v) {
        std::uint32_t* out = values + v * lanes;
        for (std::size_t l = 0; l < lanes; ++l) {
            out[l] = input_value(v * lanes + l);
            running[l] += out[l];
        }
        if ((v + 1) * vector_bytes == sizes[next]) {
            sums.push_back(running);
            ++next;
        }
    }
    cl::Event unmapped;
    q.enqueueUnmapMemObject(buffer, values, nullptr, &unmapped);
    unmapped.wait();
    return sums;
}

// One shape at one working set: a kernel object with its own arguments (the sampler runs
// variants round-robin).
struct Variant {
    std::size_t size_index = 0;
    Shape shape = chunked;
    std::uint64_t bytes = 0;
    cl::Kernel kernel;
    std::size_t items = 0, local = 0;
    cl_uint repeats = 1;
    double bytes_per_launch() const { return static_cast<double>(bytes) * repeats; }
};

Variant make_variant(DeviceSession& s, const Plan& p, std::size_t size_index, Shape shape, cl::Buffer& in,
                     cl::Buffer& out) {
    Variant v;
    v.size_index = size_index;
    v.shape = shape;
    v.bytes = p.sizes[size_index];
    v.local = p.local[shape];
    v.items = p.groups * v.local;
    v.repeats = static_cast<cl_uint>((p.stream_bytes + v.bytes - 1) / v.bytes);
    v.kernel = s.kernels().kernel(kernel_file, shape == chunked ? "levels_chunked" : "levels_interleaved");
    set_args(v.kernel, in, out, static_cast<cl_uint>(v.bytes / vector_bytes / v.items), v.repeats);
    return v;
}

TimedBatch enqueue(DeviceSession& s, const Variant& v, std::int64_t launches) {
    cl::CommandQueue& q = s.queue();
    return time_commands(
        q, s.profiling(), launches,
        [&] {
            cl::Event e;
            q.enqueueNDRangeKernel(v.kernel, cl::NullRange, cl::NDRange(v.items), cl::NDRange(v.local), nullptr, &e);
            return e;
        },
        fmt::format("memory_levels {} {}", name_of(v.shape), format_bytes(v.bytes)));
}

// Stale output must not pass for a variant that did not run.
void clear_output(cl::CommandQueue& q, cl::Buffer& out, std::size_t items) {
    q.enqueueFillBuffer(out, cl_uint{0}, 0, items * vector_bytes);
    q.finish();
}

// Each lane's total over the work-items must be `repeats` times that lane's sum over the input.
void verify(cl::CommandQueue& q, cl::Buffer& out, const Variant& v, const LaneSums& input_sums) {
    std::vector<std::uint32_t> host(v.items * lanes);
    q.enqueueReadBuffer(out, CL_TRUE, 0, host.size() * sizeof(std::uint32_t), host.data());
    LaneSums got{};
    for (std::size_t i = 0; i < host.size(); ++i)
        got[i % lanes] += host[i];
    for (std::size_t l = 0; l < lanes; ++l) {
        const std::uint32_t want = input_sums[l] * v.repeats;
        if (got[l] != want)
            throw VerificationError(fmt::format("memory_levels {} at {}: lane {} sums to {} (expected {})",
                                                name_of(v.shape), format_bytes(v.bytes), l, got[l], want));
    }
}

// The faster shape per working set, from one timed launch after a warm one; each shape's output is
// checked. The loser is not sampled further: the curve needs one point per size. On CPU devices
// the shapes differ by 1.5-4x; where they are close, either is a fair point of the curve.
struct Choice {
    Shape shape = chunked;
    std::array<double, 2> gb_per_s{};
};

Choice choose_shape(DeviceSession& s, const Plan& p, std::size_t size_index, cl::Buffer& in, cl::Buffer& out,
                    const LaneSums& sums) {
    Choice c;
    for (Shape shape : shapes) {
        check_stop();
        Variant v = make_variant(s, p, size_index, shape, in, out);
        clear_output(s.queue(), out, v.items);
        enqueue(s, v, 1);  // warm-up: first launch compiles, and pulls the slice into the caches
        const double seconds = enqueue(s, v, 1).seconds;
        verify(s.queue(), out, v, sums);
        c.gb_per_s[shape] = v.bytes_per_launch() / seconds * 1e-9;
    }
    c.shape = c.gb_per_s[interleaved] > c.gb_per_s[chunked] ? interleaved : chunked;
    return c;
}

// Short batches, and every size a contender: the variants here are points of one curve, not
// rivals for one ceiling, so the sampler's contender rule (a fraction of the fastest) must not
// leave the memory-sized points with single-batch samples.
SamplerConfig levels_sampler_for(RunMode mode) {
    SamplerConfig c = ceiling_sampler_for(mode);
    c.contender_fraction = 0;
    c.target_seconds = mode == RunMode::quick ? 0.004 : mode == RunMode::full ? 0.025 : 0.008;
    c.samples = mode == RunMode::quick ? 3 : mode == RunMode::full ? 11 : 5;
    c.budget_seconds = mode == RunMode::quick ? 0.06 : mode == RunMode::full ? 1.5 : 0.15;
    return c;
}

std::string capacities_text(const std::vector<CacheCapacity>& caches) {
    std::string s;
    for (const auto& c : caches)
        s += fmt::format("{}{} {}", s.empty() ? "" : ", ", c.level, format_bytes(c.bytes));
    return s.empty() ? "unknown" : s;
}

class MemoryLevelsProbe final : public Probe {
  public:
    std::string id() const override { return memory_levels_probe_id; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Bandwidth roof per memory level"; }
    double expected_seconds(RunMode mode) const override {
        return mode == RunMode::quick ? 1.5 : mode == RunMode::full ? 12.0 : 3.0;
    }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const auto start = std::chrono::steady_clock::now();
        const Plan p = plan(ctx, s.info());
        cl::Buffer in = make_buffer(s.context(), CL_MEM_READ_ONLY, p.sizes.back());
        cl::Buffer partial =
            make_buffer(s.context(), CL_MEM_READ_WRITE, p.groups * std::max(p.local[0], p.local[1]) * vector_bytes);
        const std::vector<LaneSums> sums = fill_input(s.queue(), in, p.sizes);

        const double setup_seconds = seconds_since(start);
        std::vector<Choice> choices;
        for (std::size_t i = 0; i < p.sizes.size(); ++i)
            choices.push_back(choose_shape(s, p, i, in, partial, sums[i]));
        const double choice_seconds = seconds_since(start) - setup_seconds;

        const SamplerConfig config = levels_sampler_for(ctx.options.mode);
        InterleavedSampler sampler(config);
        std::vector<Variant> variants;
        for (std::size_t i = 0; i < p.sizes.size(); ++i) {
            variants.push_back(make_variant(s, p, i, choices[i].shape, in, partial));
            const Variant& v = variants.back();
            clear_output(s.queue(), partial, v.items);
            sampler.add([&s, v](std::int64_t n) { return enqueue(s, v, n); }, v.bytes_per_launch());
            verify(s.queue(), partial, v, sums[i]);  // while the buffer holds this variant's output
        }
        record(out, p, variants, choices, sampler.run());
        // Where the probe's time goes: it runs in every default diagnose.
        out.attributes["seconds"] = {{"setup", setup_seconds},
                                     {"shape_choice", choice_seconds},
                                     {"sampling", seconds_since(start) - setup_seconds - choice_seconds}};
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["work_groups"] = p.groups;
        out.attributes["local_sizes"] = {{"chunked", p.local[chunked]}, {"interleaved", p.local[interleaved]}};
        out.attributes["bytes_per_launch"] =
            fmt::format("at least {}: each launch reads its working set `repeats` times, one work-group per slice",
                        format_bytes(p.stream_bytes));
        out.attributes["caches"] = capacities_text(p.capacities.caches);
    }

  private:
    static void record(ProbeResult& out, const Plan& p, const std::vector<Variant>& variants,
                       const std::vector<Choice>& choices, const std::vector<SampleSet>& sets) {
        MemoryRoofFacts facts;
        facts.caches = p.capacities.caches;
        std::vector<std::vector<double>> samples;
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const Variant& v = variants[i];
            Measurement m =
                make_measurement("kernel.memory_levels.bandwidth", "GB/s", {{"working_set", std::to_string(v.bytes)}},
                                 to_rates(sets[i], v.bytes_per_launch(), 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            const Choice& c = choices[i];
            m.note =
                fmt::format("{} pattern ({} reads per launch); shape choice: chunked {:.1f}, interleaved {:.1f} GB/s",
                            name_of(v.shape), v.repeats, c.gb_per_s[chunked], c.gb_per_s[interleaved]);
            // A robust spread: one sample another process slowed does not widen the plateau band.
            facts.curve.push_back({v.bytes, m.summary.median, robust_cv(m.samples)});
            samples.push_back(m.samples);
            out.measurements.push_back(std::move(m));
        }
        facts.roofs = detect_plateaus(facts.curve, facts.caches);
        for (const MemoryRoof& roof : facts.roofs) {
            std::vector<double> pooled;
            for (std::size_t i = 0; i < facts.curve.size(); ++i)
                if (facts.curve[i].working_set_bytes >= roof.first_bytes &&
                    facts.curve[i].working_set_bytes <= roof.last_bytes)
                    pooled.insert(pooled.end(), samples[i].begin(), samples[i].end());
            Measurement m =
                make_measurement("kernel.roof.bandwidth", "GB/s", {{"level", roof.level}}, pooled, sets.front().timer);
            m.note = fmt::format("plateau of {} working sets, {} to {}", roof.points, format_bytes(roof.first_bytes),
                                 format_bytes(roof.last_bytes));
            out.measurements.push_back(std::move(m));
        }
        const std::string missing = missing_roofs_note(facts);
        facts.note = p.capacities.note;
        if (!missing.empty()) facts.note += (facts.note.empty() ? "" : "; ") + missing;
        out.attributes["facts"] = to_json(facts);
    }
};

}  // namespace

std::unique_ptr<Probe> make_memory_levels_probe() {
    return std::make_unique<MemoryLevelsProbe>();
}

}  // namespace clprobe

// kernel.compute.int32: 32-bit integer ALU throughput (kernel.peak.int32, GIOP/s), the roof that
// binds kernels whose time goes to integer work (hashing such as hashcat's MD5, bit manipulation),
// beside the FMA roofs of kernel.compute.fp32/fp64/fp16. The kernels (kernels/peak/int32.cl) run
// four mixes of integer work, counted as written (int_mix.hpp): mul (add, mul, and/or/xor,
// rotate), md5 and md5xor (MD5 steps, F spelled as RFC 1321 and as OpenSSL/hashcat do) and arx
// (a ChaCha quarter round). The peak is the fastest variant of any mix, as fp16's is the fastest
// spelling of its step: a CPU's 32-bit multiply is slow, and compilers fuse boolean functions into
// AVX-512's three-input logic instruction for one spelling and not the other, so a hashing kernel
// counted as written could otherwise outrun a single mix's roof. The shapes, the sampler and the
// loop that scales with the iteration count are those of compute_probe.cpp. Every variant's output
// is checked bit for bit against the same recurrence run on the host.
#include <fmt/core.h>

#include <algorithm>
#include <limits>
#include <map>
#include <span>
#include <vector>

#include "cl/command_timing.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "kernel/int_mix.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace int_mix {

namespace {

// The chains' wrapping sum per lane after `trips` trips, for one work-item: every chain of every
// lane at once, independent values the host's own pipelines overlap.
std::vector<std::uint32_t> lane_sums(Mix mix, std::size_t item, std::size_t width, int chains, std::uint64_t trips,
                                     std::uint32_t b, std::uint32_t c) {
    const std::size_t n = static_cast<std::size_t>(chains) * width;
    std::vector<std::uint32_t> sums(width, 0);
    const auto chain_of = [&](std::size_t k) { return static_cast<int>(k / width); };
    const auto lane_of = [&](std::size_t k) { return static_cast<int>(k % width); };
    if (mix == Mix::mul) {
        std::vector<std::uint32_t> a(n);
        for (std::size_t k = 0; k < n; ++k)
            a[k] = start_value(item, chain_of(k), lane_of(k));
        for (std::uint64_t t = 0; t < trips; ++t)
            for (auto& v : a)
                v = step(v, b, c);
        for (std::size_t k = 0; k < n; ++k)
            sums[k % width] += a[k];
        return sums;
    }
    std::vector<Words> words(n);
    for (std::size_t k = 0; k < n; ++k)
        words[k] = start_words(item, chain_of(k), lane_of(k));
    for (std::uint64_t t = 0; t < trips; ++t)
        for (auto& v : words)
            v = mix == Mix::arx ? arx_trip(v) : md5_trip(v, b, c);
    // The kernel's order: (a + b) + (c + d) per chain, chains in turn (wrapping sums, so any order).
    for (std::size_t k = 0; k < n; ++k)
        sums[k % width] += (words[k][0] + words[k][1]) + (words[k][2] + words[k][3]);
    return sums;
}

}  // namespace

std::optional<std::string> check(Mix mix, std::span<const std::uint32_t> device, std::size_t items, int width,
                                 int chains, std::uint64_t trips, std::uint32_t b, std::uint32_t c,
                                 std::size_t checked_items) {
    const auto w = static_cast<std::size_t>(width);
    if (items == 0 || device.size() < items * w)
        return fmt::format("{} values for {} work-items", device.size(), items);
    checked_items = std::min(checked_items, items);
    for (std::size_t probe = 0; probe < checked_items; ++probe) {
        const std::size_t item = checked_items == 1 ? 0 : probe * (items - 1) / (checked_items - 1);
        const std::vector<std::uint32_t> expected = lane_sums(mix, item, w, chains, trips, b, c);
        for (std::size_t lane = 0; lane < w; ++lane) {
            const std::uint32_t got = device[item * w + lane];
            if (got != expected[lane])
                return fmt::format("item {} lane {} is {:#010x} (expected {:#010x} after {} trips)", item, lane, got,
                                   expected[lane], trips);
        }
    }
    return std::nullopt;
}

}  // namespace int_mix

namespace {

using int_mix::Mix;

// The kernel shapes measured (kernels/peak/int32.cl): vector width x independent chains, those of
// the FMA probe, so a CPU's SIMD units are filled and enough work is in flight to hide latency.
struct Shape {
    int width;
    int chains;
};
constexpr Shape all_shapes[] = {{1, 8}, {1, 16}, {2, 8}, {4, 8}, {8, 8}, {16, 4}, {16, 8}, {16, 16}};
// Quick and default runs leave out uint2 and scalar code with 16 chains, as the FMA probe does;
// --full sweeps them all.
constexpr Shape core_shapes[] = {{1, 8}, {4, 8}, {8, 8}, {16, 4}, {16, 8}, {16, 16}};
// md5, md5xor and arx keep four words per chain, four times mul's registers. Outside --full the
// md5 mixes run scalar code (a GPU's best; a CPU driver may vectorize it across work-items) and
// uint16 at 4 and 8 chains (a CPU's; 16 chains are 64 live vectors, which spill). arx, below both
// md5 mixes on PoCL and Intel's CPU runtime, runs at the two ends of those only.
constexpr Shape md5_shapes[] = {{1, 8}, {16, 4}, {16, 8}};
constexpr Shape arx_shapes[] = {{1, 8}, {16, 8}};

struct Variant {
    Mix mix;
    Shape shape;
};

std::vector<Variant> variants_for(RunMode mode) {
    std::vector<Variant> out;
    for (const Mix mix : int_mix::all_mixes) {
        std::span<const Shape> shapes = all_shapes;
        if (mode != RunMode::full) {
            if (mix == Mix::mul)
                shapes = core_shapes;
            else
                shapes = mix == Mix::arx ? std::span<const Shape>(arx_shapes) : std::span<const Shape>(md5_shapes);
        }
        for (const Shape shape : shapes)
            out.push_back({mix, shape});
    }
    return out;
}

std::string kernel_name(Variant v) {
    return fmt::format("{}_v{}_c{}", int_mix::name(v.mix), v.shape.width, v.shape.chains);
}

// Loop trips per sampler iteration, about 128 operations per chain and lane whatever the mix: a
// mul trip is 4x the work of an FMA trip (8 operations against 2 FLOPs), so a quarter of
// compute_probe's 64 keeps the shortest launch as short.
constexpr cl_uint base_trips(Mix mix) {
    switch (mix) {
        case Mix::md5:
        case Mix::md5xor:
            return 4;  // 36 and 32 operations a trip
        case Mix::arx:
            return 10;  // 12
        default:
            return 16;  // 8
    }
}

class IntComputeProbe final : public Probe {
  public:
    std::string id() const override { return "kernel.compute.int32"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Arithmetic ceiling (int32: mul, MD5 and ARX mixes)"; }
    // 6 mul shapes, 3 md5, 3 md5xor and 2 arx (8 each with --full), best-of-2 samples for the three
    // that can set the ceiling, and a host check of each variant.
    double expected_seconds(RunMode mode) const override {
        return 2.5 * mode_time_factor(mode) * static_cast<double>(variants_for(mode).size()) / 6.0;
    }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        const cl::Program& program = s.kernels().program("peak/int32.cl").program;

        const std::size_t local = std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size));
        const std::size_t groups = std::max<std::size_t>(8, std::size_t{info.compute_units} * 32);
        const Launch launch{&s, make_buffer(s.context(), CL_MEM_WRITE_ONLY, groups * local * 16 * sizeof(cl_uint)),
                            groups * local, local};

        SamplerConfig config = ceiling_sampler_for(ctx.options.mode);
        config.max_iterations = std::numeric_limits<cl_uint>::max() / base_trips(Mix::mul);
        config.max_contenders = 3;
        InterleavedSampler sampler(config);
        std::vector<double> ops;
        const std::vector<Variant> variants = variants_for(ctx.options.mode);
        for (const Variant v : variants)
            ops.push_back(add_variant(sampler, program, launch, v));
        const std::vector<SampleSet> sets = sampler.run();
        for (std::size_t i = 0; i < sets.size(); ++i) {
            const Labels labels{{"precision", "int32"},
                                {"mix", std::string(int_mix::name(variants[i].mix))},
                                {"vector", std::to_string(variants[i].shape.width)},
                                {"chains", std::to_string(variants[i].shape.chains)}};
            Measurement m =
                make_measurement("kernel.compute", "GIOP/s", labels, to_rates(sets[i], ops[i], 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        // The variants are in order; the index outlives the push_back, which may move them.
        const Measurement* best = best_by_median(out.measurements, "kernel.compute");
        const Variant winner = variants[static_cast<std::size_t>(best - out.measurements.data())];
        out.attributes["peak_kernel"] = kernel_name(winner);
        out.attributes["peak_mix"] = std::string(int_mix::name(winner.mix));
        // Each mix's best median, so a report shows how far the others are from the roof.
        std::map<std::string, double> mix_peaks;
        for (std::size_t i = 0; i < variants.size(); ++i) {
            double& slot = mix_peaks[std::string(int_mix::name(variants[i].mix))];
            slot = std::max(slot, out.measurements[i].summary.median);
        }
        out.attributes["mix_peaks"] = mix_peaks;
        Measurement headline = headline_from(*best, "kernel.peak.int32", sets.size());
        out.measurements.push_back(std::move(headline));
        out.attributes["work_items"] = launch.items;
        out.attributes["local_size"] = local;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["ops_counted"] = fmt::format(
            "per vector lane, each and, or, xor, not, add, mul and rotate 1, as written in the kernel: mul {} a step "
            "(f = (a & b) | (a ^ c); a = (rotate((a + f) * b, 7) ^ c) + b); md5 {} a step, 4 steps a trip "
            "(a = b + rotate(a + ((b & c) | (~b & d)) + m + k, s), the words' roles turning as in MD5); md5xor {} a "
            "step (the same with F = d ^ (b & (c ^ d))); arx {} a ChaCha quarter round (4 add, 4 xor, 4 rotate); the "
            "peak is the fastest mix",
            int_mix::ops_per_step, int_mix::md5_ops_per_step, int_mix::md5xor_ops_per_step, int_mix::arx_ops_per_round);
        out.attributes["verification"] =
            "every variant, 64 work-items spread over the range, every lane, bit for bit against the same recurrence "
            "on the host";
    }

  private:
    struct Launch {
        DeviceSession* session;
        cl::Buffer result;
        std::size_t items;
        std::size_t local;
    };

    // Warms up and calibrates one variant, then checks its output; returns its operations per iteration.
    static double add_variant(InterleavedSampler& sampler, const cl::Program& program, const Launch& launch,
                              Variant variant) {
        const Shape shape = variant.shape;
        DeviceSession& s = *launch.session;
        cl::CommandQueue& q = s.queue();
        cl::Kernel k(program, kernel_name(variant).c_str());
        k.setArg(0, launch.result);
        k.setArg(1, static_cast<cl_uint>(int_mix::coef_b));
        k.setArg(2, static_cast<cl_uint>(int_mix::coef_c));
        const cl_uint trips = base_trips(variant.mix);
        const double ops_per_iteration =
            static_cast<double>(launch.items) * trips * shape.chains * shape.width * int_mix::ops_per_trip(variant.mix);
        const std::size_t index = sampler.add(
            [&q, &s, k, trips, items = launch.items, local = launch.local,
             label = fmt::format("{} int32", kernel_name(variant))](std::int64_t n) mutable {
                k.setArg(3, static_cast<cl_uint>(trips * static_cast<std::uint64_t>(n)));
                return time_commands(
                    q, s.profiling(), 1,
                    [&] {
                        cl::Event e;
                        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(items), cl::NDRange(local), nullptr, &e);
                        return e;
                    },
                    label);
            },
            ops_per_iteration);
        // Checked now, while the buffer holds this variant's last calibration run.
        const auto w = static_cast<std::size_t>(shape.width);
        std::vector<std::uint32_t> raw(launch.items * w);
        q.enqueueReadBuffer(launch.result, CL_TRUE, 0, raw.size() * sizeof(std::uint32_t), raw.data());
        const auto total_trips = static_cast<std::uint64_t>(trips * sampler.iterations(index));
        if (auto wrong = int_mix::check(variant.mix, raw, launch.items, shape.width, shape.chains, total_trips))
            throw VerificationError(fmt::format("{} (int32): {}", kernel_name(variant), *wrong));
        return ops_per_iteration;
    }
};

}  // namespace

std::unique_ptr<Probe> make_int_compute_probe() {
    return std::make_unique<IntComputeProbe>();
}

}  // namespace clprobe

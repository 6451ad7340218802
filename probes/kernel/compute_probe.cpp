// kernel.compute.<precision>: FMA throughput (kernel.peak.fp32 / fp64 / fp16), the roofline's
// compute roof. Half precision measures the step three ways (fma, mad, a * b + c): a driver without
// native half arithmetic may emulate a correctly rounded fma(half) in software, far below what the
// same cores do with mad; the peak is the fastest spelling. The sampler's iteration count scales the kernel's loop, not
// the number of launches, so launch overhead vanishes on fast GPUs as well as on CPUs.
#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <span>
#include <vector>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

// The kernel shapes measured (kernels/peak/compute.cl): vector width x independent chains.
struct Shape {
    int width;
    int chains;
};
constexpr Shape all_shapes[] = {{1, 8}, {1, 16}, {2, 8}, {4, 8}, {8, 8}, {16, 4}, {16, 8}, {16, 16}};
// Quick and default runs leave out the shapes that never set a ceiling (float2, and scalar code
// with 16 chains, which the compiler packs into vectors anyway), to keep the default run under
// one clpeak run; --full sweeps them all.
constexpr Shape core_shapes[] = {{1, 8}, {4, 8}, {8, 8}, {16, 4}, {16, 8}, {16, 16}};

std::span<const Shape> shapes_for(RunMode mode) {
    if (mode == RunMode::full) return all_shapes;
    return core_shapes;
}

// How the step a = a*b + c is written in the kernel (kernels/peak/compute.cl).
enum class Op { fma, mad, mul_add };

const char* op_name(Op op) {
    switch (op) {
        case Op::mad:
            return "mad";
        case Op::mul_add:
            return "mul_add";
        default:
            return "fma";
    }
}

struct Variant {
    Op op;
    Shape shape;
};

// Half precision also measures mad and a * b + c, at the two shapes the program defines them for.
constexpr Shape half_op_shapes[] = {{1, 8}, {8, 8}};

std::vector<Variant> variants_for(RunMode mode, Precision precision) {
    std::vector<Variant> out;
    for (const Shape shape : shapes_for(mode))
        out.push_back({Op::fma, shape});
    if (precision == Precision::fp16)
        for (const Op op : {Op::mad, Op::mul_add})
            for (const Shape shape : half_op_shapes)
                out.push_back({op, shape});
    return out;
}

std::string kernel_name(Variant v) {
    return fmt::format("{}_v{}_c{}", op_name(v.op), v.shape.width, v.shape.chains);
}

// b and c are exact in half, float and double, so host and device start from the same values, and
// a * b is exact for every value on the way (no fma, mad or multiply needs a correctly rounded
// product: some drivers emulate that in software for half). No value is a denormal. The recurrence
// converges to c / (1 - b) = 1 and its rounding error stays below 1/(1-b) = 2 ulp.
constexpr double coef_b = 0.5, coef_c = 0.5;
// fma this many times slower than the best of mad and a * b + c at the same shapes: a slow path.
constexpr double fma_slow_ratio = 2.0;
// Loop trips per sampler iteration: small, so calibration can pick a launch of the right length.
constexpr cl_uint base_trips = 64;

struct PrecisionTraits {
    const char* name;  // fp32
    const char* options;
    std::size_t element_bytes;
    double tolerance;  // relative, a few times the rounding bound of the recurrence
};

PrecisionTraits traits_of(Precision p) {
    switch (p) {
        case Precision::fp16:
            return {"fp16", "-D REAL=half -D REAL_IS_HALF", 2, 2e-2};
        case Precision::fp64:
            return {"fp64", "-D REAL=double -D REAL_IS_DOUBLE", 8, 1e-12};
        default:
            return {"fp32", "-D REAL=float", 4, 1e-5};
    }
}

// IEEE binary16 of a float, round to nearest even; enough for the normal values used here.
std::uint16_t half_bits(float f) {
    const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
    const std::uint32_t sign = (x >> 16) & 0x8000u;
    const int exp = static_cast<int>((x >> 23) & 0xff) - 127 + 15;
    std::uint32_t mant = x & 0x7fffffu;
    if (exp <= 0 || exp >= 31) return static_cast<std::uint16_t>(sign);  // not needed for b, c
    std::uint32_t h = (static_cast<std::uint32_t>(exp) << 10) | (mant >> 13);
    const std::uint32_t rest = mant & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<std::uint16_t>(sign | h);
}

float half_to_float(std::uint16_t h) {
    const std::uint32_t sign = (h & 0x8000u) << 16;
    const int exp = (h >> 10) & 0x1f;
    const std::uint32_t mant = h & 0x3ffu;
    if (exp == 0) return std::ldexp(static_cast<float>(mant), -24) * (sign ? -1.0f : 1.0f);
    if (exp == 31) return sign ? -INFINITY : INFINITY;
    return std::bit_cast<float>(sign | (static_cast<std::uint32_t>(exp - 15 + 127) << 23) | (mant << 13));
}

// Closed form of the recurrence a <- a*b + c after n steps.
double chain_value(double a0, std::uint64_t n) {
    const double bn = std::pow(coef_b, static_cast<double>(n));
    return bn * a0 + coef_c * (1.0 - bn) / (1.0 - coef_b);
}

double start_value(std::uint64_t item, int chain) {
    return static_cast<double>((item * 8 + static_cast<std::uint64_t>(chain)) & 1023) / 1024.0;
}

class ComputeProbe final : public Probe {
  public:
    explicit ComputeProbe(Precision p) : precision_(p), traits_(traits_of(p)) {}
    std::string id() const override { return std::string("kernel.compute.") + traits_.name; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override {
        return std::string("Arithmetic ceiling (") + traits_.name +
               (precision_ == Precision::fp16 ? " fma, mad, a*b+c)" : " FMA)");
    }
    // 6 shapes (8 with --full; fp16 adds 4 mad and a*b+c variants), best-of-2 samples for the three
    // that can set the ceiling.
    double expected_seconds(RunMode mode) const override {
        return 2.5 * mode_time_factor(mode) * static_cast<double>(variants_for(mode, precision_).size()) / 6.0;
    }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        if (precision_ == Precision::fp64 && !info.fp64)
            throw ProbeUnsupported("the device has no double precision (no cl_khr_fp64)");
        const cl::Program& program = load_program(s, out);

        const std::size_t local = std::min<std::uint64_t>(64, std::max<std::uint64_t>(1, info.max_work_group_size));
        const std::size_t groups = std::max<std::size_t>(8, std::size_t{info.compute_units} * 32);
        const Launch launch{&s,
                            make_buffer(s.context(), CL_MEM_WRITE_ONLY, groups * local * 16 * traits_.element_bytes),
                            groups * local, local};

        SamplerConfig config = ceiling_sampler_for(ctx.options.mode);
        config.max_iterations = std::numeric_limits<cl_uint>::max() / base_trips;
        // Several shapes tie at a CPU's limit; best-of samples for three of them find the ceiling
        // and keep the sweep's time near that of the old five-width one.
        config.max_contenders = 3;
        InterleavedSampler sampler(config);
        std::vector<double> flops;
        const std::vector<Variant> variants = variants_for(ctx.options.mode, precision_);
        for (const Variant v : variants)
            flops.push_back(add_variant(sampler, program, launch, v));
        const std::vector<SampleSet> sets = sampler.run();
        for (std::size_t i = 0; i < sets.size(); ++i) {
            Labels labels{{"precision", traits_.name},
                          {"vector", std::to_string(variants[i].shape.width)},
                          {"chains", std::to_string(variants[i].shape.chains)}};
            // Only half measures more than one spelling of the step.
            if (precision_ == Precision::fp16) labels["op"] = op_name(variants[i].op);
            Measurement m =
                make_measurement("kernel.compute", "GFLOP/s", labels, to_rates(sets[i], flops[i], 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        // The variants are in order; the index outlives the push_back, which may move them.
        const Measurement* best = best_by_median(out.measurements, "kernel.compute");
        out.attributes["peak_kernel"] = kernel_name(variants[static_cast<std::size_t>(best - out.measurements.data())]);
        if (precision_ == Precision::fp16) note_fma_path(variants, out);
        Measurement headline = headline_from(*best, std::string("kernel.peak.") + traits_.name, sets.size());
        out.measurements.push_back(std::move(headline));
        out.attributes["work_items"] = launch.items;
        out.attributes["local_size"] = local;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["flops_counted"] =
            precision_ == Precision::fp16 ? "2 per fma, mad or a*b+c per vector lane" : "2 per FMA per vector lane";
    }

  private:
    struct Launch {
        DeviceSession* session;
        cl::Buffer result;
        std::size_t items;
        std::size_t local;
    };

    const cl::Program& load_program(DeviceSession& s, ProbeResult& out) const {
        if (precision_ != Precision::fp16 || s.info().fp16)
            return s.kernels().program("peak/compute.cl", traits_.options).program;
        // Some drivers implement half arithmetic without advertising cl_khr_fp16: try it.
        out.attributes["fp16_advertised"] = false;
        try {
            return s.kernels().program("peak/compute.cl", traits_.options).program;
        } catch (const ClError&) {
            throw ProbeUnsupported("cl_khr_fp16 is not advertised and a half-precision kernel does not build");
        }
    }

    // Half only: fma against the best of mad and a * b + c at the shapes both were measured at
    // (out.measurements holds the variants, in order). attributes.fma_slowdown is the ratio of
    // their best medians; at fma_slow_ratio or more, attributes.fma_note says fma(half) takes a
    // slow path on this driver (a correctly rounded fma emulated in software).
    static void note_fma_path(const std::vector<Variant>& variants, ProbeResult& out) {
        double fma = 0, other = 0;
        for (std::size_t i = 0; i < variants.size(); ++i) {
            const bool shared = std::any_of(std::begin(half_op_shapes), std::end(half_op_shapes), [&](Shape s) {
                return s.width == variants[i].shape.width && s.chains == variants[i].shape.chains;
            });
            if (!shared) continue;
            double& slot = variants[i].op == Op::fma ? fma : other;
            slot = std::max(slot, out.measurements[i].summary.median);
        }
        if (!(fma > 0) || !(other > 0)) return;
        const double ratio = other / fma;
        out.attributes["fma_slowdown"] = ratio;
        if (ratio >= fma_slow_ratio)
            out.attributes["fma_note"] = fmt::format(
                "fma(half) ran {:.3g}x slower than mad or a*b+c at the same shapes: this driver takes a slow path for "
                "it (a correctly rounded half fma emulated in software); kernel.peak.fp16 is the faster spelling, "
                "and half-precision kernels on this device should use mad or a*b+c",
                ratio);
    }

    // Warms up and calibrates one variant, then checks its output; returns its flops per iteration.
    double add_variant(InterleavedSampler& sampler, const cl::Program& program, const Launch& launch,
                       Variant variant) const {
        const Shape shape = variant.shape;
        DeviceSession& s = *launch.session;
        cl::CommandQueue& q = s.queue();
        cl::Kernel k(program, kernel_name(variant).c_str());
        k.setArg(0, launch.result);
        set_coefficients(k);
        const double flops_per_iteration =
            static_cast<double>(launch.items) * base_trips * shape.chains * shape.width * 2.0;
        const std::size_t index = sampler.add(
            [&q, &s, k, items = launch.items, local = launch.local,
             label = fmt::format("{} {}", kernel_name(variant), traits_.name)](std::int64_t n) mutable {
                k.setArg(3, static_cast<cl_uint>(base_trips * static_cast<std::uint64_t>(n)));
                return time_commands(
                    q, s.profiling(), 1,
                    [&] {
                        cl::Event e;
                        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(items), cl::NDRange(local), nullptr, &e);
                        return e;
                    },
                    label);
            },
            flops_per_iteration);
        // Checked now, while the buffer holds this variant's last calibration run.
        verify(q, launch.result, launch.items, variant,
               static_cast<std::uint64_t>(base_trips * sampler.iterations(index)));
        return flops_per_iteration;
    }

    void set_coefficients(cl::Kernel& k) const {
        if (precision_ == Precision::fp64) {
            k.setArg(1, static_cast<cl_double>(coef_b));
            k.setArg(2, static_cast<cl_double>(coef_c));
        } else if (precision_ == Precision::fp16) {
            k.setArg(1, static_cast<cl_half>(half_bits(static_cast<float>(coef_b))));
            k.setArg(2, static_cast<cl_half>(half_bits(static_cast<float>(coef_c))));
        } else {
            k.setArg(1, static_cast<cl_float>(coef_b));
            k.setArg(2, static_cast<cl_float>(coef_c));
        }
    }

    double element(const std::vector<unsigned char>& raw, std::size_t i) const {
        if (precision_ == Precision::fp64) {
            double v;
            std::memcpy(&v, raw.data() + i * 8, 8);
            return v;
        }
        if (precision_ == Precision::fp16) {
            std::uint16_t h;
            std::memcpy(&h, raw.data() + i * 2, 2);
            return half_to_float(h);
        }
        float v;
        std::memcpy(&v, raw.data() + i * 4, 4);
        return v;
    }

    // Checks 64 work-items spread over the range, every lane, against the closed form.
    void verify(cl::CommandQueue& q, const cl::Buffer& result, std::size_t items, Variant variant,
                std::uint64_t trips) const {
        const Shape shape = variant.shape;
        const auto w = static_cast<std::size_t>(shape.width);
        std::vector<unsigned char> raw(items * w * traits_.element_bytes);
        q.enqueueReadBuffer(result, CL_TRUE, 0, raw.size(), raw.data());
        for (std::size_t probe = 0; probe < 64; ++probe) {
            const std::size_t item = probe * (items - 1) / 63;
            double expected = 0;
            for (int j = 0; j < shape.chains; ++j)
                expected += chain_value(start_value(item, j), trips);
            for (std::size_t lane = 0; lane < w; ++lane) {
                const double got = element(raw, item * w + lane);
                if (!(std::fabs(got - expected) <= traits_.tolerance * std::fabs(expected)))
                    throw VerificationError(fmt::format("{} ({}): item {} lane {} is {} (expected {})",
                                                        kernel_name(variant), traits_.name, item, lane, got, expected));
            }
        }
    }

    Precision precision_;
    PrecisionTraits traits_;
};

}  // namespace

std::unique_ptr<Probe> make_compute_probe(Precision precision) {
    return std::make_unique<ComputeProbe>(precision);
}

}  // namespace clprobe

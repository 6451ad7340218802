// glm.gradient: one GLM gradient evaluation (logistic link) in every variant a GLM kernel chooses between:
// layout, reduction, fused or two passes, vector width, work-group size, precision, dense or CSR,
// and X in reduced storage (fp16, bf16, int8 with per-column scales; fp32 arithmetic).
// Each variant is checked against the host double-precision reference before its time counts,
// and its bandwidth is set against the roof of the memory level its working set lives in
// (common/roof_placement.hpp), measured earlier in the same run.
#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "cl/device_session.hpp"
#include "common/paired_memory_roof.hpp"
#include "common/probe_support.hpp"
#include "common/roof_placement.hpp"
#include "core/glm_facts.hpp"
#include "core/stop_points.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_memory.hpp"
#include "glm/glm_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace glm;

// The atomic variants add every element with a compare-and-swap loop: run on a prefix of the rows
// so they cannot eat the probe's time budget; they are compared by bandwidth, not time.
constexpr std::uint64_t atomic_rows_cap = 1u << 15;

struct Planned {
    GradientVariant variant;
    DeviceData* data = nullptr;
    std::uint64_t rows = 0;
    std::vector<double>* reference = nullptr;
    std::vector<Launch> launches;
    double bytes = 0, flops = 0, working_set = 0;
    // Reduced storage: the relative distance to the gradient over fp32 X (the accuracy kept), and
    // the first-order bound the rounding of X allows.
    double storage_error = 0, storage_bound = 0;
};

// Quick mode measures one step either side of the base on each axis; the other modes sweep wider.
std::vector<GradientVariant> variants_for(const DeviceInfo& info, std::uint32_t p, RunMode mode) {
    const bool quick = mode == RunMode::quick;
    std::vector<GradientVariant> out;
    const auto fits = [&](const GradientVariant& v) {
        // Row kernels keep per-work-item partials in global memory; column kernels tile in local memory.
        const std::uint64_t local = v.layout == Layout::row ? 0 : v.wg * v.vector + p;
        return v.wg <= info.max_work_group_size && local * real_bytes(v.fp64) <= info.local_mem_bytes;
    };
    GradientVariant base;  // row-major, fused, partial sums, float8, 64 items, fp32
    base.wg = std::min<std::size_t>(64, info.max_work_group_size);
    const auto add = [&](GradientVariant v) {
        if (!fits(v)) return;
        for (const auto& o : out)
            if (o.name() == v.name()) return;
        out.push_back(v);
    };
    add(base);
    for (int w : quick ? std::vector<int>{1} : std::vector<int>{1, 4, 16}) {  // vector width
        auto v = base;
        v.vector = w;
        add(v);
    }
    for (std::size_t wg : quick ? std::vector<std::size_t>{16, 256} : std::vector<std::size_t>{16, 32, 128, 256}) {
        auto v = base;  // work-group size
        v.wg = wg;
        add(v);
    }
    {
        auto v = base;  // two passes, as two gemv calls
        v.passes = 2;
        add(v);
    }
    for (int passes : quick ? std::vector<int>{1} : std::vector<int>{1, 2}) {  // column-major layout
        auto v = base;
        v.layout = Layout::col;
        v.vector = 4;
        v.passes = passes;
        add(v);
    }
    {
        auto v = base;  // global atomics
        v.reduction = Reduction::atomic;
        add(v);
    }
    if (info.fp64) {
        auto v = base;
        v.fp64 = true;
        add(v);
    }
    // X in fp16, bf16 and int8 at the base shape (wider vectors too outside quick mode).
    for (const Storage storage : reduced_storages)
        for (int w : quick ? std::vector<int>{8} : std::vector<int>{8, 16}) {
            auto v = base;
            v.storage = storage;
            v.vector = w;
            add(v);
        }
    {
        auto v = base;
        v.format = Format::csr;
        v.vector = 1;
        add(v);
    }
    return out;
}

// A size or count computed from the shape and the device (one sample, no timer).
Measurement fact(const char* metric, const char* unit, Labels labels, std::uint64_t value) {
    return make_measurement(metric, unit, std::move(labels), {static_cast<double>(value)}, TimerKind::none, false);
}

// The device memory of each set of data the probe uploads (at the rows it runs), and the most
// rows one fp32 set of dense (row-major) or CSR data fits at this p.
void record_memory(ProbeResult& out, const DeviceInfo& info, const Shape& shape, std::uint64_t n, std::size_t groups) {
    std::vector<DataShape> sets{{n, shape.cols, Layout::row, Format::dense, false, shape.density, groups},
                                {n, shape.cols, Layout::col, Format::dense, false, shape.density, groups}};
    if (info.fp64) sets.push_back({n, shape.cols, Layout::row, Format::dense, true, shape.density, groups});
    sets.push_back({n, shape.cols, Layout::row, Format::csr, false, shape.density, groups});
    for (const Storage storage : reduced_storages)
        sets.push_back({n, shape.cols, Layout::row, Format::dense, false, shape.density, groups, storage});
    for (const DataShape& set : sets) {
        GradientVariant v;
        v.layout = set.layout;
        v.format = set.format;
        v.fp64 = set.fp64;
        v.storage = set.storage;
        const Labels all = v.labels();
        Labels labels{{"layout", all.at("layout")},
                      {"precision", all.at("precision")},
                      {"format", all.at("format")},
                      {"rows", std::to_string(n)},
                      {"cols", std::to_string(shape.cols)}};
        if (all.count("storage")) labels["storage"] = all.at("storage");
        const Footprint f = data_footprint(set);
        out.measurements.push_back(fact("glm.memory.device_bytes", "bytes", labels, f.total));
        out.measurements.push_back(fact("glm.memory.largest_buffer", "bytes", labels, f.largest));
    }
    if (!info.global_mem_bytes || !info.max_alloc_bytes) {
        out.attributes["memory_limits_missing"] = "the device reports no global memory size or allocation limit";
        return;
    }
    const MemoryLimits limits{info.global_mem_bytes, info.max_alloc_bytes};
    for (Format format : {Format::dense, Format::csr}) {
        const DataShape set{0, shape.cols, Layout::row, format, false, shape.density, groups};
        Measurement m =
            fact("glm.memory.max_rows", "rows",
                 {{"format", format == Format::csr ? "csr" : "dense"}, {"cols", std::to_string(shape.cols)}},
                 max_rows(set, limits));
        m.higher_is_better = true;
        m.note = format == Format::csr ? fmt::format("fp32 CSR, {} non-zeros per row (density {:g}); no margin",
                                                     csr_nonzeros_per_row(shape.cols, shape.density), shape.density)
                                       : std::string("fp32, row-major; no margin");
        out.measurements.push_back(std::move(m));
    }
}

const Measurement* peak_bandwidth(const std::vector<ProbeResult>& earlier) {
    for (const auto& r : earlier)
        if (r.status == ProbeStatus::ok)
            if (const auto* m = find_measurement(r, "kernel.peak.bandwidth")) return m;
    return nullptr;
}

class GradientProbe final : public Probe {
  public:
    std::string id() const override { return "glm.gradient"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "GLM gradient variants (logistic, dense and CSR)"; }
    std::string workload() const override { return "glm"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        const Shape shape = shape_for(ctx);
        GlmGradientFacts facts;
        facts.ran.cols = shape.cols;
        facts.rows_requested = shape.rows;
        facts.density = shape.density;
        // fp32 and fp64 row-major copies, a column-major one and the fp16, bf16 and int8 copies
        // (21 bytes an element in all, under the 3 x 8 budgeted): cap n so they fit.
        const std::uint64_t row_bytes = std::uint64_t{shape.cols} * 8;
        facts.ran.rows = fit_buffer_bytes(info, shape.rows * row_bytes, 3, row_bytes) / row_bytes;
        facts.rows_capped = facts.ran.rows < shape.rows;
        const std::size_t groups = gradient_groups(info);
        record_memory(out, info, shape, facts.ran.rows, groups);

        Inputs in = make_inputs(s, shape, facts.ran.rows, groups, ctx.options.mode);
        SamplerConfig config = sampler_for(ctx.options.mode);
        // Many variants: a slow one (atomics, fp64) gets fewer samples rather than the whole budget.
        config.budget_seconds = ctx.options.mode == RunMode::quick  ? 0.08
                                : ctx.options.mode == RunMode::full ? 2
                                                                    : 0.15;
        InterleavedSampler sampler(config);
        std::vector<Planned> plans;
        const nlohmann::json checked =
            plan_and_verify(s, in, variants_for(info, shape.cols, ctx.options.mode), sampler, plans);
        // Variants whose data lives in memory are held against the memory roof read again beside
        // them (PairedMemoryRoof), at the largest such working set.
        std::optional<PairedMemoryRoof> roof_read;
        if (const auto bytes = largest_in_memory(ctx.earlier, plans)) {
            if (PairedMemoryRoof::fits(info, *bytes))
                roof_read.emplace(s, sampler, *bytes, ctx.earlier);
            else
                out.attributes["memory_roof_note"] = "no room for the memory roof's read beside the data";
        }
        const std::vector<SampleSet> sets = sampler.run();
        std::optional<Measurement> paired;
        if (roof_read) {
            paired = roof_read->measurement("glm.gradient.memory_roof", {}, sets[roof_read->index()]);
            out.measurements.push_back(*paired);
        }

        const Measurement* peak = peak_bandwidth(ctx.earlier);
        for (std::size_t i = 0; i < plans.size(); ++i)
            record_variant(out, ctx.earlier, plans[i], sets[i], in.n, paired);
        headlines(out, peak, in.n);

        facts.sparse_crossover_density = sparse_crossover(out, shape.density);
        write_glm_gradient_facts(out, facts);
        out.attributes["family"] = "logistic";
        out.attributes["csr_nnz"] = in.csr.nnz();
        out.attributes["atomic_rows"] = in.atomic_rows;
        out.attributes["work_groups"] = groups;
        out.attributes["verified"] = checked;
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["bytes_counted"] =
            "X and y once per pass (two passes: X twice plus the residual vector written and read); CSR: values, "
            "column indices, row pointers and y; reduced storage: X at its stored size (2 bytes fp16 and bf16, 1 "
            "int8), fp32 y and the per-column scales";
        out.attributes["storage_check"] =
            "reduced storage: within the fp32 tolerance of the double gradient over the decoded X, and within the "
            "first-order bound of the rounding of X (plus that tolerance) of the gradient over fp32 X "
            "(glm.gradient.storage_error)";
        if (!peak) out.attributes["roofline_note"] = "kernel.peak.bandwidth was not measured in this run";
    }

  private:
    // The data every variant reads: host references and the device copies of each layout.
    struct Inputs {
        std::uint64_t n = 0, atomic_rows = 0;
        std::uint32_t p = 0;
        CsrMatrix csr;
        std::vector<double> reference, atomic_reference, csr_reference;
        DeviceData row32, col32, row64, csr32;
        // X in reduced storage: its device data, the double gradient over the decoded X and the
        // bound on its distance to `reference`.
        struct Stored {
            DeviceData data;
            std::vector<double> reference;
            double bound = 0;
        };
        std::map<Storage, Stored> stored;
    };

    static Inputs make_inputs(DeviceSession& s, const Shape& shape, std::uint64_t n, std::size_t groups, RunMode mode) {
        Inputs in;
        in.n = n;
        in.p = shape.cols;
        const auto data = shared_dataset(n, in.p, Family::logistic);
        const std::vector<double> beta = evaluation_beta(*data);
        in.reference = reference_gradient(*data, beta, ridge_lambda);
        in.atomic_rows = std::min(n, mode == RunMode::quick ? atomic_rows_cap / 4 : atomic_rows_cap);
        in.atomic_reference = reference_gradient(*data, beta, ridge_lambda, in.atomic_rows);
        in.csr = make_csr(n, in.p, shape.density, data_seed);
        in.csr_reference = reference_gradient(in.csr, data->y, Family::logistic, beta, ridge_lambda);
        check_stop();
        in.row32 = upload_dense(s, *data, Layout::row, false, beta, groups);
        in.col32 = upload_dense(s, *data, Layout::col, false, beta, groups);
        if (s.info().fp64) in.row64 = upload_dense(s, *data, Layout::row, true, beta, groups);
        in.csr32 = upload_csr(s, in.csr, data->y, false, beta, groups);
        for (const Storage storage : reduced_storages) {
            check_stop();
            const StoredMatrix x = encode(*data, storage);  // freed once uploaded
            StoredReference ref = stored_reference(*data, x, beta, ridge_lambda);
            in.stored[storage] = {upload_stored(s, *data, x, beta, groups), std::move(ref.gradient), ref.bound};
        }
        return in;
    }

    // Planned, calibrated and checked one at a time: a wrong kernel fails before the next
    // variant's program is even built. Returns what was checked, per variant.
    static nlohmann::json plan_and_verify(DeviceSession& s, Inputs& in, const std::vector<GradientVariant>& variants,
                                          InterleavedSampler& sampler, std::vector<Planned>& plans) {
        nlohmann::json checked = nlohmann::json::array();
        plans.reserve(variants.size());  // the sampler keeps references to its elements
        for (const auto& v : variants) {
            Planned& pl = plans.emplace_back();
            pl.variant = v;
            pl.rows = v.reduction == Reduction::atomic ? in.atomic_rows : in.n;
            pl.reference = v.format == Format::csr            ? &in.csr_reference
                           : v.reduction == Reduction::atomic ? &in.atomic_reference
                                                              : &in.reference;
            pl.data = v.format == Format::csr   ? &in.csr32
                      : v.fp64                  ? &in.row64
                      : v.layout == Layout::col ? &in.col32
                                                : &in.row32;
            if (v.storage != Storage::real) {
                auto& stored = in.stored.at(v.storage);
                pl.data = &stored.data;
                pl.reference = &stored.reference;
                pl.storage_bound = stored.bound;
            }
            pl.launches = gradient_launches(s, *pl.data, v, Family::logistic, 1.0 / static_cast<double>(pl.rows),
                                            ridge_lambda, pl.rows);
            pl.bytes = gradient_bytes(v, pl.rows, in.p, in.csr.nnz());
            pl.flops = gradient_flops(v, pl.rows, in.p, in.csr.nnz());
            pl.working_set = gradient_working_set(v, pl.rows, in.p, in.csr.nnz());
            const std::string name = "glm." + v.name();
            sampler.add([&s, &pl, name](std::int64_t iters) { return time_launches(s, pl.launches, iters, name); },
                        pl.bytes);
            // Checked now, while the buffers hold this variant's output.
            const std::vector<double> got = read_gradient(s.queue(), *pl.data);
            const double err = verify_gradient(v.name(), got, *pl.reference, v.fp64);
            nlohmann::json entry{{"variant", v.name()}, {"rows", pl.rows}, {"relative_error", err}};
            if (v.storage != Storage::real) {
                pl.storage_error = verify_storage_accuracy(v.name(), got, in.reference, pl.storage_bound);
                entry["reference"] = "double gradient over the decoded " + to_string(v.storage) + " X";
                entry["storage_error"] = pl.storage_error;
                entry["storage_bound"] = pl.storage_bound;
            }
            checked.push_back(std::move(entry));
            check_stop();
        }
        return checked;
    }

    // The largest working set of the variants placed at the memory level, if any.
    static std::optional<std::uint64_t> largest_in_memory(const std::vector<ProbeResult>& earlier,
                                                          const std::vector<Planned>& plans) {
        std::optional<std::uint64_t> largest;
        for (const auto& pl : plans) {
            const auto bytes = static_cast<std::uint64_t>(pl.working_set);
            const auto roof = bandwidth_roof_for(earlier, bytes);
            if (roof && roof->level == "memory" && (!largest || bytes > *largest)) largest = bytes;
        }
        return largest;
    }

    // Time, bandwidth, GFLOP/s and roofline placement of one variant; a variant in memory against
    // the higher of the memory roof and the paired read.
    static void record_variant(ProbeResult& out, const std::vector<ProbeResult>& earlier, const Planned& pl,
                               const SampleSet& set, std::uint64_t n, const std::optional<Measurement>& paired) {
        const Labels labels = pl.variant.labels();
        Measurement t = make_measurement("glm.gradient.time", "ms", labels, to_times(set, 1e3), set.timer, false);
        t.iterations_per_sample = set.iterations;
        if (pl.rows != n) t.note = fmt::format("over the first {} rows only", pl.rows);
        Measurement bw =
            make_measurement("glm.gradient.bandwidth", "GB/s", labels, to_rates(set, pl.bytes, 1e-9), set.timer);
        Measurement gf =
            make_measurement("glm.gradient.gflops", "GFLOP/s", labels, to_rates(set, pl.flops, 1e-9), set.timer);
        const auto working_set = static_cast<std::uint64_t>(pl.working_set);
        auto roof = bandwidth_roof_for(earlier, working_set);
        if (paired && roof && roof->level == "memory") roof = raised_roof(roof, *paired);
        add_roofline_point(
            out, placed_point("glm " + pl.variant.name(), pl.flops / pl.bytes, gf.summary.median, working_set, roof));
        out.measurements.push_back(t);
        out.measurements.push_back(bw);
        out.measurements.push_back(gf);
        if (roof) out.measurements.push_back(fraction_of_roof("glm.gradient.roofline_fraction", labels, bw, *roof));
        if (pl.variant.storage != Storage::real) {
            // Exactly 0 is possible in principle; keep it positive for log-scale renderers.
            Measurement e = make_measurement("glm.gradient.storage_error", "relative", labels,
                                             {std::max(pl.storage_error, 1e-300)}, TimerKind::none, false);
            e.note = fmt::format(
                "max |g - g_fp32| / max |g_fp32| against the double gradient over fp32 X; the rounding of X allows "
                "{:.2g} (first order)",
                pl.storage_bound);
            out.measurements.push_back(std::move(e));
        }
    }

    // The best dense fp32 variant over all rows (by time), as headline metrics without labels.
    static void headlines(ProbeResult& out, const Measurement* peak, std::uint64_t n) {
        (void)n;
        const Measurement* best = nullptr;
        std::size_t count = 0;
        for (const auto& m : out.measurements) {
            if (m.metric != "glm.gradient.time" || !m.note.empty()) continue;
            if (m.labels.at("precision") != "fp32" || m.labels.at("format") != "dense") continue;
            ++count;
            if (!best || m.summary.median < best->summary.median) best = &m;
        }
        if (!best) return;
        const Labels labels = best->labels;
        std::vector<Measurement> add;
        if (const auto* bw = find_measurement(out, "glm.gradient.bandwidth", labels))
            add.push_back(headline_from(*bw, "glm.gradient.best.bandwidth", count));
        if (peak)
            if (const auto* fr = find_measurement(out, "glm.gradient.roofline_fraction", labels))
                add.push_back(headline_from(*fr, "glm.gradient.best.roofline_fraction", count));
        for (auto& m : add) {
            m.note = "fastest dense fp32 variant: " + labels_to_string(labels);
            out.measurements.push_back(std::move(m));
        }
    }

    // Where CSR stops paying: CSR time grows with the non-zeros, so at density d it matches the
    // dense time near d * dense / csr (an estimate from the two variants measured here).
    static std::optional<double> sparse_crossover(const ProbeResult& out, double density) {
        const auto* csr = find_measurement(out, "glm.gradient.time", {{"format", "csr"}, {"precision", "fp32"}});
        const Measurement* dense = nullptr;  // the fastest full-size dense fp32 variant
        for (const auto& m : out.measurements)
            if (m.metric == "glm.gradient.time" && m.note.empty() && m.labels.at("format") == "dense" &&
                m.labels.at("precision") == "fp32" && (!dense || m.summary.median < dense->summary.median))
                dense = &m;
        if (!csr || !dense || csr->summary.median <= 0) return std::nullopt;
        return std::min(1.0, density * dense->summary.median / csr->summary.median);
    }
};

}  // namespace

std::unique_ptr<Probe> make_glm_gradient_probe() {
    return std::make_unique<GradientProbe>();
}

}  // namespace clprobe

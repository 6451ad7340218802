#include "rules/glm_rules.hpp"

#include <fmt/core.h>

#include <algorithm>

#include "core/glm_facts.hpp"
#include "rules/pipeline.hpp"

namespace clprobe {

namespace {

// A rewrite of the gradient kernel is worth it from 25% (layouts, reductions, precision); a
// second pass or a work-group size costs less to change, so 15% already counts.
constexpr double layout_ratio = 1.25;
constexpr double atomics_ratio = 1.25;
constexpr double passes_ratio = 1.15;
constexpr double wg_ratio = 1.15;
constexpr double fp64_ratio = 1.5;
// Changing how X is stored is a data-pipeline change: worth it from 25%, like a kernel rewrite.
constexpr double format_ratio = 1.25;
// Reduced storage of X (fp16, bf16, int8) is recommended from 25% faster than its fp32 twin, like
// any change of how X is stored, and only when it kept the gradient within 1% of the one over
// fp32 X (relative, max-norm): past that a fit's coefficients move visibly.
constexpr double storage_ratio = 1.25;
constexpr double storage_max_error = 0.01;
// The best gradient below half the measured memory roof leaves most of the device unused.
constexpr double roofline_floor = 0.5;
// Uploads above 40% of the baseline step make the step transfer-bound.
constexpr double upload_share_floor = 0.4;
constexpr double offload_ratio = 1.1;

const char* const time_metric = "glm.gradient.time";
const std::string stage_metric = std::string(pipeline_ids::glm) + ".stage_time";
const std::string step_metric = std::string(pipeline_ids::glm) + ".step_time";

Labels with(Labels l, const std::string& key, const std::string& value) {
    l[key] = value;
    return l;
}

// The fastest full-size measurement among those matching `labels` (atomic variants run on fewer
// rows and carry a note, so they never stand in for a full-size time).
const Measurement* fastest(const RunReport& r, const Labels& labels) {
    const Measurement* best = nullptr;
    for (const auto* m : find_measurements(r, time_metric, labels)) {
        if (!m->note.empty() || m->summary.median <= 0) continue;
        if (!best || m->summary.median < best->summary.median) best = m;
    }
    return best;
}

void target_compute(Finding& f, const Gap& gap, std::string basis) {
    f.target = stage_target(pipeline_ids::glm, Stage::compute, gap.gain());
    f.gain_basis = std::move(basis);
}

const Labels dense_fp32{{"format", "dense"}, {"precision", "fp32"}, {"reduction", "local"}};

RuleOutcome layout(const RunReport& r, const RuleSpec& rule) {
    const auto* row = fastest(r, with(with(dense_fp32, "layout", "row"), "passes", "1"));
    const auto* col = fastest(r, with(with(dense_fp32, "layout", "col"), "passes", "1"));
    if (!row || !col) return rule.missing();
    const bool row_wins = row->summary.median < col->summary.median;
    const Measurement& fast = row_wins ? *row : *col;
    const Measurement& slow = row_wins ? *col : *row;
    const auto gap = significant_gap(r, fast, slow, layout_ratio);
    if (!gap) return RuleOutcome::none();
    const auto ms = [](const Measurement& m) { return fmt::format("{:.3g} {}", m.summary.median, m.unit); };
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("The {}-major layout of X makes the gradient {:.1f}x slower than {}-major on this device ({} "
                    "against {})",
                    label_of(slow, "layout"), gap->ratio, label_of(fast, "layout"), ms(slow), ms(fast)),
        fast, "the layout that measured faster on this device", slow, "the same gradient, other layout", *gap, "");
    target_compute(f, *gap, "gradient time saved by the faster layout of X");
    const std::string measured =
        fmt::format(" Measured here: {}-major {}, {}-major {} per gradient (fused, local reduction, fp32).",
                    label_of(fast, "layout"), ms(fast), label_of(slow, "layout"), ms(slow));
    f.suggestion =
        (row_wins ? "Store X row-major for this device and give each work-item a contiguous block of rows to stream."
                  : "Store X column-major for this device (transpose it once at upload) so consecutive work-items "
                    "read consecutive rows of each column.") +
        measured + " The faster layout differs between devices and drivers: measure it again on another one.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome atomics(const RunReport& r, const RuleSpec& rule) {
    const auto atomic_bw = find_measurements(r, "glm.gradient.bandwidth", {{"reduction", "atomic"}});
    if (atomic_bw.empty()) return rule.missing();
    const Measurement& atomic = *atomic_bw.front();
    const auto* local = find_measurement(r, "glm.gradient.bandwidth", with(atomic.labels, "reduction", "local"));
    if (!local) return rule.missing();
    const auto gap = significant_gap(r, *local, atomic, atomics_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("Global atomics make the gradient reduction {:.1f}x slower than a work-group reduction",
                    gap->ratio),
        *local, "partial sums per work-item or work-group, then a second small pass", atomic,
        "every r_i x_ij added to g with a global atomic", *gap, "");
    target_compute(f, *gap, "gradient time saved by partial sums instead of global atomics (compared by bandwidth)");
    f.suggestion =
        "Accumulate each work-item's rows privately or in local memory, write one partial gradient per work-group and "
        "add the partials in a second tiny kernel; never add every element to g with a global atomic.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome passes(const RunReport& r, const RuleSpec& rule) {
    const auto* two = fastest(r, with(dense_fp32, "passes", "2"));
    if (!two) return rule.missing();
    const auto* one = fastest(r, with(two->labels, "passes", "1"));
    if (!one) return rule.missing();
    const auto gap = significant_gap(r, *one, *two, passes_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Two passes over X (as two gemv calls) take {:.1f}x the time of one fused pass", gap->ratio), *one,
        "one pass: residual and gradient from the row while it is in cache", *two, "residual pass, then gradient pass",
        *gap, "");
    target_compute(f, *gap, "gradient time saved by fusing the two passes");
    f.suggestion =
        "Fuse the passes: compute eta_i = x_i . beta, r_i = mu(eta_i) - y_i and add r_i x_i while row i is still in "
        "registers or cache, so X is read from memory once instead of twice.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome workgroup(const RunReport& r, const RuleSpec& rule) {
    // The sweep: variants that differ from the first measured (base) variant in wg only.
    const auto all = find_measurements(r, time_metric, dense_fp32);
    if (all.empty()) return rule.missing();
    Labels sweep = all.front()->labels;
    sweep.erase("wg");
    const auto sizes = find_measurements(r, time_metric, sweep);
    if (sizes.size() < 2) return rule.missing();
    const auto [lo, hi] = std::minmax_element(
        sizes.begin(), sizes.end(), [](const auto* a, const auto* b) { return a->summary.median < b->summary.median; });
    const auto gap = significant_gap(r, **lo, **hi, wg_ratio);
    if (!gap) return RuleOutcome::none();
    const std::string best = label_of(**lo, "wg"), worst = label_of(**hi, "wg");
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Work-groups of {} take {:.1f}x the time of {}, the best size measured", worst, gap->ratio, best),
        **lo, "the best work-group size measured", **hi, "the worst one", *gap, "");
    target_compute(f, *gap, "gradient time saved by the best work-group size over the worst");
    f.suggestion = fmt::format(
        "Launch the gradient with work-groups of {} (measured best here) instead of {}; sweep it again on other "
        "devices, as the best size depends on the device and on p.",
        best, worst);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome roofline(const RunReport& r, const RuleSpec& rule) {
    const auto* fraction = find_measurement(r, "glm.gradient.best.roofline_fraction");
    const auto* best = find_measurement(r, "glm.gradient.best.bandwidth");
    if (!fraction || !best) return rule.missing();
    const double frac = fraction->summary.median;
    if (frac >= roofline_floor || frac <= 0) return RuleOutcome::none();
    // The fraction's own spread carries both the gradient's and the roof's noise.
    const double gap = roofline_floor / frac - 1.0, noise = std::max(0.01, sample_noise(*fraction));
    const double conf = gap <= 2 * noise ? 0.0 : 1.0 - 2 * noise / gap;
    if (conf < min_confidence) return RuleOutcome::none();
    Finding f = rule.finding(
        Severity::medium,
        fmt::format("The best GLM gradient moves {:.0f}% of the bandwidth roof of the memory level X lives in",
                    100 * frac));
    f.evidence = {evidence_of(*best, "the fastest dense fp32 gradient"), evidence_of(*fraction, fraction->note)};
    f.confidence = conf;
    f.target = stage_target(pipeline_ids::glm, Stage::compute, 1.0 - frac);
    f.gain_basis = "gradient time saved if the kernel streamed X at the measured roof of its memory level";
    f.suggestion =
        "The gradient is memory-bound (a few FLOP per byte): read X with the access pattern and vector width that "
        "reached kernel.peak.bandwidth, use enough work-groups to occupy every compute unit, and keep each row's "
        "loads in one stream.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome fp64(const RunReport& r, const RuleSpec& rule) {
    const auto fp64s = find_measurements(r, time_metric, {{"precision", "fp64"}});
    if (fp64s.empty()) return rule.missing();
    const auto* twin = find_measurement(r, time_metric, with(fp64s.front()->labels, "precision", "fp32"));
    if (!twin) return rule.missing();
    const auto gap = significant_gap(r, *twin, *fp64s.front(), fp64_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::medium, fmt::format("The fp64 gradient takes {:.1f}x the time of fp32", gap->ratio), *twin,
        "fp32 X and arithmetic", *fp64s.front(), "the same kernel in double precision", *gap, "");
    target_compute(f, *gap, "gradient time saved by fp32 X and arithmetic");
    f.suggestion =
        "Keep X in fp32 (half the bytes to stream) and accumulate the gradient and the p x p Newton system in fp64 "
        "(mixed precision); solve the small system on the host in double.";
    return RuleOutcome::found(std::move(f));
}

const Measurement* step_of(const RunReport& r, const std::string& variant) {
    return find_measurement(r, step_metric, {{"variant", variant}});
}

RuleOutcome upload_bound(const RunReport& r, const RuleSpec& rule) {
    const auto* base = step_of(r, "serial_pageable");
    const auto* upload =
        find_measurement(r, stage_metric, {{"stage", stage_name(Stage::upload)}, {"variant", "serial_pageable"}});
    if (!base || !upload) return rule.missing();
    double stages = 0;
    for (const auto* m : find_measurements(r, stage_metric, {{"variant", "serial_pageable"}}))
        stages += m->summary.median;
    if (stages <= 0) return RuleOutcome::none();
    const double share = upload->summary.median / stages;
    if (share < upload_share_floor) return RuleOutcome::none();

    struct Option {
        const char* variant;
        const char* fix;
    };
    const Option options[] = {{"resident", "keep X resident on the device across steps"},
                              {"serial_pinned", "upload from pinned host memory (CL_MEM_ALLOC_HOST_PTR, mapped)"},
                              {"double_buffered", "overlap the next batch's upload with this batch's kernels"}};
    std::vector<std::string> fixes;
    std::optional<Gap> best_gap;
    const Measurement* best = nullptr;
    for (const auto& o : options) {
        const auto* m = step_of(r, o.variant);
        if (!m) continue;
        const auto gap = significant_gap(r, *m, *base, 1.0);
        fixes.push_back(gap ? fmt::format("{}: {:.0f}% faster step", o.fix, 100 * gap->gain())
                            : fmt::format("{}: no measurable gain here", o.fix));
        if (gap && (!best_gap || gap->ratio > best_gap->ratio)) {
            best_gap = gap;
            best = m;
        }
    }
    if (!best) return RuleOutcome::none();  // uploads dominate, but nothing measured here does better
    Finding f = rule.comparison(
        Severity::high, fmt::format("Uploads take {:.0f}% of the mini-batch step", 100 * share), *upload,
        "upload stage of the serial, pageable step", *base, "the whole serial, pageable step", *best_gap,
        fmt::format("whole-step time measured for the {} variant against serial_pageable", label_of(*best, "variant")));
    f.evidence.push_back(evidence_of(*best, "the fastest variant measured"));
    f.measured_share = true;  // whole-step times of two measured variants
    std::string text = "The step is bound by host-to-device copies of X: ";
    for (std::size_t i = 0; i < fixes.size(); ++i)
        text += (i ? "; " : "") + fixes[i];
    f.suggestion = text + ".";
    return RuleOutcome::found(std::move(f));
}

// A copy of `m` divided by `rows`: times per row, so steps over different row counts compare.
Measurement per_row(const Measurement& m, double rows) {
    std::vector<double> s = m.samples;
    for (double& v : s)
        v /= rows;
    Measurement out = make_measurement(m.metric, m.unit + "/row", m.labels, s, m.timer, m.higher_is_better);
    return out;
}

// The rows a GLM probe ran; 0 when the probe or its shape is absent.
double rows_of(const RunReport& r, const char* probe) {
    const auto shape = glm_run_shape_of(r, probe);
    return shape ? static_cast<double>(shape->rows) : 0.0;
}

RuleOutcome host_faster(const RunReport& r, const RuleSpec& rule) {
    const auto* host = find_measurement(r, "glm.host_blas.gradient.time");
    const auto* device = step_of(r, "serial_pageable");
    const double host_rows = rows_of(r, glm_probe_ids::host_blas), device_rows = rows_of(r, glm_probe_ids::pipeline);
    if (!host || !device || host_rows <= 0 || device_rows <= 0) return rule.missing();
    // Host time in ms, step in s: both to seconds per row.
    Measurement h = per_row(*host, host_rows * 1e3);
    const Measurement d = per_row(*device, device_rows);
    h.unit = d.unit;
    const auto gap = significant_gap(r, h, d, offload_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("OpenBLAS on the host computes the gradient {:.1f}x faster than the device end to end", gap->ratio),
        *host, "two sgemv calls and the link function on the host", *device,
        "upload, kernels and download of the same gradient (serial, pageable)", *gap,
        "per-row time of the host gradient against the device's whole mini-batch step");
    f.measured_share = true;  // a share of the device's measured mini-batch step
    f.suggestion =
        "At this size offloading does not pay while X must cross to the device every step: compute the gradient on "
        "the host with BLAS, or keep X resident on the device so only beta and the gradient move.";
    return RuleOutcome::found(std::move(f));
}

// Dense against CSR on the same rows at the density the probe generated: the format to keep X in,
// and the density where the two would cross (the probe's estimate).
RuleOutcome sparse_format(const RunReport& r, const RuleSpec& rule) {
    const auto* csr = fastest(r, {{"format", "csr"}, {"precision", "fp32"}});
    const auto* dense = fastest(r, dense_fp32);
    if (!csr || !dense) return rule.missing();
    const bool csr_wins = csr->summary.median < dense->summary.median;
    const Measurement& fast = csr_wins ? *csr : *dense;
    const Measurement& slow = csr_wins ? *dense : *csr;
    const auto gap = significant_gap(r, fast, slow, format_ratio);
    if (!gap) return RuleOutcome::none();
    const auto facts = glm_gradient_facts_of(r);
    const double density = facts ? facts->density : 0.0;
    const double crossover = facts ? facts->sparse_crossover_density.value_or(0) : 0.0;
    const std::string at = density > 0 ? fmt::format("at density {:.3g}", density) : "at the density measured";
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("{} the {} gradient takes {:.1f}x the time of the {} one", at, csr_wins ? "dense" : "CSR",
                    gap->ratio, csr_wins ? "CSR" : "dense"),
        fast, csr_wins ? "CSR: only the non-zeros and their column indices are read" : "dense X, read as one stream",
        slow, csr_wins ? "every element of X, zeros included" : "CSR values, indices and gathers of beta", *gap, "");
    target_compute(f, *gap, "gradient time saved by the faster storage format of X at this density");
    const std::string where =
        crossover > 0 ? fmt::format(" (the two cross near density {:.3g} on this device)", crossover) : "";
    f.suggestion = csr_wins
                       ? fmt::format("Keep X in CSR for data this sparse{}; densify only above the crossover.", where)
                       : fmt::format(
                             "Store X dense at this density{}: CSR's indices and scattered beta loads "
                             "cost more than the zeros it skips.",
                             where);
    return RuleOutcome::found(std::move(f));
}

// A variant over X in reduced storage, beside its fp32 twin (same layout, vector width, work-group).
struct StorageOption {
    const Measurement* time;
    const Measurement* fp32;   // the same variant over fp32 X
    const Measurement* error;  // glm.gradient.storage_error: the accuracy it kept
    std::optional<Gap> gap;    // set when it is storage_ratio faster, clear of the noise
    bool accurate() const { return error->summary.median <= storage_max_error; }
};

// Every reduced-storage variant that has its fp32 twin and its accuracy.
std::vector<StorageOption> storage_options(const RunReport& r) {
    std::vector<StorageOption> out;
    for (const auto* m : find_measurements(r, time_metric)) {
        if (!m->labels.count("storage") || !m->note.empty() || m->summary.median <= 0) continue;
        Labels twin = m->labels;
        twin.erase("storage");
        twin["precision"] = "fp32";
        const auto* fp32 = find_measurement(r, time_metric, twin);
        const auto* error = find_measurement(r, "glm.gradient.storage_error", m->labels);
        if (!fp32 || !error || fp32->summary.median <= 0) continue;
        out.push_back({m, fp32, error, significant_gap(r, *m, *fp32, storage_ratio)});
    }
    return out;
}

// What to change, the accuracy it kept (and the fit's, if glm.fit ran), and every storage measured.
std::string storage_suggestion(const RunReport& r, const StorageOption& best,
                               const std::vector<StorageOption>& options) {
    const std::string name = label_of(*best.time, "storage");
    std::string text = fmt::format(
        "Store X in {} and widen it to fp32 as it is loaded ({}), keeping y, beta and every sum in fp32: the "
        "gradient streams fewer bytes of X, and here it kept a relative gradient error of {:.2g}",
        name,
        name == "fp16"   ? "vload_half, no extension needed"
        : name == "bf16" ? "as_float((uint)u << 16)"
                         : "a per-column scale times the int8 value",
        best.error->summary.median);
    std::optional<double> fit;  // the largest coefficient difference a fit on this storage ended at
    for (const auto* m : find_measurements(r, "glm.fit.error", {{"storage", name}}))
        fit = std::max(fit.value_or(0.0), m->summary.median);
    if (fit) text += fmt::format(" (a fit on {} X ended {:.2g} from the double fit)", name, *fit);
    text += ". Measured here:";
    for (std::size_t i = 0; i < options.size(); ++i) {
        const StorageOption& o = options[i];
        const double ratio = o.fp32->summary.median / o.time->summary.median;
        text += fmt::format("{} {} v{} {:.2f}x the fp32 speed, error {:.2g}{}", i ? ";" : "",
                            label_of(*o.time, "storage"), label_of(*o.time, "vector"), ratio, o.error->summary.median,
                            !o.accurate()           ? fmt::format(" (above the {} allowed)", storage_max_error)
                            : o.gap                 ? std::string()
                            : ratio < storage_ratio ? fmt::format(" (under the {}x asked)", storage_ratio)
                                                    : std::string(" (not clear of the noise)"));
    }
    return text + ".";
}

// X in reduced storage against its fp32 twin (same layout, vector width, work-group): the storage
// that measured faster by a gap clear of the noise, at the accuracy it kept.
RuleOutcome storage(const RunReport& r, const RuleSpec& rule) {
    const std::vector<StorageOption> options = storage_options(r);
    if (options.empty()) return rule.missing();
    const StorageOption* best = nullptr;
    for (const auto& o : options)
        if (o.gap && o.accurate() && (!best || o.gap->ratio > best->gap->ratio)) best = &o;
    if (!best) return RuleOutcome::none();
    const std::string name = label_of(*best->time, "storage");
    const auto ms = [](const Measurement& m) { return fmt::format("{:.3g} {}", m.summary.median, m.unit); };
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Storing X in {} makes the gradient {:.1f}x faster than fp32 X ({} against {}; relative gradient "
                    "error {:.2g})",
                    name, best->gap->ratio, ms(*best->time), ms(*best->fp32), best->error->summary.median),
        *best->time, fmt::format("X stored in {}, fp32 arithmetic", name), *best->fp32, "the same kernel over fp32 X",
        *best->gap, "");
    f.evidence.push_back(evidence_of(*best->error, "distance of its gradient to the one over fp32 X"));
    target_compute(f, *best->gap, fmt::format("gradient time saved by storing X in {}", name));
    f.suggestion = storage_suggestion(r, *best, options);
    return RuleOutcome::found(std::move(f));
}

// Requested rows beyond what one dense fp32 copy of the data fits: twice and four times as many
// grade the severity.
constexpr double rows_far = 2.0, rows_very_far = 4.0;

// The requested rows against glm.memory.max_rows: the device holds no more than that many rows of
// dense fp32 data (X, y and the gradient's work buffers), or glm.gradient had to run fewer rows.
RuleOutcome memory_shape(const RunReport& r, const RuleSpec& rule) {
    const auto* dense = find_measurement(r, "glm.memory.max_rows", {{"format", "dense"}});
    const auto facts = glm_gradient_facts_of(r);
    if (!dense || !facts || facts->rows_requested == 0) return rule.missing();
    const double requested = static_cast<double>(facts->rows_requested);
    const double fit = dense->summary.median;
    const auto ran = facts->rows_capped && facts->ran.rows > 0
                         ? std::optional<double>(static_cast<double>(facts->ran.rows))
                         : std::optional<double>();
    const double ratio = fit > 0 ? requested / fit : rows_very_far;
    if (ratio <= 1 && !ran) return RuleOutcome::none();
    const Severity severity = ratio >= rows_very_far ? Severity::high
                              : ratio >= rows_far    ? Severity::medium
                              : ratio > 1            ? Severity::low
                                                     : Severity::info;
    const std::string cols = label_of(*dense, "cols");
    std::string title =
        ratio > 1 ? fmt::format(
                        "The requested GLM shape ({:.0f} rows x {} columns) does not fit this device: at most "
                        "{:.0f} rows of dense fp32 data fit{}",
                        requested, cols, fit, ratio >= 1.1 ? fmt::format(" ({:.1f}x fewer)", ratio) : "")
                  : fmt::format(
                        "glm.gradient could not hold its copies of the {:.0f} requested rows x {} columns "
                        "(dense and column-major fp32, fp64, CSR) in the memory it leaves free",
                        requested, cols);
    if (ran) title += fmt::format("; it ran {:.0f} rows", *ran);
    Finding f = rule.finding(severity, title);
    f.evidence = {{"glm.gradient.rows_requested", {}, requested, "rows", "the shape asked for (--glm-rows)"},
                  evidence_of(*dense, "the most rows one dense fp32 copy of X, y and the work buffers fits")};
    const auto* csr = find_measurement(r, "glm.memory.max_rows", {{"format", "csr"}});
    if (csr) f.evidence.push_back(evidence_of(*csr, "the same in CSR at the density generated"));
    const auto limit = [&](const char* metric, std::uint64_t bytes, const char* expectation) {
        if (bytes) f.evidence.push_back({metric, {}, static_cast<double>(bytes), "bytes", expectation});
    };
    if (r.device) {
        limit("device.global_mem_bytes", r.device->global_mem_bytes, "CL_DEVICE_GLOBAL_MEM_SIZE: the sum must fit");
        limit("device.max_alloc_bytes", r.device->max_alloc_bytes, "CL_DEVICE_MAX_MEM_ALLOC_SIZE: X must fit in one");
    }
    const std::string sparse =
        csr && csr->summary.median > fit
            ? fmt::format(", or store X as CSR if it is that sparse (up to {:.0f} rows fit)", csr->summary.median)
            : std::string();
    f.suggestion = ratio > 1
                       ? fmt::format(
                             "Keep at most {:.0f} rows of X on the device at p = {}: stream larger data through it "
                             "in mini-batches (glm.pipeline's double-buffered step){}.",
                             fit, cols, sparse)
                       : fmt::format(
                             "Nothing to change for one fit: a single dense fp32 copy of the requested rows fits "
                             "(up to {:.0f} rows); only clprobe's side-by-side copies did not, so glm.gradient "
                             "measured fewer rows.",
                             fit);
    f.gain_basis = "memory capacity, not a measured speed-up";
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> glm_rules() {
    using In = RuleInput;
    const std::string layer = "kernel";
    return {
        {{"glm.layout.uncoalesced",
          layer,
          {In::metric(time_metric, "layout=row and layout=col, dense fp32, local reduction, passes=1")},
          {{"ratio", layout_ratio}}},
         layout},
        {{"glm.reduction.atomics",
          layer,
          {In::metric("glm.gradient.bandwidth", "reduction=atomic and its reduction=local twin")},
          {{"ratio", atomics_ratio}}},
         atomics},
        {{"glm.passes.two_pass",
          layer,
          {In::metric(time_metric, "a dense fp32 passes=2 variant and its passes=1 twin")},
          {{"ratio", passes_ratio}}},
         passes},
        {{"glm.workgroup.size",
          layer,
          {In::metric(time_metric, "dense fp32 variants that differ in wg only, at least two")},
          {{"ratio", wg_ratio}}},
         workgroup},
        {{"glm.gradient.below_roofline",
          layer,
          {In::metric("glm.gradient.best.roofline_fraction",
                      "kernel.memory_levels or kernel.peak.bandwidth measured "
                      "first"),
           In::metric("glm.gradient.best.bandwidth")},
          {{"fraction of the roof", roofline_floor}}},
         roofline},
        {{"glm.precision.fp64",
          layer,
          {In::metric(time_metric, "a precision=fp64 variant and its precision=fp32 twin")},
          {{"ratio", fp64_ratio}}},
         fp64},
        {{"glm.format.sparse_dense",
          layer,
          {In::metric(time_metric, "format=csr and format=dense, fp32")},
          {{"ratio", format_ratio}}},
         sparse_format},
        {{"glm.storage.reduced_precision",
          layer,
          {In::metric(time_metric, "a storage=fp16, bf16 or int8 variant and its precision=fp32 twin"),
           In::metric("glm.gradient.storage_error")},
          {{"ratio", storage_ratio}, {"relative gradient error", storage_max_error}}},
         storage},
        {{"glm.minibatch.upload_bound",
          layer,
          {In::metric(stage_metric, "stage=upload, variant=serial_pageable"),
           In::metric(step_metric, "variant=serial_pageable")},
          {{"upload share of the step", upload_share_floor, true}}},
         upload_bound},
        {{"glm.offload.host_faster",
          layer,
          {In::metric("glm.host_blas.gradient.time"), In::metric(step_metric, "variant=serial_pageable"),
           In::facts(glm_probe_ids::host_blas), In::facts(glm_probe_ids::pipeline)},
          {{"ratio", offload_ratio}}},
         host_faster},
        {{"glm.memory.shape_does_not_fit",
          layer,
          {In::metric("glm.memory.max_rows", "format=dense"), In::facts(glm_probe_ids::gradient)},
          {{"requested over fitting rows, medium", rows_far}, {"requested over fitting rows, high", rows_very_far}}},
         memory_shape},
    };
}

}  // namespace clprobe

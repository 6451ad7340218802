#include "rules/attention_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "core/attention_facts.hpp"
#include "rules/pipeline.hpp"

namespace clprobe {

namespace {

constexpr const char* pipeline = pipeline_ids::attention;
// Fusing attention is a rewrite: worth it from 1.25x, like the kernel layer's layout changes.
constexpr double fusion_ratio = 1.25;
// Decode below half the bandwidth roof leaves at least 2x on the table for a memory-bound kernel.
constexpr double decode_roof_fraction = 0.5;
// A lower-precision cache changes accuracy: only worth suggesting from 1.15x faster.
constexpr double precision_ratio = 1.15;
// Bucketing or packing a batch changes the serving loop: from 1.2x.
constexpr double padding_ratio = 1.2;
// The host winning by 10% or more is enough to question offloading this size.
constexpr double offload_ratio = 1.1;
// The probe that builds a half8 kernel: its status says whether fp16 KV caches can be used.
constexpr const char* fp16_probe_id = "attention.decode.fp16";

void target_stage(Finding& f, Stage stage, double stage_gain) {
    f.target = stage_target(pipeline, stage, stage_gain);
}

std::string format_bytes_short(double bytes) {
    if (bytes >= 1024.0 * 1024 * 1024) return fmt::format("{:.1f} GiB", bytes / (1024.0 * 1024 * 1024));
    if (bytes >= 1024.0 * 1024) return fmt::format("{:.0f} MiB", bytes / (1024.0 * 1024));
    return fmt::format("{:.0f} KiB", bytes / 1024.0);
}

RuleOutcome unfused_prefill(const RunReport& r, const RuleSpec& rule) {
    const auto* unfused = find_measurement(r, "attention.prefill.time", {{"variant", "unfused"}});
    const auto* fused = best_median(find_measurements(r, "attention.prefill.time", {{"variant", "fused"}}));
    if (!unfused || !fused) return rule.missing();
    const auto gap = significant_gap(r, *fused, *unfused, fusion_ratio);
    if (!gap) return RuleOutcome::none();
    const auto* bytes = find_measurement(r, "attention.prefill.score_bytes");
    const std::string traffic = bytes ? format_bytes_short(bytes->summary.median) : std::string("unknown");
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("The fused attention kernel prefills {:.1f}x faster than the unfused one at seq {}; the score "
                    "matrix costs {} of memory traffic per prefill",
                    gap->ratio, label_of(*unfused, "seq"), traffic),
        *fused, fmt::format("fused, tile {}", label_of(*fused, "tile")), *unfused,
        "QK^T, softmax and PV as three kernels", *gap, "prefill time saved by the fused kernel, measured");
    if (bytes) f.evidence.push_back(evidence_of(*bytes, "score matrix traffic the fused kernel never has"));
    f.suggestion = fmt::format(
        "Use a fused (flash) attention kernel: hold a tile of queries on chip, stream K and V tiles through local "
        "memory and keep a running max and sum (online softmax), so the seq x seq score matrix is never written. "
        "Tile {} was the fastest here.",
        label_of(*fused, "tile"));
    target_stage(f, Stage::prefill, gap->gain());
    return RuleOutcome::found(std::move(f));
}

// The fp32 decode at the longest cache measured (the probe adds one past the last cache, so it
// reads memory), its best layout, as a fraction of the roof of the level its cache lives in.
const Measurement* longest_decode_fraction(const RunReport& r) {
    const Measurement* best = nullptr;
    long best_len = -1;
    for (const auto* m : find_measurements(r, "attention.decode.peak_fraction", {{"precision", "fp32"}})) {
        const long len = std::atol(label_of(*m, "kv_len").c_str());
        if (len > best_len || (len == best_len && m->summary.median > best->summary.median)) {
            best = m;
            best_len = len;
        }
    }
    return best;
}

RuleOutcome decode_roofline(const RunReport& r, const RuleSpec& rule) {
    const auto* fraction = longest_decode_fraction(r);
    if (!fraction) return rule.missing();
    const double frac = fraction->summary.median;
    if (!(frac > 0)) return RuleOutcome::missing("attention.decode.peak_fraction is not positive");
    // Confidence from the fraction's own spread (the roof's is inside it): a fraction whose gap to
    // the threshold is within twice its noise is no finding.
    const double gap = decode_roof_fraction / frac - 1.0, noise = std::max(0.01, sample_noise(*fraction));
    if (gap <= 2 * noise) return RuleOutcome::none();
    const double conf = 1.0 - 2 * noise / gap;
    if (conf < min_confidence) return RuleOutcome::none();
    Finding f = rule.finding(Severity::medium,
                             fmt::format("Decode reads the KV cache at {:.0f}% of the bandwidth roof of the memory "
                                         "level it lives in (L = {})",
                                         100 * frac, label_of(*fraction, "kv_len")));
    f.evidence = {evidence_of(*fraction, fraction->note)};
    if (const auto* bw = find_measurement(r, "attention.decode.bandwidth", fraction->labels))
        f.evidence.push_back(evidence_of(*bw, "the best fp32 decode layout at that length"));
    f.suggestion =
        "Decode is memory-bound: stream K and V with wide vector loads in long contiguous runs per work-item, give "
        "every compute unit work (split the cache across work-groups and merge the partial softmaxes when there are "
        "few heads), and keep the cache in one contiguous [head][position][dim] block.";
    f.estimated_gain = 1.0 - frac;
    f.gain_basis = "decode time saved at the measured roof of the cache's memory level";
    f.confidence = conf;
    target_stage(f, Stage::decode, 1.0 - frac);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome kv_precision(const RunReport& r, const RuleSpec& rule) {
    const auto lowered = find_measurements(r, "attention.decode.time");
    const Measurement *best_low = nullptr, *best_base = nullptr;
    std::optional<Gap> best_gap;
    for (const auto* low : lowered) {
        const std::string precision = label_of(*low, "precision");
        if (precision == "fp32" || precision == "?") continue;
        Labels base_labels = low->labels;
        base_labels["precision"] = "fp32";
        base_labels.erase("splits");  // the split count may differ between the probes' runs
        const auto* base = find_measurement(r, "attention.decode.time", base_labels);
        if (!base) continue;
        const auto gap = significant_gap(r, *low, *base, precision_ratio);
        if (gap && (!best_gap || gap->ratio > best_gap->ratio)) {
            best_gap = gap;
            best_low = low;
            best_base = base;
        }
    }
    if (!best_gap) {
        bool any_low = false;
        for (const auto* m : lowered)
            any_low |= label_of(*m, "precision") != "fp32";
        return any_low ? RuleOutcome::none() : rule.missing();
    }
    Labels err_labels = best_low->labels;
    const auto* error = find_measurement(r, "attention.decode.error", err_labels);
    const std::string precision = label_of(*best_low, "precision");
    const std::string err_text = error ? fmt::format("{:.1e}", error->summary.median) : std::string("unmeasured");
    Finding f =
        rule.comparison(Severity::medium,
                        fmt::format("An {} KV cache decodes {:.2f}x faster than fp32 at L = {}, with relative error {}",
                                    precision, best_gap->ratio, label_of(*best_low, "kv_len"), err_text),
                        *best_low, precision + " KV cache", *best_base, "fp32 KV cache", *best_gap,
                        "decode time saved by the lower-precision cache, measured");
    if (error) f.evidence.push_back(evidence_of(*error, "error against the double-precision reference"));
    f.suggestion = fmt::format(
        "Store the KV cache in {} ({}) and convert to fp32 as it is loaded; check the measured error against your "
        "model's accuracy budget before adopting it.",
        precision, precision == "int8" ? "symmetric, one fp32 scale per group of values" : "half precision");
    target_stage(f, Stage::decode, best_gap->gain());
    return RuleOutcome::found(std::move(f));
}

RuleOutcome padding(const RunReport& r, const RuleSpec& rule) {
    const auto* padded = find_measurement(r, "attention.batching.throughput", {{"strategy", "padded"}});
    const Measurement* best = nullptr;
    for (const char* s : {"bucketed", "packed"}) {
        const auto* m = find_measurement(r, "attention.batching.throughput", {{"strategy", s}});
        if (m && (!best || m->summary.median > best->summary.median)) best = m;
    }
    if (!padded || !best) return rule.missing();
    const auto gap = significant_gap(r, *best, *padded, padding_ratio);
    if (!gap) return RuleOutcome::none();
    const auto* waste = find_measurement(r, "attention.batching.padding_fraction", {{"strategy", "padded"}});
    const std::string strategy = label_of(*best, "strategy");
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("Padding every prompt to the longest wastes {}; {} batches run {:.1f}x the tokens/s",
                    waste ? fmt::format("{:.0f}% of the attention work", 100 * waste->summary.median)
                          : std::string("attention work"),
                    strategy, gap->ratio),
        *best, strategy + " batch", *padded, "padded to the longest prompt", *gap,
        "batch prefill time saved, measured");
    if (waste) f.evidence.push_back(evidence_of(*waste, "computed query-key pairs that are padding"));
    f.suggestion = strategy == "packed"
                       ? "Pack the batch (variable-length attention: concatenate prompts and pass per-sequence offsets "
                         "and lengths) instead of padding to the longest prompt."
                       : "Group requests into length buckets and pad each bucket only to its own longest prompt.";
    target_stage(f, Stage::prefill, gap->gain());
    return RuleOutcome::found(std::move(f));
}

RuleOutcome fp16_unavailable(const RunReport& r, const RuleSpec& rule) {
    const auto* p = find_result(r, fp16_probe_id);
    if (!p) return rule.missing();
    if (p->status != ProbeStatus::unsupported) return RuleOutcome::none();
    Finding f = rule.finding(Severity::low, "fp16 KV caches cannot be used on this driver: " + p->reason);
    f.suggestion =
        "Use the int8 KV cache (or store half values and convert with vload_half, which needs no extension) to halve "
        "or quarter decode traffic; a driver with cl_khr_fp16 would allow half arithmetic too.";
    f.gain_basis = "capability, not a measured speed-up";
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome host_offload(const RunReport& r, const RuleSpec& rule) {
    const auto* host = find_measurement(r, "attention.host_blas.prefill.time");
    const auto* device = best_median(find_measurements(r, "attention.prefill.time"));
    if (!host || !device) return rule.missing();
    const auto gap = significant_gap(r, *host, *device, offload_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("The host (OpenBLAS) prefills {:.1f}x faster than the best device kernel at seq {}: offloading "
                    "does not pay at this size",
                    gap->ratio, label_of(*host, "seq")),
        *host, "host GEMMs and softmax", *device,
        fmt::format("best device variant ({}, tile {})", label_of(*device, "variant"), label_of(*device, "tile")), *gap,
        "prefill time saved by running it on the host, measured (device time excludes transfers)");
    f.suggestion =
        "Run attention at this size on the host with a tuned BLAS, or offload only when the device's measured time "
        "(with transfers) beats it: a larger batch or a faster device changes the answer.";
    target_stage(f, Stage::prefill, gap->gain());
    return RuleOutcome::found(std::move(f));
}

// Memory: the unfused path is reported from half of the device's binding limit (its score matrix
// grows with seq^2, so a prompt 1.42x longer would not fit); beyond the device, twice and four
// times its memory grade the severity.
constexpr double unfused_memory_share = 0.5;
constexpr double memory_far = 2.0, memory_very_far = 4.0;
// Above this share of the binding limit a buffer set does not fit at all.
constexpr double memory_full = 1.0;
const char* const memory_gain_basis = "memory capacity, not a measured speed-up";

// Sizes near a limit need more digits than format_bytes_short gives: MiB up to 10 GiB.
std::string memory_size(double bytes) {
    return bytes >= 10.0 * 1024 * 1024 * 1024 || bytes < 1024.0 * 1024 ? format_bytes_short(bytes)
                                                                       : fmt::format("{:.0f} MiB", bytes / 1048576);
}

// "3.0x its" or, just over the limit, "0.26% over its".
std::string beyond(double share) {
    return share >= 1.1 ? fmt::format("{:.1f}x its", share) : fmt::format("{:.2g}% over its", 100 * (share - 1));
}

// One prefill variant's device memory (attention.memory.*) against the device's limits.
struct MemoryUse {
    const Measurement* total = nullptr;
    const Measurement* largest = nullptr;
    double global = 0, max_alloc = 0;

    bool by_alloc() const { return largest->summary.median / max_alloc > total->summary.median / global; }
    // The share of the binding limit: above 1 it does not fit.
    double share() const { return std::max(total->summary.median / global, largest->summary.median / max_alloc); }
    std::string limit() const {
        return by_alloc() ? "largest allocation (" + memory_size(max_alloc) + ")"
                          : "global memory (" + memory_size(global) + ")";
    }
    std::string shape() const {
        return fmt::format("batch {} x seq {} ({} heads, head_dim {})", label_of(*total, "batch"),
                           label_of(*total, "seq"), label_of(*total, "heads"), label_of(*total, "head_dim"));
    }
    std::vector<Evidence> evidence(const std::string& what) const {
        return {
            evidence_of(*total, what + ": the sum of its buffers"),
            evidence_of(*largest, "its largest buffer"),
            {"device.global_mem_bytes", {}, global, "bytes", "CL_DEVICE_GLOBAL_MEM_SIZE: the sum must fit"},
            {"device.max_alloc_bytes", {}, max_alloc, "bytes", "CL_DEVICE_MAX_MEM_ALLOC_SIZE: each buffer must fit"}};
    }
};

std::optional<MemoryUse> memory_use(const RunReport& r, const char* variant) {
    MemoryUse u;
    u.total = find_measurement(r, "attention.memory.device_bytes", {{"variant", variant}});
    u.largest = find_measurement(r, "attention.memory.largest_buffer", {{"variant", variant}});
    if (!u.total || !u.largest || !r.device || !r.device->global_mem_bytes || !r.device->max_alloc_bytes)
        return std::nullopt;
    u.global = static_cast<double>(r.device->global_mem_bytes);
    u.max_alloc = static_cast<double>(r.device->max_alloc_bytes);
    return u;
}

// attention.memory.max_batch_seq of a path: the most prompt tokens it fits at the run's batch.
struct Capacity {
    const Measurement* m = nullptr;
    double tokens = 0, batch = 1;
    std::string text() const {
        return fmt::format("batch x seq {:.0f} (seq {:.0f} at batch {:.0f})", tokens, std::floor(tokens / batch),
                           batch);
    }
};

std::optional<Capacity> capacity_of(const RunReport& r, const char* path) {
    const auto* m = find_measurement(r, "attention.memory.max_batch_seq", {{"path", path}});
    if (!m) return std::nullopt;
    return Capacity{m, m->summary.median, std::max(1.0, std::atof(label_of(*m, "batch").c_str()))};
}

RuleOutcome unfused_memory(const RunReport& r, const RuleSpec& rule) {
    const auto use = memory_use(r, "unfused");
    if (!use) return rule.missing();
    const double share = use->share();
    const bool skipped = prefill_skips_of(r).unfused.has_value();
    if (share <= unfused_memory_share && !skipped) return RuleOutcome::none();
    const Severity severity = share >= memory_far            ? Severity::high
                              : share > memory_full          ? Severity::medium
                              : share > unfused_memory_share ? Severity::low
                                                             : Severity::info;
    const auto unfused_cap = capacity_of(r, "unfused"), fused_cap = capacity_of(r, "fused");
    const std::string needs = memory_size(use->total->summary.median);
    std::string title =
        share > memory_full
            ? fmt::format(
                  "The unfused attention path does not fit this device at {}: it needs {} (largest "
                  "buffer {}), {} {}",
                  use->shape(), needs, memory_size(use->largest->summary.median), beyond(share), use->limit())
            : fmt::format("The unfused attention path needs {} at {}, {:.0f}% of the device's {}", needs, use->shape(),
                          100 * share, use->limit());
    if (unfused_cap) title += "; it fits only up to " + unfused_cap->text();
    if (skipped) title += "; attention.prefill skipped it";
    Finding f = rule.finding(severity, title);
    f.evidence = use->evidence("unfused prefill (Q, K, V, O and the score matrix)");
    if (unfused_cap) f.evidence.push_back(evidence_of(*unfused_cap->m, "the largest prompt the unfused path fits"));
    f.suggestion = fmt::format(
        "Use the fused (flash) path: it never stores the batch x heads x seq x seq score matrix, so its memory grows "
        "with seq, not seq^2{}. Where the unfused path must stay, keep batch x seq within {} (split the batch, or "
        "prefill long prompts in chunks).",
        fused_cap ? "; on this device it fits up to " + fused_cap->text() : std::string(),
        unfused_cap ? fmt::format("{:.0f}", unfused_cap->tokens) : std::string("what fits"));
    f.gain_basis = memory_gain_basis;
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome shape_memory(const RunReport& r, const RuleSpec& rule) {
    const auto use = memory_use(r, "fused");
    if (!use) return rule.missing();
    const double share = use->share();
    const bool skipped = prefill_skips_of(r).shape.has_value();
    if (share <= memory_full && !skipped) return RuleOutcome::none();
    const Severity severity = share >= memory_very_far ? Severity::high
                              : share >= memory_far    ? Severity::medium
                              : share > memory_full    ? Severity::low
                                                       : Severity::info;
    const std::string needs = memory_size(use->total->summary.median);
    std::string title = share > memory_full
                            ? fmt::format("The requested attention shape, {}, needs {} even fused: {} {}", use->shape(),
                                          needs, beyond(share), use->limit())
                            : fmt::format(
                                  "The requested attention shape, {}, needs {} fused, {:.0f}% of the device's {}: more "
                                  "than clprobe allocates, as it leaves a fifth of memory free",
                                  use->shape(), needs, 100 * share, use->limit());
    if (skipped) title += "; attention.prefill was skipped";
    Finding f = rule.finding(severity, title);
    f.evidence = use->evidence("fused prefill (Q, K, V, O and the head offsets)");
    const auto fused_cap = capacity_of(r, "fused"), unfused_cap = capacity_of(r, "unfused");
    if (fused_cap) f.evidence.push_back(evidence_of(*fused_cap->m, "the largest prompt the fused path fits"));
    f.suggestion = fmt::format(
        "{}: split the batch or prefill long prompts in chunks (and keep --attn-batch x --attn-seq within that) so Q, "
        "K, V and O fit with room to spare.",
        fused_cap ? fmt::format("At most {} fits this device fused{}", fused_cap->text(),
                                unfused_cap ? ", " + unfused_cap->text() + " unfused" : std::string())
                  : std::string("Shrink the shape"));
    f.gain_basis = memory_gain_basis;
    f.confidence = 1.0;
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> attention_rules() {
    using In = RuleInput;
    // The attention workload's findings are about kernels: they join the kernel layer.
    const std::string layer = "kernel";
    const auto memory_inputs = [](const char* variant) {
        const std::string v = fmt::format("variant={}", variant);
        return std::vector<In>{In::metric("attention.memory.device_bytes", v),
                               In::metric("attention.memory.largest_buffer", v), In::device()};
    };
    return {
        {{"attention.prefill.unfused",
          layer,
          {In::metric("attention.prefill.time", "variant=unfused and variant=fused")},
          {{"fused over unfused", fusion_ratio}}},
         unfused_prefill},
        {{"attention.decode.below_roofline",
          layer,
          {In::metric("attention.decode.peak_fraction",
                      "precision=fp32, against a roof measured first: kernel.memory_levels or kernel.peak.bandwidth")},
          {{"fraction of the roof", decode_roof_fraction}}},
         decode_roofline},
        {{"attention.decode.kv_precision",
          layer,
          {In::metric("attention.decode.time", "precision=fp32 and a lower precision at the same length")},
          {{"lower precision over fp32", precision_ratio}}},
         kv_precision},
        {{"attention.batching.padding",
          layer,
          {In::metric("attention.batching.throughput", "strategy=padded and strategy=bucketed or packed")},
          {{"best batch over padded", padding_ratio}}},
         padding},
        {{"attention.fp16.unavailable", layer, {{In::Kind::facts, {fp16_probe_id}, "its status"}}, {}},
         fp16_unavailable},
        {{"attention.host.offload",
          layer,
          {In::metric("attention.host_blas.prefill.time"), In::metric("attention.prefill.time")},
          {{"device over host time", offload_ratio}}},
         host_offload},
        {{"attention.memory.unfused_does_not_fit",
          layer,
          memory_inputs("unfused"),
          {{"reported from, share of the limit", unfused_memory_share},
           {"does not fit above", memory_full},
           {"high severity from", memory_far}}},
         unfused_memory},
        {{"attention.memory.shape_does_not_fit",
          layer,
          memory_inputs("fused"),
          {{"does not fit above", memory_full},
           {"medium severity from", memory_far},
           {"high severity from", memory_very_far}}},
         shape_memory},
    };
}

}  // namespace clprobe

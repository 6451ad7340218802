#include "rules/transfer_rules.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/byte_size.hpp"
#include "rules/pipeline.hpp"

namespace clprobe {

namespace {

// Pinned staging that beats pageable memory by a quarter repays changing the allocations.
constexpr double pinned_ratio = 1.25;
// A transfer at the smallest size moving a quarter of the large-size rate or less is dominated by
// its fixed cost.
constexpr double small_ratio = 4.0;
// An overlapped step at least 10% faster than the serial one: overlap is real on this device.
constexpr double overlap_ratio = 1.1;
// Below a fifth of the possible saving, the device and driver do not overlap in practice.
constexpr double no_overlap_efficiency = 0.2;
// Placement differences above 15% between NUMA nodes are worth a binding command.
constexpr double numa_ratio = 1.15;
// Pinned copies below half the link's theoretical rate point at something besides the link
// (healthy links deliver most of their rate to pinned copies).
constexpr double link_fraction = 0.5;
// Zero-copy beating the copy path by a quarter repays switching to map/unmap.
constexpr double zero_copy_ratio = 1.25;
// A copy kernel beating the driver's best copy by a quarter repays writing and launching it.
constexpr double kernel_copy_ratio = 1.25;

// The headline (label-free) measurement of `metric`; find_measurement with no labels would
// match any variant.
const Measurement* headline(const RunReport& r, std::string_view metric) {
    for (const auto* m : find_measurements(r, metric))
        if (m->labels.empty()) return m;
    return nullptr;
}

// Where a "transfer" is a copy inside host memory, PCIe and pinning advice cannot help.
bool shares_host_memory(const DeviceInfo& d) {
    return d.type == "cpu" || d.host_unified_memory;
}

std::string gb(double v) {
    return fmt::format("{:.3g} GB/s", v);
}

RuleOutcome pageable_slow(const RunReport& r, const RuleSpec& rule) {
    if (!r.device) return rule.missing();
    if (shares_host_memory(*r.device)) return RuleOutcome::none();  // nothing to pin: a copy is a memcpy
    struct Candidate {
        const char* direction;
        Stage stage;
        std::optional<Gap> gap;
        const Measurement *pinned, *pageable;
    };
    std::vector<Candidate> found;
    bool any_input = false;
    for (auto [dir, stage] : {std::pair{"h2d", Stage::upload}, std::pair{"d2h", Stage::download}}) {
        const auto* pinned = headline(r, fmt::format("transfer.{}.pinned.bandwidth", dir));
        const auto* pageable = headline(r, fmt::format("transfer.{}.pageable.bandwidth", dir));
        if (!pinned || !pageable) continue;
        any_input = true;
        if (auto gap = significant_gap(r, *pinned, *pageable, pinned_ratio))
            found.push_back({dir, stage, gap, pinned, pageable});
    }
    if (!any_input) return rule.missing();
    if (found.empty()) return RuleOutcome::none();
    const auto& c = *std::max_element(found.begin(), found.end(),
                                      [](const auto& a, const auto& b) { return a.gap->ratio < b.gap->ratio; });
    Finding f = rule.comparison(
        Severity::high,
        fmt::format("Pageable host memory copies {} at {:.0f}% of the pinned rate ({} vs {})", c.direction,
                    100 / c.gap->ratio, gb(c.pageable->summary.median), gb(c.pinned->summary.median)),
        *c.pinned, "pinned host memory (CL_MEM_ALLOC_HOST_PTR), the best path", *c.pageable, "malloc'd host memory",
        *c.gap, fmt::format("time saved on the {} stage by staging through pinned memory", stage_name(c.stage)));
    f.estimated_gain.reset();
    f.target = stage_target("", c.stage, c.gap->gain());
    f.suggestion =
        "Allocate the host side of transfers as pinned memory: create a staging buffer with CL_MEM_ALLOC_HOST_PTR, "
        "map it once (clEnqueueMapBuffer) and keep the pointer; fill it and pass it to clEnqueueWriteBuffer (read "
        "into it with clEnqueueReadBuffer). The driver then copies by DMA instead of through its own bounce buffer.";
    return RuleOutcome::found(std::move(f));
}

RuleOutcome small_transfers(const RunReport& r, const RuleSpec& rule) {
    auto series = find_measurements(r, "transfer.h2d.pageable.bandwidth", {{"path", "pageable"}, {"blocking", "true"}});
    series.erase(
        std::remove_if(series.begin(), series.end(), [](const Measurement* m) { return !m->labels.count("size"); }),
        series.end());
    const auto size_of = [](const Measurement* m) { return std::strtod(m->labels.at("size").c_str(), nullptr); };
    if (series.size() < 2) return rule.missing();
    std::sort(series.begin(), series.end(), [&](auto* a, auto* b) { return size_of(a) < size_of(b); });
    // Against the series' best size (the peak that transfer.half_peak_size halves), which on a
    // CPU device can be a cache-sized one.
    const Measurement& small = *series.front();
    const Measurement& large = **std::max_element(
        series.begin() + 1, series.end(), [](auto* a, auto* b) { return a->summary.median < b->summary.median; });
    const auto gap = significant_gap(r, large, small, small_ratio);
    if (!gap) return RuleOutcome::none();

    Finding f = rule.comparison(
        Severity::low,
        fmt::format("A {} transfer runs at {:.0f}% of a {} one: small copies are dominated by their fixed cost",
                    bytes_text(size_of(&small)), 100 / gap->ratio, bytes_text(size_of(&large))),
        large, "the best size", small, "the smallest transfer measured", *gap,
        "time saved on each small transfer by batching; the share of your code's time depends on the sizes it moves");
    // The gain depends on how many small transfers the user's code makes, which the run cannot see.
    f.estimated_gain.reset();
    const auto* half = find_measurement(r, "transfer.half_peak_size",
                                        {{"direction", "h2d"}, {"path", "pageable"}, {"blocking", "true"}});
    std::string below = "a few MiB";
    if (half) {
        f.evidence.push_back(evidence_of(*half, "transfers below this size reach less than half the peak"));
        below = bytes_text(half->summary.median);
    }
    if (const auto* latency = headline(r, "transfer.h2d.latency"))
        f.evidence.push_back(evidence_of(*latency, "the fixed cost of one transfer"));
    f.suggestion = fmt::format(
        "Batch transfers below {} into one: pack small arrays into one staging buffer (or one buffer with "
        "sub-buffers / offsets) and move it with one clEnqueueWriteBuffer; enqueue non-blocking and wait once.",
        below);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome no_overlap(const RunReport& r, const RuleSpec& rule) {
    const auto* serial = find_measurement(r, "transfer.pipeline.step_time", {{"variant", "serial"}});
    const auto* overlapped = find_measurement(r, "transfer.pipeline.step_time", {{"variant", "overlapped"}});
    const auto* efficiency = headline(r, "transfer.overlap.efficiency");
    if (!serial || !overlapped || !efficiency) return rule.missing();
    if (const auto gap = significant_gap(r, *overlapped, *serial, overlap_ratio)) {
        Finding f = rule.comparison(
            Severity::medium,
            fmt::format("Copies and kernels overlap on this device: a serial step takes {:.2f}x an overlapped one "
                        "(overlap efficiency {:.0f}%)",
                        gap->ratio, 100 * efficiency->summary.median),
            *serial, "upload, kernel and download one after another on one queue", *overlapped,
            "each stage on its own queue", *gap,
            "measured on the transfer layer's stand-in step (upload, kernel, download of similar durations)");
        f.evidence.push_back(evidence_of(*efficiency, "1 = every stage but the longest hidden"));
        f.suggestion =
            "Overlap transfers with kernels: use two or three in-order queues (uploads, kernels, downloads), double "
            "buffers so the next block uploads while the current one computes, pinned host memory, and events "
            "(not clFinish) between the queues.";
        return RuleOutcome::found(std::move(f));
    }
    if (efficiency->summary.median >= no_overlap_efficiency) return RuleOutcome::none();
    // "No overlap" rests on two step times being alike: only as sure as they are steady.
    const double confidence = std::clamp(1.0 - sample_noise(*serial) - sample_noise(*overlapped), 0.0, 1.0);
    if (confidence < min_confidence) return RuleOutcome::none();
    Finding f =
        rule.finding(Severity::low, fmt::format("This device and driver do not overlap copies with kernels (overlap "
                                                "efficiency {:.0f}%)",
                                                100 * efficiency->summary.median));
    f.evidence = {evidence_of(*efficiency, fmt::format("at least {:.0f}% where copies run beside kernels",
                                                       100 * no_overlap_efficiency)),
                  evidence_of(*serial, "serial step"), evidence_of(*overlapped, "stages on separate queues")};
    f.suggestion = r.device && shares_host_memory(*r.device)
                       ? "Extra queues will not hide copies here: copy less. Keep data resident on the device between "
                         "steps, and hand host data over with map/unmap (zero-copy) instead of copying it."
                       : "Extra queues will not hide copies here: make fewer, larger transfers, keep data resident on "
                         "the device between steps, and move only what changed.";
    f.gain_basis = "no gain from overlap on this device; the suggestion reduces the copies themselves";
    f.confidence = confidence;
    return RuleOutcome::found(std::move(f));
}

RuleOutcome numa_penalty(const RunReport& r, const RuleSpec& rule) {
    const auto rows = find_measurements(r, "transfer.numa.h2d.bandwidth");
    if (rows.size() < 2) return rule.missing();
    const auto by_median = [](auto* a, auto* b) { return a->summary.median < b->summary.median; };
    const Measurement& best = **std::max_element(rows.begin(), rows.end(), by_median);
    const Measurement& worst = **std::min_element(rows.begin(), rows.end(), by_median);
    const auto gap = significant_gap(r, best, worst, numa_ratio);
    if (!gap) return RuleOutcome::none();
    const std::string node = label_of(best, "node");
    Finding f = rule.comparison(Severity::medium,
                                fmt::format("Host memory on NUMA node {} copies at {:.0f}% of node {}'s rate",
                                            label_of(worst, "node"), 100 / gap->ratio, node),
                                best, label_of(best, "local") == "yes" ? "the device's local node" : "the fastest node",
                                worst, "the slowest node", *gap,
                                "time saved on the upload stage by placing host buffers on the fastest node");
    f.estimated_gain.reset();
    f.target = stage_target("", Stage::upload, gap->gain());
    f.suggestion = fmt::format(
        "Run the program with its threads and memory on node {0}: `numactl --cpunodebind={0} --membind={0} ./app` "
        "or `hwloc-bind --cpubind node:{0} --membind node:{0} -- ./app`; in code, allocate staging buffers from a "
        "thread bound to that node (first touch).",
        node);
    return RuleOutcome::found(std::move(f));
}

RuleOutcome link_underused(const RunReport& r, const RuleSpec& rule) {
    if (!r.device) return rule.missing();
    if (shares_host_memory(*r.device)) return RuleOutcome::none();  // no link between host and device memory
    const auto* link = headline(r, "topology.device.link_bandwidth");
    if (!link) return rule.missing();
    const Measurement* pinned = nullptr;
    for (const char* metric : {"transfer.h2d.pinned.bandwidth", "transfer.d2h.pinned.bandwidth"})
        if (const auto* m = headline(r, metric); m && (!pinned || m->summary.median > pinned->summary.median))
            pinned = m;
    if (!pinned) return rule.missing();
    const double fraction = pinned->summary.median / link->summary.median;
    if (!(fraction < link_fraction)) return RuleOutcome::none();
    const double confidence = comparison_confidence(*link, *pinned);
    if (confidence < min_confidence) return RuleOutcome::none();

    Finding f =
        rule.finding(Severity::high, fmt::format("Pinned transfers reach {}, {:.0f}% of the PCIe link's {}",
                                                 gb(pinned->summary.median), 100 * fraction, gb(link->summary.median)));
    f.evidence = {
        evidence_of(*pinned, "the best pinned path"),
        evidence_of(*link, fmt::format("pinned copies usually reach well over {:.0f}% of it", 100 * link_fraction))};
    f.suggestion =
        "Something other than the link limits transfers: check for a link trained below its maximum (see "
        "topology.pcie_link_degraded; `lspci -vv` LnkSta under load), run on the device's NUMA node "
        "(topology.numa_mismatch), and check the IOMMU (boot with iommu=pt, or intel_iommu=on iommu=pt, when "
        "isolation is not needed).";
    f.target = stage_target("", Stage::upload, 1.0 - fraction);
    f.gain_basis = "upper bound: upload time saved at the link's theoretical rate";
    f.confidence = confidence;
    return RuleOutcome::found(std::move(f));
}

// One transfer's time from a rate measured at `bytes`: a copy of `rate` whose samples are
// microseconds per transfer (lower is better), so it compares with a measured time.
Measurement transfer_time(const Measurement& rate, double bytes) {
    std::vector<double> us;
    for (double gbs : rate.samples)
        if (gbs > 0) us.push_back(bytes / (gbs * 1e9) * 1e6);
    Measurement m = make_measurement(rate.metric, "us", rate.labels, us, rate.timer, false);
    m.note = fmt::format("{} per transfer: {} over each sample's rate", bytes_text(bytes), bytes_text(bytes));
    return m;
}

std::string time_text(double us) {
    return us >= 1e3 ? fmt::format("{:.3g} ms", us / 1e3) : fmt::format("{:.3g} us", us);
}

// Zero-copy against a copy of the same size, both as the time one transfer takes: the map + unmap
// of a CL_MEM_USE_HOST_PTR buffer (transfer.h2d.zero_copy.time, measured as a time because nothing
// is copied) and clEnqueueWriteBuffer from malloc'd memory (its measured rate at that size, as
// time per transfer). The factor the finding carries is the measured step's: its time over its
// time with the upload's saving taken off; without a step with an upload stage, the two transfer
// times' ratio. Never a rate of a copy that copies nothing.
RuleOutcome zero_copy_available(const RunReport& r, const RuleSpec& rule) {
    if (!r.device) return rule.missing();
    if (!shares_host_memory(*r.device)) return RuleOutcome::none();  // a discrete device must copy
    // The largest size whose zero-copy time and pageable copy were both measured.
    const Measurement *zero = nullptr, *copy = nullptr;
    double bytes = 0;
    for (const auto* z : find_measurements(r, "transfer.h2d.zero_copy.time")) {
        const auto size = z->labels.find("size");
        if (size == z->labels.end()) continue;
        const double b = std::strtod(size->second.c_str(), nullptr);
        if (b <= 0 || b <= bytes) continue;
        const auto* c = best_median(
            find_measurements(r, "transfer.h2d.pageable.bandwidth", {{"path", "pageable"}, {"size", size->second}}));
        if (!c) continue;
        zero = z, copy = c, bytes = b;
    }
    if (!zero) return rule.missing();
    const Measurement copy_time = transfer_time(*copy, bytes);
    const auto gap = significant_gap(r, *zero, copy_time, zero_copy_ratio);
    if (!gap) return RuleOutcome::none();
    Finding f = rule.finding(
        Severity::medium,
        fmt::format("The device shares host memory: mapping a buffer makes {} available in {}; copying it takes {}",
                    bytes_text(bytes), time_text(zero->summary.median), time_text(copy_time.summary.median)));
    f.evidence = {evidence_of(*zero,
                              "map + unmap of a CL_MEM_USE_HOST_PTR buffer: the time to make the data "
                              "available (nothing is copied)"),
                  evidence_of(*copy, fmt::format("clEnqueueWriteBuffer from malloc'd memory: {} per {} transfer",
                                                 time_text(copy_time.summary.median), bytes_text(bytes)))};
    f.target = stage_target("", Stage::upload, gap->gain());
    f.confidence = gap->confidence;
    f.uncertain = gap->uncertain;
    // The factor of the measured step when one has an upload stage; else of one transfer's times.
    const auto pipelines = pipelines_of(r);
    const auto step = reference_pipeline(pipelines, "", stage_name(Stage::upload));
    const double total = step ? step->total_seconds() : 0;
    const double saved = step ? gap->gain() * step->stage_seconds(stage_name(Stage::upload)).value_or(0) : 0;
    if (total > 0 && saved < total) {
        f.factor = total / (total - saved);
        f.gain_basis = fmt::format(
            "upload time of the {} step saved by handing data over with map/unmap ({} instead of {} per {}); factor: "
            "that step's time over its time without the saving",
            step->id, time_text(zero->summary.median), time_text(copy_time.summary.median), bytes_text(bytes));
    } else {
        f.factor = gap->ratio;
        f.gain_basis = fmt::format(
            "upload time saved by handing data over with map/unmap instead of a copy; factor: the {} copy's time "
            "over the map + unmap's, no step with an upload stage was measured",
            bytes_text(bytes));
    }
    f.suggestion =
        "Do not copy: create buffers with CL_MEM_ALLOC_HOST_PTR (or CL_MEM_USE_HOST_PTR over page-aligned memory), "
        "write the input through clEnqueueMapBuffer(CL_MAP_WRITE_INVALIDATE_REGION), unmap before the kernel, and map "
        "with CL_MAP_READ to read results.";
    return RuleOutcome::found(std::move(f));
}

// The better of the driver's copies in one direction: the pinned and pageable headlines (each
// already the best of its variants at the largest size).
const Measurement* best_driver_copy(const RunReport& r, const char* direction) {
    const Measurement* best = nullptr;
    for (const char* kind : {"pinned", "pageable"})
        if (const auto* m = headline(r, fmt::format("transfer.{}.{}.bandwidth", direction, kind));
            m && (!best || m->summary.median > best->summary.median))
            best = m;
    return best;
}

RuleOutcome kernel_copy_faster(const RunReport& r, const RuleSpec& rule) {
    struct Candidate {
        const char* direction;
        Stage stage;
        Gap gap;
        const Measurement *kernel, *driver;
    };
    std::vector<Candidate> found;
    bool any_input = false;
    for (auto [dir, stage] : {std::pair{"h2d", Stage::upload}, std::pair{"d2h", Stage::download}}) {
        const auto* kernel = headline(r, fmt::format("transfer.{}.kernel_copy.bandwidth", dir));
        const auto* driver = best_driver_copy(r, dir);
        if (!kernel || !driver) continue;
        any_input = true;
        if (auto gap = significant_gap(r, *kernel, *driver, kernel_copy_ratio))
            found.push_back({dir, stage, *gap, kernel, driver});
    }
    if (!any_input) return rule.missing();
    if (found.empty()) return RuleOutcome::none();
    // The direction that saves more of the measured step (a download of a few bytes saves nothing
    // however fast its kernel copy is); the larger ratio when no step has either stage.
    const auto pipelines = pipelines_of(r);
    const auto saved = [&](const Candidate& c) {
        const auto p = reference_pipeline(pipelines, "", stage_name(c.stage));
        return p ? c.gap.gain() * *p->stage_seconds(stage_name(c.stage)) / p->total_seconds() : 0.0;
    };
    const auto& c = *std::max_element(found.begin(), found.end(), [&](const auto& a, const auto& b) {
        const double sa = saved(a), sb = saved(b);
        return sa != sb ? sa < sb : a.gap.ratio < b.gap.ratio;
    });
    Finding f = rule.comparison(
        Severity::medium,
        fmt::format("A copy kernel moves {} data {:.2f}x faster than the driver's best copy ({} vs {})", c.direction,
                    c.gap.ratio, gb(c.kernel->summary.median), gb(c.driver->summary.median)),
        *c.kernel,
        "a copy kernel between a mapped CL_MEM_ALLOC_HOST_PTR buffer and a device buffer, map/unmap included",
        *c.driver,
        "the best pinned or pageable copy (clEnqueueWrite/ReadBuffer or map + memcpy; its note names the variant)",
        c.gap,
        fmt::format("time saved on the {} stage by copying with a kernel instead of the driver", stage_name(c.stage)));
    for (const auto& other : found)
        if (other.direction != c.direction) {
            f.evidence.push_back(evidence_of(*other.kernel, "the other direction's kernel copy, also faster"));
            f.evidence.push_back(evidence_of(*other.driver, "the other direction's best driver copy"));
        }
    f.estimated_gain.reset();
    f.target = stage_target("", c.stage, c.gap.gain());
    f.suggestion =
        "Copy large transfers with a kernel instead of clEnqueueWriteBuffer/ReadBuffer: keep the host side in a "
        "CL_MEM_ALLOC_HOST_PTR buffer, fill it through clEnqueueMapBuffer(CL_MAP_WRITE_INVALIDATE_REGION) and unmap, "
        "then launch a kernel that copies it into the CL_MEM_READ_WRITE device buffer (downloads: the reverse, then "
        "map with CL_MAP_READ). Use the copy pattern that measured fastest here (the kernel copy headline's note "
        "names it: a contiguous chunk of uint16 vectors per work-item, or consecutive work-items on consecutive "
        "uint4s; clprobe's kernels/transfer/copy.cl has both). Prefer it for "
        "transfers of a few MiB and more, where the driver copies with one thread or one engine; small ones pay a "
        "kernel launch. On a discrete GPU the kernel reads host memory over PCIe (zero-copy reads) and occupies "
        "compute units that kernels could use; where the data is read once, reading the host-visible buffer directly "
        "in the consuming kernel skips the copy altogether.";
    return RuleOutcome::found(std::move(f));
}

}  // namespace

std::vector<Rule> transfer_rules() {
    using In = RuleInput;
    const std::string layer = "transfer";
    const In pinned =
        In::any_metric({"transfer.h2d.pinned.bandwidth", "transfer.d2h.pinned.bandwidth"}, "the headline");
    const In h2d_pageable = In::metric("transfer.h2d.pageable.bandwidth", "the headline");
    const In pageable = In::any_metric({h2d_pageable.names[0], "transfer.d2h.pageable.bandwidth"},
                                       "the headline of the pinned one's direction");
    const In driver_copy = In::any_metric({pinned.names[0], pinned.names[1], pageable.names[0], pageable.names[1]},
                                          "a headline of the kernel copy's direction");
    // The link rate is topology.device's fact: a CPU or unified-memory device has none, and the
    // rule is silent there rather than not evaluated, so it is not checked before the rule runs.
    const In link{In::Kind::facts, {"topology.device"}, "its link rate, topology.device.link_bandwidth"};
    return {
        {{"transfer.pageable_slow", layer, {In::device(), pinned, pageable}, {{"pinned over pageable", pinned_ratio}}},
         pageable_slow},
        {{"transfer.small_transfers",
          layer,
          {In::metric(h2d_pageable.names[0], "path=pageable, blocking=true, at two sizes or more")},
          {{"best size over the smallest", small_ratio}}},
         small_transfers},
        {{"transfer.no_overlap",
          layer,
          {In::metric("transfer.pipeline.step_time", "variant=serial and variant=overlapped"),
           In::metric("transfer.overlap.efficiency", "the headline")},
          {{"serial over overlapped step", overlap_ratio}, {"overlap efficiency", no_overlap_efficiency}}},
         no_overlap},
        {{"transfer.numa_penalty",
          layer,
          {In::metric("transfer.numa.h2d.bandwidth", "two NUMA nodes or more")},
          {{"best node over the worst", numa_ratio}}},
         numa_penalty},
        {{"transfer.link_underused",
          layer,
          {In::device(), link, pinned},
          {{"pinned share of the link", link_fraction}}},
         link_underused},
        {{"transfer.zero_copy_available",
          layer,
          {In::device(), In::metric("transfer.h2d.zero_copy.time", "at a size"),
           In::metric(h2d_pageable.names[0], "path=pageable at the same size")},
          {{"pageable copy time over zero-copy time", zero_copy_ratio}}},
         zero_copy_available},
        {{"transfer.kernel_copy_faster",
          layer,
          {In::any_metric({"transfer.h2d.kernel_copy.bandwidth", "transfer.d2h.kernel_copy.bandwidth"}, "the headline"),
           driver_copy},
          {{"kernel copy over the best driver copy", kernel_copy_ratio}}},
         kernel_copy_faster},
    };
}

}  // namespace clprobe

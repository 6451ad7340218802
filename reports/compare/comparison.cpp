#include "compare/comparison.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <tuple>

#include "compare/between_runs.hpp"
#include "compare/metric_key.hpp"
#include "core/stats.hpp"
#include "core/workloads.hpp"

namespace clprobe {

namespace {

struct Placed {
    const Measurement* m = nullptr;
    const ProbeResult* result = nullptr;  // the probe that measured it
    std::string probe;                    // its id
};

struct Keyed {
    std::vector<std::string> order;
    std::map<std::string, Placed> by_key;
};

Keyed index(const RunReport& r) {
    Keyed k;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            const auto key = pairing_key(m);
            if (k.by_key.emplace(key, Placed{&m, &p, p.id}).second) k.order.push_back(key);
        }
    return k;
}

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
}

// Ceilings: what the device can do, each sample already the fastest of a few batches (sampler.hpp).
// A slow phase of the machine only slows samples down, so their fastest sample is what compares.
bool is_ceiling(const std::string& metric) {
    for (std::string_view p :
         {"kernel.peak.", "kernel.roof.", "kernel.bandwidth", "kernel.compute", "kernel.memory_levels."})
        if (starts_with(metric, p)) return true;
    return false;
}

// How a timed metric scales with the machine: a rate (GB/s, GFLOP/s, per second) divides by the
// reference, a time multiplies by it; anything else (a fraction of a roof, a count) is already
// relative and is compared as measured.
enum class Scaling { none, rate, time };
Scaling scaling_of(const std::string& unit) {
    if (unit == "ns" || unit == "us" || unit == "ms" || unit == "s") return Scaling::time;
    if (unit.size() > 2 && unit.compare(unit.size() - 2, 2, "/s") == 0) return Scaling::rate;
    return Scaling::none;
}

// Within this of each other, the checks before and after a probe saw one machine state.
constexpr double same_state = 0.2;

// The FMA reference around a probe: the mean of the check just before it and the check before the
// next device probe, when the two agree within same_state. A check is one 2 ms kernel (the median
// of 3 launches): a transient of the shared machine can catch it alone (37 GFLOP/s between checks
// of 105-116 here, the probe it preceded running at its usual speed), and a probe during which the
// state changed has no one state. nullopt then, and for the run's last probe (no check after it).
std::optional<double> reference_around(const std::optional<MachineDrift>& drift, const std::string& probe) {
    if (!drift) return std::nullopt;
    const auto& checks = drift->checks;
    for (std::size_t i = 0; i + 1 < checks.size(); ++i) {
        if (checks[i].before_probe != probe) continue;
        const double before = checks[i].compute_gflops, after = checks[i + 1].compute_gflops;
        if (!(before > 0) || !(after > 0) || std::max(before, after) / std::min(before, after) - 1 > same_state)
            return std::nullopt;
        return (before + after) / 2;
    }
    return std::nullopt;
}

// faster / slower / within_noise from an interval of B / A and a band symmetric in ratio: B at
// 1 / (1 + band) of A is as far as B at 1 + band (1 - band reached zero at a band of 100%).
Verdict verdict_of(double low, double high, double band, bool higher_is_better) {
    const double up = 1 + band, down = 1 / (1 + band);
    if (low > up) return higher_is_better ? Verdict::faster : Verdict::slower;
    if (high < down) return higher_is_better ? Verdict::slower : Verdict::faster;
    return Verdict::within_noise;
}

MetricComparison describe(const Measurement& m) {
    MetricComparison c;
    c.metric = m.metric;
    c.labels = m.labels;
    c.unit = m.unit;
    c.higher_is_better = m.higher_is_better;
    c.headline = m.labels.empty();
    c.fact = m.timer == TimerKind::none;
    return c;
}

// The two runs' drift blocks and whether their references may be compared (one driver).
struct References {
    const std::optional<MachineDrift>* a = nullptr;
    const std::optional<MachineDrift>* b = nullptr;
    bool same_driver = true;
    bool cpu_device_a = false, cpu_device_b = false;  // the device's work runs on the host's CPUs
};

// A run's probe measured beside other work: what it says, and by how much that load can have made
// the figure worse. The probe got at most the CPUs the others left, so a figure limited by them is
// at most cpus / (cpus - busy) times worse (capped: a probe left almost nothing can be slowed by
// anything). factor 1: the figure was not disturbed.
struct Disturbance {
    std::string text;
    double factor = 1;
};

// The disturbance of a figure of probe `p` in run `run` ("A" or "B"): the host's other load during
// the probe, where that load reaches the figure. A device-timed figure of a device that is not the
// host's CPUs (a GPU's kernel time) is not reached by the host's load; its host-timed figures
// (launch round trips, builds, transfers timed on the host) are.
Disturbance disturbance_of(const Placed& p, const char* run, bool cpu_device) {
    if (p.result == nullptr || !p.result->host_load) return {};
    if (!cpu_device && p.m->timer == TimerKind::device_profiling) return {};
    const HostLoad& l = *p.result->host_load;
    if (l.cpus <= 0) return {};
    const double busy = l.others_cpus + l.steal_cpus, cpus = l.cpus;
    if (busy < host_busy_share * cpus) return {};
    return {fmt::format("{}: {} ran beside {:.1f} of {} CPUs of other work{}", run, p.probe, busy, l.cpus,
                        l.steal_cpus >= 0.05 ? fmt::format(" ({:.1f} stolen by the hypervisor)", l.steal_cpus) : ""),
            cpus / std::max(cpus - busy, 0.1 * cpus)};
}

// Whether the load measured beside the two probes can explain the ratio: B up to factor_b worse
// than A (B's load), or up to factor_a better (A's load). Beyond that the change is the device's
// even after the load is allowed for, and it is judged as measured.
bool load_explains(const MetricComparison& c, double factor_a, double factor_b) {
    const double worse = c.higher_is_better ? 1 / c.ratio : c.ratio;  // > 1: B worse than A
    return worse <= factor_b && worse >= 1 / factor_a;
}

// Fills c's ratio, interval, band and method; returns the verdict they give.
Verdict compare_timed(MetricComparison& c, const Placed& pa, const Placed& pb, const CompareOptions& o,
                      const References& refs, unsigned seed) {
    const Measurement &a = *pa.m, &b = *pb.m;
    // A verdict needs the whole interval beyond the band: a significant but tiny change is still
    // noise to a reader, and a large change with a wide interval is not yet established. The band
    // is each run's own spread: the machine's drift between the runs is compared on its own
    // (machine_comparison), and within a run it is handled by what is compared, never by widening.
    if (is_ceiling(c.metric)) {
        // A ceiling: the fastest sample of each run (a slow phase only slows samples down), on the
        // gap to each run's second fastest.
        const auto [best_a, gap_a] = best_and_gap(a.samples, c.higher_is_better);
        const auto [best_b, gap_b] = best_and_gap(b.samples, c.higher_is_better);
        c.method = Method::best_of;
        c.ratio = c.ratio_low = c.ratio_high = best_a > 0 ? best_b / best_a : 1;
        c.band = std::max({o.threshold, gap_a + gap_b, c.between_runs_band});
        // With repeats judging it, against the median of A's runs' best values (as medians below).
        if (c.between_runs_band > 0 && c.band == c.between_runs_band) {
            const auto pooled = o.between_runs->baseline_best(c.metric, c.labels);
            if (pooled && *pooled > 0) {
                c.baseline_median = *pooled;
                c.ratio = c.ratio_low = c.ratio_high = best_b / *pooled;
            }
        }
        return verdict_of(c.ratio_low, c.ratio_high, c.band, c.higher_is_better);
    }
    std::tie(c.ratio_low, c.ratio_high) = bootstrap_ratio_interval(a.samples, b.samples, o.bootstrap_resamples, seed);
    c.ratio = c.raw_ratio;
    // The two runs' own spread (cv_a + cv_b): the bootstrap sees the noise within each run, but on
    // a busy or shared machine the median itself moves between runs by about one sample's spread.
    c.band = std::max({o.threshold, a.summary.cv + b.summary.cv, c.between_runs_band});
    // Where the movement between runs of A sets the band, it was measured on exactly this kind of
    // number, the ratio of two runs' medians, so the sampling noise of each median is already in
    // it: the ratio of medians is held against it, not the bootstrap interval (which would count
    // that noise twice and let a kernel planted 2.3x slower pass inside an 85% band). The interval
    // is still reported.
    const bool between_runs_judge = c.between_runs_band > 0 && c.band == c.between_runs_band;
    // A timed metric of one driver: each sample scaled by the reference timed just before its
    // probe, so a probe that ran in a slow phase of one run compares with the same probe in a fast
    // phase of the other as the same machine would. A constant factor per probe and run, so the
    // interval scales with it.
    const Scaling scaling = o.normalise ? scaling_of(c.unit) : Scaling::none;
    // The FMA reference for every metric: it tracks the machine's state (a VM's vCPUs sharing a
    // core halve it for seconds at a time), while one read of the memory reference on a shared
    // machine catches other processes' traffic of that instant (5 to 24 GB/s between checks a few
    // seconds apart here), and scaling by it added more noise than it removed.
    const std::optional<double> ra =
        refs.same_driver && refs.a && scaling != Scaling::none ? reference_around(*refs.a, pa.probe) : std::nullopt;
    const std::optional<double> rb =
        refs.same_driver && refs.b && scaling != Scaling::none ? reference_around(*refs.b, pb.probe) : std::nullopt;
    if (ra && rb) {
        const double ref_a = *ra, ref_b = *rb;
        {
            const double factor = scaling == Scaling::rate ? ref_a / ref_b : ref_b / ref_a;
            c.method = Method::normalised;
            c.reference_series = "compute";
            c.reference_a = ref_a;
            c.reference_b = ref_b;
            c.ratio = c.raw_ratio * factor;
            c.ratio_low *= factor;
            c.ratio_high *= factor;
        }
    }
    if (between_runs_judge) {
        // The baseline is all of A's runs: B against the median of their medians, so one run of A
        // caught in a slow or fast state (an attention prefill 1.5x off in one of three) does not
        // call every figure of its probe in B. Not with --normalise, whose scaling is per run.
        const auto pooled =
            c.method == Method::median ? o.between_runs->baseline_median(c.metric, c.labels) : std::nullopt;
        if (pooled && *pooled > 0) {
            c.baseline_median = *pooled;
            c.ratio = b.summary.median / *pooled;
        }
        return verdict_of(c.ratio, c.ratio, c.band, c.higher_is_better);
    }
    return verdict_of(c.ratio_low, c.ratio_high, c.band, c.higher_is_better);
}

MetricComparison compare_pair(const Placed& pa, const Placed& pb, const CompareOptions& o, const References& refs,
                              unsigned seed) {
    const Measurement &a = *pa.m, &b = *pb.m;
    MetricComparison c = describe(a);
    c.median_a = a.summary.median;
    c.median_b = b.summary.median;
    if (c.fact || b.timer == TimerKind::none) {
        c.fact = true;
        const bool equal = std::fabs(a.summary.median - b.summary.median) <=
                           1e-9 * std::max(std::fabs(a.summary.median), std::fabs(b.summary.median));
        c.verdict = equal ? Verdict::same : Verdict::changed;
        c.ratio = a.summary.median != 0 ? b.summary.median / a.summary.median : 1;
        c.raw_ratio = c.ratio_low = c.ratio_high = c.ratio;
        return c;
    }
    if (a.summary.median <= 0 || b.summary.median <= 0 || a.samples.empty() || b.samples.empty()) {
        c.verdict = Verdict::within_noise;
        return c;
    }
    c.raw_ratio = b.summary.median / a.summary.median;
    const Disturbance da = disturbance_of(pa, "A", refs.cpu_device_a), db = disturbance_of(pb, "B", refs.cpu_device_b);
    // Measured between repeated runs of A: how far this metric's family moves from one run to the
    // next on this machine, which no single run's spread shows.
    if (o.between_runs) c.between_runs_band = o.between_runs->band_for(c.metric, c.labels).value_or(0);
    const Verdict measured = compare_timed(c, pa, pb, o, refs, seed);
    // Still measured and shown (ratio, interval), but a change that the load measured beside its
    // probe can explain is not judged.
    const bool disturbed =
        (!da.text.empty() || !db.text.empty()) && c.ratio > 0 && load_explains(c, da.factor, db.factor);
    if (disturbed)
        for (const auto* d : {&da, &db})
            if (!d->text.empty()) c.disturbance += (c.disturbance.empty() ? "" : "; ") + d->text;
    c.verdict = disturbed ? Verdict::disturbed : measured;
    return c;
}

void add_if_different(std::vector<EnvironmentDifference>& out, std::string field, const std::string& a,
                      const std::string& b) {
    if (a != b) out.push_back({std::move(field), a, b});
}

// The keys both maps hold whose values differ, in key order.
void add_differences(std::vector<EnvironmentDifference>& out, const std::map<std::string, std::string>& a,
                     const std::map<std::string, std::string>& b) {
    for (const auto& [k, v] : a)
        if (auto it = b.find(k); it != b.end()) add_if_different(out, k, v, it->second);
}

std::string yes_no(bool v) {
    return v ? "yes" : "no";
}

// The attributes that give a workload probe's shape (glm: rows, cols, density; the pipeline's
// batches; attention: the shape object and the decode's KV lengths), as "<probe>.<key>" -> JSON.
constexpr const char* workload_shape_keys[] = {"rows", "cols", "density", "batch_rows", "batches", "shape", "kv_lens"};

std::map<std::string, std::string> workload_shapes(const RunReport& r) {
    std::map<std::string, std::string> out;
    for (const auto& p : r.results) {
        if (!is_workload_id(p.id) || !p.attributes.is_object()) continue;
        for (const char* key : workload_shape_keys)
            if (p.attributes.contains(key)) out[p.id + "." + key] = p.attributes[key].dump();
    }
    return out;
}

void environment_diff(const RunReport& a, const RunReport& b, std::vector<EnvironmentDifference>& out) {
    add_if_different(out, "host.hostname", a.host.hostname, b.host.hostname);
    add_if_different(out, "host.cpu_model", a.host.cpu_model, b.host.cpu_model);
    add_if_different(out, "host.logical_cpus", std::to_string(a.host.logical_cpus),
                     std::to_string(b.host.logical_cpus));
    add_if_different(out, "host.os", a.host.os, b.host.os);
    add_if_different(out, "host.kernel", a.host.kernel, b.host.kernel);
    add_if_different(out, "tool_version", a.tool_version, b.tool_version);
    if (a.device.has_value() != b.device.has_value()) {
        add_if_different(out, "device", a.device ? a.device->name : "none", b.device ? b.device->name : "none");
    } else if (a.device && b.device) {
        const DeviceInfo &da = *a.device, &db = *b.device;
        add_if_different(out, "device.name", da.name, db.name);
        add_if_different(out, "device.type", da.type, db.type);
        add_if_different(out, "device.platform", da.platform_name + " " + da.platform_version,
                         db.platform_name + " " + db.platform_version);
        add_if_different(out, "device.driver_version", da.driver_version, db.driver_version);
        add_if_different(out, "device.opencl_version", da.device_version, db.device_version);
        add_if_different(out, "device.compute_units", std::to_string(da.compute_units),
                         std::to_string(db.compute_units));
        add_if_different(out, "device.max_clock_mhz", std::to_string(da.max_clock_mhz),
                         std::to_string(db.max_clock_mhz));
        add_if_different(out, "device.global_mem_bytes", std::to_string(da.global_mem_bytes),
                         std::to_string(db.global_mem_bytes));
        add_if_different(out, "device.max_alloc_bytes", std::to_string(da.max_alloc_bytes),
                         std::to_string(db.max_alloc_bytes));
        add_if_different(out, "device.fp64", yes_no(da.fp64), yes_no(db.fp64));
        add_if_different(out, "device.fp16", yes_no(da.fp16), yes_no(db.fp16));
        add_if_different(out, "device.profiling", yes_no(da.profiling), yes_no(db.profiling));
        add_if_different(out, "device.pci_address", da.pci_address.value_or("none"), db.pci_address.value_or("none"));
    }
    for (const char* key : {"mode", "layers", "binary_cache", "kernel_dir", "topology_xml", "device_pci"}) {
        const auto va = a.options.contains(key) ? a.options[key].dump() : "unset";
        const auto vb = b.options.contains(key) ? b.options[key].dump() : "unset";
        add_if_different(out, std::string("options.") + key, va, vb);
    }
    // Settings the system and topology probes record as text (governor, THP mode, hypervisor,
    // binding...). Numbers there are measurements and are compared as such.
    std::map<std::string, std::string> sa, sb;
    auto collect = [](const RunReport& r, std::map<std::string, std::string>& out) {
        for (const auto& p : r.results) {
            if (p.layer != "system" && p.layer != "topology") continue;
            for (const auto& [k, v] : p.attributes.items())
                if (v.is_string() || v.is_boolean())
                    out[p.id + "." + k] = v.is_string() ? v.get<std::string>() : v.dump();
        }
    };
    collect(a, sa);
    collect(b, sb);
    add_differences(out, sa, sb);
    add_differences(out, workload_shapes(a), workload_shapes(b));
}

// A workload probe that ran another shape in B (EnvironmentDifference "<probe>.<shape key>"):
// its times measure other work, which no band can separate from a regression; its rates
// (GB/s, GFLOP/s, tokens/s) still compare. Named beside the probe's timed figures that moved.
void explain_shapes(Comparison& c) {
    std::map<std::string, std::string> by_probe;  // probe -> "rows 3264686 -> 5771394; ..."
    for (const auto& e : c.environment)
        for (const char* key : workload_shape_keys)
            if (const std::string suffix = std::string(".") + key;
                e.field.size() > suffix.size() && e.field.ends_with(suffix) && is_workload_id(e.field)) {
                auto& text = by_probe[e.field.substr(0, e.field.size() - suffix.size())];
                text += fmt::format("{}{} {} -> {}", text.empty() ? "" : "; ", key, e.a, e.b);
            }
    for (const auto& [probe, shapes] : by_probe) {
        int slower = 0, faster = 0;
        for (const auto& m : c.metrics)
            if (!m.fact && starts_with(m.metric, probe + ".")) {
                slower += m.verdict == Verdict::slower;
                faster += m.verdict == Verdict::faster;
            }
        c.explanations.push_back(fmt::format(
            "{} ran another shape in B ({}): {} of its figures moved ({} slower, {} faster); its times measure "
            "different work, compare its rates",
            probe, shapes, slower + faster, slower, faster));
    }
}

// Ties measured differences to environment differences where the evidence allows: a changed
// setting is named next to the metrics it is known to drive, and only when those metrics moved.
struct ExplanationRule {
    std::vector<std::string> fields;           // environment fields or fact metrics
    std::vector<std::string> metric_prefixes;  // metrics the field drives
    const char* what;                          // "compute-bound", "transfer"
};

const std::vector<ExplanationRule>& explanation_rules() {
    static const std::vector<ExplanationRule> rules = {
        {{"device.compute_units", "device.max_clock_mhz", "system.cpus.allowed", "system.cpu.quota"},
         {"kernel.compute", "kernel.peak.fp", "kernel.peak.int", "glm.", "attention.prefill"},
         "compute-bound"},
        {{"topology.device.link_bandwidth", "topology.device.numa_node"}, {"transfer."}, "transfer"},
        {{"host.memory.bandwidth", "topology.numa_nodes"},
         {"kernel.bandwidth", "kernel.peak.bandwidth"},
         "memory-bound"},
        {{"device.driver_version", "device.platform"}, {""}, "all"},
    };
    return rules;
}

void explain(Comparison& c) {
    std::map<std::string, std::pair<std::string, std::string>> changed;
    for (const auto& e : c.environment)
        changed[e.field] = {e.a, e.b};
    for (const auto& m : c.metrics)
        if ((m.fact && m.verdict == Verdict::changed) ||
            (m.headline && (m.verdict == Verdict::faster || m.verdict == Verdict::slower)))
            changed[m.metric] = {m.median_a ? fmt::format("{:.4g}", *m.median_a) : "-",
                                 m.median_b ? fmt::format("{:.4g}", *m.median_b) : "-"};
    for (const auto& rule : explanation_rules()) {
        std::vector<std::string> causes;
        for (const auto& f : rule.fields)
            if (auto it = changed.find(f); it != changed.end())
                causes.push_back(fmt::format("{} {} -> {}", f, it->second.first, it->second.second));
        if (causes.empty()) continue;
        int slower = 0, faster = 0;
        for (const auto& m : c.metrics) {
            if (m.fact) continue;
            const bool related = std::any_of(rule.metric_prefixes.begin(), rule.metric_prefixes.end(),
                                             [&](const std::string& p) { return starts_with(m.metric, p); });
            if (!related || std::find(rule.fields.begin(), rule.fields.end(), m.metric) != rule.fields.end()) continue;
            slower += m.verdict == Verdict::slower;
            faster += m.verdict == Verdict::faster;
        }
        // The machine's own reference moved with them: named beside the metrics it explains.
        std::string machine;
        if (c.machine && !c.machine->shift_is_driver)
            for (const auto& shift : c.machine->shifts)
                if (shift.verdict != Verdict::within_noise &&
                    (std::string_view(rule.what) == (shift.series == "compute" ? "compute-bound" : "memory-bound") ||
                     std::string_view(rule.what) == "all"))
                    machine += fmt::format("; the machine {}", describe(shift));
        if (slower + faster == 0 && machine.empty()) continue;
        std::string joined;
        for (const auto& cause : causes)
            joined += (joined.empty() ? "" : "; ") + cause;
        c.explanations.push_back(
            fmt::format("{} {} metric(s) moved in B ({} slower, {} faster){}; the environment differs: {}",
                        slower + faster, rule.what, slower, faster, machine, joined));
    }
    explain_shapes(c);
    if (auto it = changed.find("options.mode"); it != changed.end())
        c.explanations.push_back(fmt::format(
            "the runs used different modes ({} vs {}): buffer sizes and sample counts differ, so compare with care",
            it->second.first, it->second.second));
}

bool is_cpu_device(const RunReport& r) {
    return r.device && r.device->type == "cpu";
}

std::string report_label(const RunReport& r) {
    return fmt::format("{} on {}", r.created_at, r.device ? r.device->name : r.host.hostname);
}

// The items (findings, trust notes) whose id appears in one list only, each side in id order; an
// id repeated within a list counts once, as its first item.
template <typename Item>
void one_sided(const std::vector<Item>& a, const std::vector<Item>& b, std::vector<Item>& only_a,
               std::vector<Item>& only_b) {
    auto by_id = [](const std::vector<Item>& items) {
        std::map<std::string, const Item*> out;
        for (const auto& item : items)
            out.emplace(item.id, &item);
        return out;
    };
    const auto ia = by_id(a), ib = by_id(b);
    for (const auto& [id, item] : ia)
        if (!ib.count(id)) only_a.push_back(*item);
    for (const auto& [id, item] : ib)
        if (!ia.count(id)) only_b.push_back(*item);
}

}  // namespace

std::string_view to_string(Verdict v) {
    constexpr std::string_view names[] = {"faster", "slower",    "within_noise", "changed",
                                          "same",   "only_in_a", "only_in_b",    "disturbed"};  // Verdict's order
    return names[static_cast<std::size_t>(v)];
}

std::string_view to_string(Method m) {
    constexpr std::string_view names[] = {"median", "best_of", "normalised"};  // Method's order
    return names[static_cast<std::size_t>(m)];
}

// The faster half of the values (the ceil(n / 2) fastest, at least two; the smallest for
// lower-is-better): their median, what a ceiling or the machine's reference compares, and their
// spread below it, that median over the slowest of the half minus 1 (0 with one value). The faster
// half and not the single fastest value: on a shared machine one sample can be lucky or an outlier
// (a cache-sized read timed 2x above its neighbours, a 2 ms reference check at 220 GFLOP/s between
// checks of 110), and the half still ignores every slow phase that covers less than half the
// samples. Below the median, so that such an outlier widens the band no more than it moves the value.
std::pair<double, double> best_and_gap(std::vector<double> v, bool higher_is_better) {
    if (v.empty()) return {0, 0};
    std::sort(v.begin(), v.end());
    if (higher_is_better) std::reverse(v.begin(), v.end());  // fastest first
    const std::size_t half = std::min(v.size(), std::max<std::size_t>(2, (v.size() + 1) / 2));
    const std::vector<double> faster(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(half));
    const double value = median_of(faster), slowest = faster.back();
    if (v.size() < 2 || value <= 0 || slowest <= 0) return {value, 0};
    return {value, higher_is_better ? value / slowest - 1 : slowest / value - 1};
}

int Comparison::count(Verdict v) const {
    return static_cast<int>(
        std::count_if(metrics.begin(), metrics.end(), [v](const auto& m) { return m.verdict == v; }));
}

namespace {

// A share of a roof measured in the same run (a roofline, peak or roof fraction) moves with that
// roof as much as with the work: a faster roof in B lowers every fraction of it with nothing
// slower. In ten same-machine comparisons of `diagnose --passes 2` runs, one run's cache roof read
// half the others' and two GLM variants' fractions were called slower, failing 3 of the 10 gates.
// The rate it divides and the roof are compared on their own; the fraction is shown, never gated.
bool share_of_roof(std::string_view metric) {
    for (std::string_view suffix : {".roofline_fraction", ".peak_fraction", ".roof_fraction"})
        if (metric.size() >= suffix.size() && metric.substr(metric.size() - suffix.size()) == suffix) return true;
    return false;
}

}  // namespace

std::vector<const MetricComparison*> Comparison::headline_regressions() const {
    std::vector<const MetricComparison*> out;
    for (const auto& m : metrics)
        if (m.headline && !m.fact && !share_of_roof(m.metric) && m.verdict == Verdict::slower) out.push_back(&m);
    return out;
}

namespace {

// Variants among a family's slower label sets. A set that names a slower variant more finely counts
// with it: glm.pipeline's step_time{variant} and its stage_time{stage,variant} are one variant
// measured whole and by stage, and counting them as two let one slower variant pass as a family
// regression. The empty set is the family's headline (its best variant, e.g. glm.gradient.best),
// judged as a headline: it is no variant of its own and does not swallow the others.
std::size_t distinct_variants(const std::set<Labels>& sets) {
    return static_cast<std::size_t>(std::count_if(sets.begin(), sets.end(), [&](const Labels& s) {
        return !s.empty() && std::none_of(sets.begin(), sets.end(), [&](const Labels& o) {
            return !o.empty() && o.size() < s.size() && labels_contain(s, o);
        });
    }));
}

}  // namespace

std::vector<FamilyRegression> Comparison::family_regressions() const {
    std::vector<FamilyRegression> out;
    if (baseline_runs < 2 && movement_known_from.empty()) return out;
    struct Moves {
        std::set<Labels> slower, faster;
        std::vector<const MetricComparison*> slower_figures;
    };
    std::map<std::string, Moves> families;
    for (const auto& m : metrics) {
        if (m.fact || !is_workload_id(m.metric) || share_of_roof(m.metric)) continue;
        if (m.verdict != Verdict::slower && m.verdict != Verdict::faster) continue;
        Moves& f = families[noise_family(m.metric)];
        if (m.verdict == Verdict::faster) {
            f.faster.insert(m.labels);
            continue;
        }
        f.slower.insert(m.labels);
        f.slower_figures.push_back(&m);
    }
    for (auto& [family, f] : families) {
        const std::size_t variants = distinct_variants(f.slower);
        if (variants >= family_regression_variants && f.faster.empty())
            out.push_back({family, variants, std::move(f.slower_figures)});
    }
    return out;
}

bool Comparison::regressed() const {
    return !headline_regressions().empty() || !family_regressions().empty() ||
           (machine && !machine->regressions().empty());
}

std::vector<const ReferenceShift*> MachineComparison::regressions() const {
    std::vector<const ReferenceShift*> out;
    if (shift_is_driver) return out;
    for (const auto& s : shifts)
        if (s.verdict == Verdict::slower) out.push_back(&s);
    return out;
}

std::vector<EnvironmentDifference> provenance_differences(const Provenance& a, const Provenance& b) {
    std::vector<EnvironmentDifference> out;
    const auto fa = provenance_fields(a), fb = provenance_fields(b);
    // The version itself is tool_version's difference, listed with the environment.
    for (std::size_t i = 0; i < fa.size(); ++i)
        if (fa[i].first != "clprobe_version")
            add_if_different(out, "provenance." + std::string(fa[i].first), fa[i].second, fb[i].second);
    return out;
}

std::optional<MachineComparison> machine_comparison(const RunReport& a, const RunReport& b, double threshold,
                                                    bool same_driver) {
    const bool checked_a = a.drift && !a.drift->checks.empty(), checked_b = b.drift && !b.drift->checks.empty();
    if (!checked_a && !checked_b) return std::nullopt;
    MachineComparison m;
    if (a.drift) m.spread_a = largest_spread(*a.drift);
    if (b.drift) m.spread_b = largest_spread(*b.drift);
    m.shift_is_driver = !same_driver;
    if (!checked_a || !checked_b) return m;
    for (const auto& [name, unit, rate] : {std::tuple{"compute", "GFLOP/s", &DriftCheck::compute_gflops},
                                           std::tuple{"memory", "GB/s", &DriftCheck::memory_gb_per_s}}) {
        auto values = [rate = rate](const MachineDrift& d) {
            std::vector<double> v;
            for (const auto& c : d.checks)
                if (c.*rate > 0) v.push_back(c.*rate);
            return v;
        };
        const auto [fast_a, gap_a] = best_and_gap(values(*a.drift), true);
        const auto [fast_b, gap_b] = best_and_gap(values(*b.drift), true);
        if (fast_a <= 0 || fast_b <= 0) continue;
        ReferenceShift s;
        s.series = name;
        s.unit = unit;
        s.fast_a = fast_a;
        s.fast_b = fast_b;
        s.ratio = fast_b / fast_a;
        s.band = std::max(threshold, gap_a + gap_b);
        s.verdict = same_driver ? verdict_of(s.ratio, s.ratio, s.band, true) : Verdict::within_noise;
        m.shifts.push_back(s);
    }
    return m;
}

std::string describe(const ReferenceShift& s) {
    const bool compute = s.series == "compute";
    const char* verb = compute ? "computes" : "reads memory";
    const bool slower = s.ratio < 1;
    // A shift of B's first run that a repeat of B did not show (compare/confirmation.hpp).
    if (s.unconfirmed) {
        std::string repeats;
        for (double r : s.repeat_ratios)
            repeats += fmt::format("{}x{:.2f}", repeats.empty() ? "" : ", ", r);
        return fmt::format("{} as fast as in A: {:.1f}x {} in B's first run only (its repeats: {})", verb,
                           slower ? 1 / s.ratio : s.ratio, slower ? "slower" : "faster",
                           repeats.empty() ? "not measured" : repeats);
    }
    if (s.verdict == Verdict::within_noise)
        return fmt::format("{} as fast as in A within {:.0f}% (x{:.2f})", verb, 100 * s.band, s.ratio);
    return fmt::format("{} {:.1f}x {} than in A", verb, slower ? 1 / s.ratio : s.ratio, slower ? "slower" : "faster");
}

std::string describe(const MachineComparison& m) {
    auto figure = [](const std::optional<double>& v) { return v ? fmt::format("{:.0f}%", 100 * *v) : "not measured"; };
    std::string out;
    if (m.shifts.empty()) {
        out = "Machine: only one report measured the drift reference, so the machines cannot be compared";
    } else if (m.shift_is_driver) {
        out = "Machine: not comparable across drivers; the reference kernels' fastest checks moved";
        for (const auto& s : m.shifts)
            out += fmt::format(" {} x{:.2f} ({:.4g} -> {:.4g} {})", s.series, s.ratio, s.fast_a, s.fast_b, s.unit);
        out += ", which is the drivers' difference";
    } else {
        std::vector<std::string> parts;
        for (const auto& s : m.shifts)
            parts.push_back(fmt::format(
                "{} (reference {} kernel, fastest samples, the median of the faster half: {:.4g} -> {:.4g} {})",
                describe(s), s.series == "compute" ? "FMA" : "read", s.fast_a, s.fast_b, s.unit));
        out = "Machine: this device ";
        for (std::size_t i = 0; i < parts.size(); ++i)
            out += (i ? "; " : "") + parts[i];
    }
    out += fmt::format(
        ". Within the runs the reference varied {} (A) and {} (B): handled by measurement "
        "(ceilings by the faster half of their samples, timed metrics by their medians; probes that ran beside other "
        "work not judged), "
        "no band widened by it",
        figure(m.spread_a), figure(m.spread_b));
    return out;
}

namespace {
std::string driver_name(const DeviceInfo& d) {
    return fmt::format("{} {} (driver {})", d.platform_name, d.platform_version, d.driver_version);
}
}  // namespace

std::optional<DriverChange> driver_change(const RunReport& a, const RunReport& b) {
    if (!a.device || !b.device) return std::nullopt;
    const std::string na = driver_name(*a.device), nb = driver_name(*b.device);
    if (na == nb) return std::nullopt;
    return DriverChange{na, nb};
}

std::string describe(const DriverChange& change) {
    return fmt::format(
        "Different OpenCL drivers: A ran on {}, B on {}. Every difference below includes the driver's "
        "(its kernel compiler, launch and transfer paths).",
        change.a, change.b);
}

Comparison compare_reports(const RunReport& a, const RunReport& b, const CompareOptions& options) {
    Comparison c;
    c.a_label = report_label(a);
    c.b_label = report_label(b);
    c.threshold = options.threshold;
    c.driver = driver_change(a, b);
    c.machine = machine_comparison(a, b, options.threshold, !c.driver);
    const References refs{&a.drift, &b.drift, !c.driver, is_cpu_device(a), is_cpu_device(b)};
    const Keyed ka = index(a), kb = index(b);
    unsigned seed = 12345;
    for (const auto& key : ka.order) {
        const Measurement& ma = *ka.by_key.at(key).m;
        if (auto it = kb.by_key.find(key); it != kb.by_key.end()) {
            c.metrics.push_back(compare_pair(ka.by_key.at(key), it->second, options, refs, seed++));
        } else {
            MetricComparison m = describe(ma);
            m.median_a = ma.summary.median;
            m.verdict = Verdict::only_in_a;
            c.metrics.push_back(std::move(m));
        }
    }
    for (const auto& key : kb.order)
        if (!ka.by_key.count(key)) {
            const Measurement& mb = *kb.by_key.at(key).m;
            MetricComparison m = describe(mb);
            m.median_b = mb.summary.median;
            m.verdict = Verdict::only_in_b;
            c.metrics.push_back(std::move(m));
        }
    environment_diff(a, b, c.environment);
    c.provenance_known = a.provenance && b.provenance;
    if (c.provenance_known) c.provenance = provenance_differences(*a.provenance, *b.provenance);

    if (options.between_runs) {
        c.movement_known_from = options.between_runs->known_from;
        c.baseline_runs = options.between_runs->runs;
        c.between_runs_z = options.between_runs->z;
        for (const auto& [family, sigma] : options.between_runs->family_sigmas())
            c.between_runs_bands.emplace_back(family, std::expm1(options.between_runs->z * sigma));
        std::sort(c.between_runs_bands.begin(), c.between_runs_bands.end(),
                  [](const auto& x, const auto& y) { return x.second > y.second; });
    }
    one_sided(a.findings, b.findings, c.findings_only_in_a, c.findings_only_in_b);
    one_sided(a.trust_notes, b.trust_notes, c.trust_notes_only_in_a, c.trust_notes_only_in_b);
    explain(c);
    return c;
}

}  // namespace clprobe

#include "compare/comparison.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "compare/metric_key.hpp"
#include "core/stats.hpp"

namespace clprobe {

namespace {

struct Keyed {
    std::vector<std::string> order;
    std::map<std::string, const Measurement*> by_key;
};

Keyed index(const RunReport& r) {
    Keyed k;
    for (const auto& p : r.results)
        for (const auto& m : p.measurements) {
            const auto key = pairing_key(m);
            if (k.by_key.emplace(key, &m).second) k.order.push_back(key);
        }
    return k;
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

MetricComparison compare_pair(const Measurement& a, const Measurement& b, const CompareOptions& o, double drift,
                              unsigned seed) {
    MetricComparison c = describe(a);
    c.median_a = a.summary.median;
    c.median_b = b.summary.median;
    if (c.fact || b.timer == TimerKind::none) {
        c.fact = true;
        const bool equal = std::fabs(a.summary.median - b.summary.median) <=
                           1e-9 * std::max(std::fabs(a.summary.median), std::fabs(b.summary.median));
        c.verdict = equal ? Verdict::same : Verdict::changed;
        c.ratio = a.summary.median != 0 ? b.summary.median / a.summary.median : 1;
        c.ratio_low = c.ratio_high = c.ratio;
        return c;
    }
    if (a.summary.median <= 0 || b.summary.median <= 0) {
        c.verdict = Verdict::within_noise;
        return c;
    }
    c.ratio = b.summary.median / a.summary.median;
    std::tie(c.ratio_low, c.ratio_high) = bootstrap_ratio_interval(a.samples, b.samples, o.bootstrap_resamples, seed);
    // B is better when the ratio is above 1 for rates and below 1 for times. A verdict needs the
    // whole interval beyond the band: a significant but tiny change is still noise to a reader,
    // and a large change with a wide interval is not yet established. The band widens to the two
    // runs' own spread (cv_a + cv_b): the bootstrap sees the noise within each run, but on a busy
    // or shared machine the median itself moves between runs by about one sample's spread. On a
    // machine whose throughput switches state (drift_band), tight samples hide a move of the whole
    // machine: the band widens to what the runs' reference kernels measured.
    c.band = std::max({o.threshold, a.summary.cv + b.summary.cv, drift});
    // The band is symmetric in ratio, not in difference: B at 1 / (1 + band) of A is as far as B
    // at 1 + band. (1 - band reached zero at a band of 100%, so on a machine that drifted that much
    // no time could ever be called lower, however large the change: a 16x faster launch was "noise".)
    const double up = 1 + c.band, down = 1 / (1 + c.band);
    const bool b_higher = c.ratio_low > up, b_lower = c.ratio_high < down;
    if (b_higher)
        c.verdict = c.higher_is_better ? Verdict::faster : Verdict::slower;
    else if (b_lower)
        c.verdict = c.higher_is_better ? Verdict::slower : Verdict::faster;
    else
        c.verdict = Verdict::within_noise;
    return c;
}

void add_if_different(std::vector<EnvironmentDifference>& out, std::string field, const std::string& a,
                      const std::string& b) {
    if (a != b) out.push_back({std::move(field), a, b});
}

std::string yes_no(bool v) {
    return v ? "yes" : "no";
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
    for (const auto& [k, v] : sa)
        if (auto it = sb.find(k); it != sb.end()) add_if_different(out, k, v, it->second);
}

bool starts_with(const std::string& s, std::string_view prefix) {
    return s.rfind(prefix, 0) == 0;
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
         {"kernel.compute", "kernel.peak.fp", "glm.", "attention.prefill"},
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
        if (slower + faster == 0) continue;
        std::string joined;
        for (const auto& cause : causes)
            joined += (joined.empty() ? "" : "; ") + cause;
        c.explanations.push_back(
            fmt::format("{} {} metric(s) moved in B ({} slower, {} faster); the environment differs: {}",
                        slower + faster, rule.what, slower, faster, joined));
    }
    if (auto it = changed.find("options.mode"); it != changed.end())
        c.explanations.push_back(fmt::format(
            "the runs used different modes ({} vs {}): buffer sizes and sample counts differ, so compare with care",
            it->second.first, it->second.second));
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
                                          "same",   "only_in_a", "only_in_b"};  // Verdict's order
    return names[static_cast<std::size_t>(v)];
}

int Comparison::count(Verdict v) const {
    return static_cast<int>(
        std::count_if(metrics.begin(), metrics.end(), [v](const auto& m) { return m.verdict == v; }));
}

std::vector<const MetricComparison*> Comparison::headline_regressions() const {
    std::vector<const MetricComparison*> out;
    for (const auto& m : metrics)
        if (m.headline && !m.fact && m.verdict == Verdict::slower) out.push_back(&m);
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

std::optional<DriftBand> drift_band(const RunReport& a, const RunReport& b, bool same_driver) {
    DriftBand d;
    if (a.drift) d.spread_a = largest_spread(*a.drift);
    if (b.drift) d.spread_b = largest_spread(*b.drift);
    if (a.drift && b.drift) d.reference_shift = reference_shift(*a.drift, *b.drift);
    if (!d.spread_a && !d.spread_b) return std::nullopt;
    d.shift_is_driver = !same_driver;
    const std::optional<double> shift = same_driver ? d.reference_shift : std::nullopt;
    for (const auto& [value, source] :
         {std::pair{d.spread_a, "spread_a"}, std::pair{d.spread_b, "spread_b"}, std::pair{shift, "reference_shift"}})
        if (value && (d.source.empty() || *value > d.band)) {
            d.band = *value;
            d.source = source;
        }
    return d;
}

std::string describe(const DriftBand& d) {
    auto figure = [](const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", 100 * *v) : "not measured"; };
    return fmt::format(
        "the runs drifted by up to {:.1f}% (reference kernels: A varied {}, B varied {}, their medians "
        "moved {}{}): changes inside it are not called",
        100 * d.band, figure(d.spread_a), figure(d.spread_b), figure(d.reference_shift),
        d.shift_is_driver ? ", which is the drivers' difference and widens nothing" : "");
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
    c.drift = drift_band(a, b, !c.driver);
    const double drift = c.drift ? c.drift->band : 0;
    const Keyed ka = index(a), kb = index(b);
    unsigned seed = 12345;
    for (const auto& key : ka.order) {
        const Measurement& ma = *ka.by_key.at(key);
        if (auto it = kb.by_key.find(key); it != kb.by_key.end()) {
            c.metrics.push_back(compare_pair(ma, *it->second, options, drift, seed++));
        } else {
            MetricComparison m = describe(ma);
            m.median_a = ma.summary.median;
            m.verdict = Verdict::only_in_a;
            c.metrics.push_back(std::move(m));
        }
    }
    for (const auto& key : kb.order)
        if (!ka.by_key.count(key)) {
            const Measurement& mb = *kb.by_key.at(key);
            MetricComparison m = describe(mb);
            m.median_b = mb.summary.median;
            m.verdict = Verdict::only_in_b;
            c.metrics.push_back(std::move(m));
        }
    environment_diff(a, b, c.environment);
    c.provenance_known = a.provenance && b.provenance;
    if (c.provenance_known) c.provenance = provenance_differences(*a.provenance, *b.provenance);

    one_sided(a.findings, b.findings, c.findings_only_in_a, c.findings_only_in_b);
    one_sided(a.trust_notes, b.trust_notes, c.trust_notes_only_in_a, c.trust_notes_only_in_b);
    explain(c);
    return c;
}

}  // namespace clprobe

#include "render/text_report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "core/cost_model.hpp"
#include "render/finding_size.hpp"
#include "render/trace_summary_text.hpp"

namespace clprobe {

namespace {

struct Palette {
    bool on;
    std::string wrap(const char* code, const std::string& s) const {
        return on ? fmt::format("\x1b[{}m{}\x1b[0m", code, s) : s;
    }
    std::string bold(const std::string& s) const { return wrap("1", s); }
    std::string dim(const std::string& s) const { return wrap("2", s); }
    std::string status(ProbeStatus st) const {
        const std::string name(to_string(st));
        switch (st) {
            case ProbeStatus::ok:
                return wrap("32", name);
            case ProbeStatus::error:
            case ProbeStatus::crashed:
            case ProbeStatus::timed_out:
                return wrap("31", name);
            default:
                return wrap("33", name);
        }
    }
};

std::string mib(std::uint64_t bytes) {
    if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1ull << 30));
    if (bytes >= (1ull << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1ull << 20));
    return fmt::format("{} KiB", bytes >> 10);
}

// The notes the analysis stored (rules/trust.cpp): warnings always; the notes that support the
// numbers only with --verbose.
void render_trust(std::string& out, const RunReport& r, const RenderOptions& o, const Palette& p) {
    out += p.bold("Measurement trust") + "\n";
    bool any = false;
    for (const auto& n : r.trust_notes) {
        if (!n.warning && !o.verbose) continue;
        out += n.warning ? fmt::format("  {} {}\n", p.wrap("33", "!"), n.text) : fmt::format("  {}\n", p.dim(n.text));
        any = any || n.warning;
    }
    if (!any) out += "  no condition of this run lowers trust in its numbers\n";
}

// A ranked finding's gain, or a note's factor ("27.0x"): a note never shows a gain.
std::string gain_or_factor(const Finding& f) {
    const FindingSize size = finding_size(f);
    switch (size.kind) {
        case FindingSize::Kind::gain:
            return "gain ~" + size.value;
        case FindingSize::Kind::factor:
            return "factor " + size.value;
        case FindingSize::Kind::none:
            break;
    }
    return "no gain estimate";
}

void render_finding(std::string& out, const Finding& f, const std::string& marker, const Palette& p) {
    out += fmt::format("{:>4} [{}] {}\n", marker, f.layer, p.bold(f.title));
    out += fmt::format("     {} · severity {} · confidence {:.2f}{} · {}\n", gain_or_factor(f), to_string(f.severity),
                       f.confidence, f.uncertain ? " · uncertain (inside the noise)" : "", p.dim(f.id));
    for (const auto& e : f.evidence)
        out += fmt::format("     evidence: {} = {:.4g} {}{}\n", labelled_metric(e.metric, e.labels), e.value, e.unit,
                           e.expectation.empty() ? "" : " (" + e.expectation + ")");
    out += fmt::format("     do: {}\n", f.suggestion);
    if (!f.gain_basis.empty()) out += fmt::format("     {}\n", p.dim("gain basis: " + f.gain_basis));
}

void render_findings(std::string& out, const RunReport& r, const Palette& p) {
    out += p.bold("Ranked findings") + p.dim(" (gain = share of a step measured in this run)") + "\n";
    std::size_t notes = 0;
    for (const auto& f : r.findings) {
        if (f.kind == FindingKind::ranked)
            render_finding(out, f, fmt::format("{}.", f.rank), p);
        else
            ++notes;
    }
    if (notes == r.findings.size()) out += "  none: no finding's gain is a share of a step measured in this run\n";
    if (notes == 0) return;
    out += p.bold("Device notes") + p.dim(" (unranked: traits of this device or machine, with their factor)") + "\n";
    for (const auto& f : r.findings)
        if (f.kind == FindingKind::note) render_finding(out, f, "-", p);
}

void render_results(std::string& out, const RunReport& r, const RenderOptions& o, const Palette& p) {
    out += p.bold("Probes") + "\n";
    for (const auto& res : r.results) {
        out +=
            fmt::format("  {:<22} {:<11} {:>6.1f} s  {}\n", res.id, p.status(res.status), res.wall_seconds, res.title);
        if (!res.reason.empty()) out += fmt::format("      reason: {}\n", res.reason);
        // Without --verbose, a probe with many variants shows its headlines only.
        const bool all = o.verbose || res.measurements.size() <= 6;
        std::size_t hidden = 0;
        for (const auto& m : res.measurements) {
            if (!all && !m.labels.empty()) {
                ++hidden;
                continue;
            }
            out += fmt::format("      {:<62} {}\n", labelled_metric(m.metric, m.labels), format_measurement_value(m));
            if (!m.note.empty() && (o.verbose || m.labels.empty()))
                out += fmt::format("      {:<62} {}\n", "", p.dim(m.note));
        }
        if (hidden)
            out += fmt::format("      {}\n",
                               p.dim(fmt::format("({} variant measurements; --verbose lists them)", hidden)));
    }
}

}  // namespace

std::string format_measurement_value(const Measurement& m) {
    // A fact (a count, a setting) has no spread worth printing.
    if (m.timer == TimerKind::none && m.summary.n == 1) return fmt::format("{:>10.4g} {}", m.summary.median, m.unit);
    std::string timer = m.timer == TimerKind::host_steady_clock ? " host-timed" : "";
    return fmt::format("{:>10.4g} {:<8} ± {:4.1f}%  n={}{}", m.summary.median, m.unit, 100 * m.summary.cv, m.summary.n,
                       timer);
}

std::string render_device_info(const DeviceInfo& d) {
    std::string out;
    auto row = [&](const char* k, const std::string& v) { out += fmt::format("  {:<30} {}\n", k, v); };
    row("selector", fmt::format("-d {} (flat index {})", d.selector, d.flat_index));
    row("name", d.name);
    row("type", d.type);
    row("vendor", d.vendor);
    row("platform", fmt::format("{} ({})", d.platform_name, d.platform_version));
    row("driver version", d.driver_version);
    row("OpenCL version", fmt::format("{}; {}", d.device_version, d.opencl_c_version));
    row("compute units", std::to_string(d.compute_units));
    row("max clock", fmt::format("{} MHz", d.max_clock_mhz));
    row("global memory", mib(d.global_mem_bytes));
    row("global memory cache",
        fmt::format("{} (line {} B)", mib(d.global_mem_cache_bytes), d.global_mem_cacheline_bytes));
    row("local memory", fmt::format("{} ({})", mib(d.local_mem_bytes),
                                    d.local_mem_dedicated ? "dedicated" : "emulated in global memory"));
    row("max allocation", mib(d.max_alloc_bytes));
    row("max work-group size", std::to_string(d.max_work_group_size));
    row("preferred work-group multiple",
        d.preferred_work_group_multiple ? std::to_string(d.preferred_work_group_multiple) : "unknown");
    row("fp16 / fp64", fmt::format("{} / {}", d.fp16 ? "yes" : "no", d.fp64 ? "yes" : "no"));
    row("native vector width", fmt::format("float {}, double {}, half {}", d.native_vector_width_float,
                                           d.native_vector_width_double, d.native_vector_width_half));
    row("host-unified memory", d.host_unified_memory ? "yes" : "no");
    row("queue profiling",
        fmt::format("{} (timer resolution {} ns)", d.profiling ? "yes" : "no", d.timer_resolution_ns));
    row("PCI address",
        d.pci_address ? fmt::format("{} (via {})", *d.pci_address, d.pci_address_source) : "not exposed by the driver");
    return out;
}

// Throughput, energy and cost per workload (core/cost_model.hpp), shown when the run measured
// energy or was given a price: without either it would repeat the step times listed above.
void render_economics(std::string& out, const RunReport& r, const Palette& p) {
    const auto all = workload_economics(r);
    const bool any = std::any_of(all.begin(), all.end(),
                                 [&](const WorkloadEconomics& e) { return e.joules_per_step || prices_of(r).any(); });
    if (!any) return;
    out += "\n" + p.bold("Throughput, energy and cost (the fastest variant of each workload)") + "\n";
    for (const auto& e : all) {
        out += fmt::format("  {} ({}): {:.4g} {}s/s", e.pipeline, e.variant, e.throughput, e.unit);
        if (e.joules_per_step) {
            out += fmt::format(", {:.4g} J per step ({})", *e.joules_per_step, e.energy_scope);
            if (e.unit == "token")
                out += fmt::format(", {:.4g} J per 1,000 tokens", *e.joules_per_step / e.units_per_step * 1000);
        }
        if (e.cost_per_million)
            out += fmt::format(", ${:.4g} per million {}s", *e.cost_per_million, e.unit);
        else
            out += fmt::format(", no cost: {}", e.cost_basis);
        out += "\n";
    }
}

std::string render_text(const RunReport& r, const RenderOptions& o) {
    const Palette p{o.color};
    std::string out;
    out += p.bold(fmt::format("clprobe {} report", r.tool_version));
    if (!r.complete) out += " " + p.wrap("31", "(INCOMPLETE: the run was interrupted)");
    out += "\n";
    if (r.device)
        out += fmt::format("device: {} ({}, {}, driver {}), -d {}\n", r.device->name, r.device->type,
                           r.device->platform_name, r.device->driver_version, r.device->selector);
    out += fmt::format("host:   {} · {} · {} logical CPUs · {}\n", r.host.hostname, r.host.cpu_model,
                       r.host.logical_cpus, r.host.os);
    std::string mode =
        r.options.contains("mode") && r.options["mode"].is_string() ? r.options["mode"].get<std::string>() : "?";
    out += fmt::format("run:    {} · mode {} · {:.1f} s\n", r.created_at, mode, r.wall_seconds);
    if (r.provenance) out += fmt::format("build:  clprobe {}\n", provenance_summary(*r.provenance));
    if (r.drift) out += fmt::format("drift:  machine drift during the run: {}\n", drift_summary(*r.drift));
    if (const Prices prices = prices_of(r); prices.any())
        out += fmt::format("price:  {}{}{}\n", prices.per_hour ? fmt::format("${}/h", *prices.per_hour) : "",
                           prices.per_hour && prices.per_kwh ? " + " : "",
                           prices.per_kwh ? fmt::format("${}/kWh", *prices.per_kwh) : "");
    out += "\n";
    render_trust(out, r, o, p);
    out += "\n";
    out += render_trace_summary(r);
    render_findings(out, r, p);
    out += "\n";
    render_results(out, r, o, p);
    render_economics(out, r, p);
    if (o.verbose && !r.rules_not_evaluated.empty()) {
        out += "\n" + p.bold("Rules not evaluated") + "\n";
        for (const auto& s : r.rules_not_evaluated)
            out += fmt::format("  {}: {}\n", s.rule, s.reason);
    }
    return out;
}

}  // namespace clprobe

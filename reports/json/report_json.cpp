#include "json/report_json.hpp"

#include <cmath>
#include <limits>

#include "core/cost_model.hpp"
#include "json/machine_choice_json.hpp"

namespace clprobe {

using nlohmann::json;

// ---------------------------------------------------------------- writer

namespace {

json summary_to_json(const Summary& s) {
    return {{"n", s.n},           {"min", s.min}, {"max", s.max},           {"median", s.median},      {"mean", s.mean},
            {"stddev", s.stddev}, {"cv", s.cv},   {"ci95_low", s.ci95_low}, {"ci95_high", s.ci95_high}};
}

json measurement_to_json(const Measurement& m) {
    json j = {{"metric", m.metric},
              {"unit", m.unit},
              {"labels", m.labels},
              {"samples", m.samples},
              {"summary", summary_to_json(m.summary)},
              {"higher_is_better", m.higher_is_better},
              {"timer", to_string(m.timer)},
              {"iterations_per_sample", m.iterations_per_sample}};
    if (!m.note.empty()) j["note"] = m.note;
    return j;
}

}  // namespace

json device_info_to_json(const DeviceInfo& d) {
    json j = {{"selector", d.selector},
              {"platform_index", d.platform_index},
              {"device_index", d.device_index},
              {"flat_index", d.flat_index},
              {"platform_name", d.platform_name},
              {"platform_vendor", d.platform_vendor},
              {"platform_version", d.platform_version},
              {"name", d.name},
              {"vendor", d.vendor},
              {"type", d.type},
              {"driver_version", d.driver_version},
              {"device_version", d.device_version},
              {"opencl_c_version", d.opencl_c_version},
              {"compute_units", d.compute_units},
              {"max_clock_mhz", d.max_clock_mhz},
              {"global_mem_bytes", d.global_mem_bytes},
              {"global_mem_cache_bytes", d.global_mem_cache_bytes},
              {"global_mem_cacheline_bytes", d.global_mem_cacheline_bytes},
              {"local_mem_bytes", d.local_mem_bytes},
              {"local_mem_dedicated", d.local_mem_dedicated},
              {"max_alloc_bytes", d.max_alloc_bytes},
              {"max_work_group_size", d.max_work_group_size},
              {"preferred_work_group_multiple", d.preferred_work_group_multiple},
              {"fp16", d.fp16},
              {"fp64", d.fp64},
              {"host_unified_memory", d.host_unified_memory},
              {"profiling", d.profiling},
              {"timer_resolution_ns", d.timer_resolution_ns},
              {"native_vector_width_float", d.native_vector_width_float},
              {"native_vector_width_double", d.native_vector_width_double},
              {"native_vector_width_half", d.native_vector_width_half},
              {"pci_address", d.pci_address ? json(*d.pci_address) : json(nullptr)},
              {"pci_address_source", d.pci_address_source},
              {"extensions", d.extensions}};
    return j;
}

json finding_to_json(const Finding& f) {
    json evidence = json::array();
    for (const auto& e : f.evidence)
        evidence.push_back({{"metric", e.metric},
                            {"labels", e.labels},
                            {"value", e.value},
                            {"unit", e.unit},
                            {"expectation", e.expectation}});
    json out = {{"id", f.id},
                {"layer", f.layer},
                {"severity", to_string(f.severity)},
                {"title", f.title},
                {"evidence", evidence},
                {"suggestion", f.suggestion},
                {"estimated_gain", f.estimated_gain ? json(*f.estimated_gain) : json(nullptr)},
                {"gain_basis", f.gain_basis},
                {"confidence", f.confidence},
                {"kind", f.kind == FindingKind::ranked ? "ranked" : "note"},
                {"factor", f.factor ? json(*f.factor) : json(nullptr)},
                {"uncertain", f.uncertain},
                {"rank", f.rank}};
    if (!f.not_ranked.empty()) out["not_ranked"] = f.not_ranked;  // optional: only findings it rules out
    // Optional, as "note" is for measurements: only findings ranked by a pipeline share carry it.
    if (f.target)
        out["target"] = {
            {"pipeline", f.target->pipeline},
            {"stage", f.target->stage},
            {"stage_gain", f.target->stage_gain},
            {"pipeline_share", f.target->pipeline_share ? json(*f.target->pipeline_share) : json(nullptr)}};
    return out;
}

namespace {

json launch_to_json(const LaunchContext& l) {
    auto optional_int = [](const std::optional<int>& v) { return v ? json(*v) : json(nullptr); };
    return {{"launcher", l.launcher},
            {"rank", l.rank},
            {"local_rank", optional_int(l.local_rank)},
            {"local_size", optional_int(l.local_size)},
            {"size", optional_int(l.world_size)},
            {"took_turns", l.took_turns},
            {"waited", l.waited},
            {"turn_wait_seconds", l.turn_wait_seconds}};
}

}  // namespace

json provenance_to_json(const Provenance& p) {
    json j = json::object();
    for (const auto& [id, value] : provenance_fields(p))
        j[std::string(id)] = value;
    return j;
}

json trust_notes_to_json(const std::vector<TrustNote>& notes) {
    json out = json::array();
    for (const auto& n : notes)
        out.push_back({{"id", n.id}, {"warning", n.warning}, {"text", n.text}});
    return out;
}

json probe_result_to_json(const ProbeResult& p) {
    json measurements = json::array();
    for (const auto& m : p.measurements)
        measurements.push_back(measurement_to_json(m));
    json out = {{"id", p.id},
                {"layer", p.layer},
                {"title", p.title},
                {"status", to_string(p.status)},
                {"reason", p.reason},
                {"measurements", measurements},
                {"attributes", p.attributes},
                {"wall_seconds", p.wall_seconds}};
    if (p.host_load)
        out["host_load"] = {{"seconds", p.host_load->seconds},
                            {"cpus", p.host_load->cpus},
                            {"others_cpus", p.host_load->others_cpus},
                            {"steal_cpus", p.host_load->steal_cpus}};
    return out;
}

namespace {

json results_to_json(const std::vector<ProbeResult>& results) {
    json out = json::array();
    for (const auto& p : results)
        out.push_back(probe_result_to_json(p));
    return out;
}

json pass_to_json(const RunPass& p) {
    json out = {{"pass", p.number},           {"device", p.device},
                {"started_at", p.started_at}, {"wall_seconds", p.wall_seconds},
                {"complete", p.complete},     {"results", results_to_json(p.results)}};
    if (p.drift) out["drift"] = to_json(*p.drift);
    return out;
}

}  // namespace

json report_to_json(const RunReport& r) {
    const json results = results_to_json(r.results);
    json findings = json::array();
    for (const auto& f : r.findings)
        findings.push_back(finding_to_json(f));
    json skipped = json::array();
    for (const auto& s : r.rules_not_evaluated)
        skipped.push_back({{"rule", s.rule}, {"reason", s.reason}});
    json out = {{"schema", r.schema},
                {"schema_version", r.schema_version},
                {"tool_version", r.tool_version},
                {"created_at", r.created_at},
                {"command_line", r.command_line},
                {"options", r.options},
                {"host",
                 {{"hostname", r.host.hostname},
                  {"os", r.host.os},
                  {"kernel", r.host.kernel},
                  {"cpu_model", r.host.cpu_model},
                  {"logical_cpus", r.host.logical_cpus}}},
                {"device", r.device ? device_info_to_json(*r.device) : json(nullptr)},
                {"results", results},
                {"findings", findings},
                {"rules_not_evaluated", skipped},
                {"complete", r.complete},
                {"wall_seconds", r.wall_seconds}};
    // Optional, like "target": a report re-saved from one written before provenance has none.
    if (r.provenance) out["provenance"] = provenance_to_json(*r.provenance);
    // Optional too: set by the analysis, so a report that was never analysed has none to write.
    if (!r.trust_notes.empty()) out["trust_notes"] = trust_notes_to_json(r.trust_notes);
    // Written only under a launcher, so reports of single runs keep their exact shape.
    if (r.launch) out["launch"] = launch_to_json(*r.launch);
    // Written only when a device layer ran, so older reports and the fixtures keep their shape.
    if (r.drift) out["drift"] = to_json(*r.drift);
    // Derived, not read back (core/cost_model.hpp recomputes it from the measurements and the prices
    // in the options): the throughput, energy and cost per workload a dashboard reads, which the
    // text report shows. Written only when a workload pipeline was measured.
    json economics = json::array();
    for (const auto& e : workload_economics(r)) {
        json entry = {{"workload", e.workload}, {"pipeline", e.pipeline}, {"unit", e.unit}};
        entry.update(economics_to_json(e));
        economics.push_back(std::move(entry));
    }
    if (!economics.empty()) out["economics"] = std::move(economics);
    // Written only by `diagnose --passes N` with N >= 2, so single-pass reports keep their shape.
    if (!r.passes.empty()) {
        out["passes"] = json::array();
        for (const auto& p : r.passes)
            out["passes"].push_back(pass_to_json(p));
    }
    return out;
}

std::string report_to_json_text(const RunReport& report) {
    // error_handler::replace: a stray invalid UTF-8 byte in a driver string must not abort the
    // write of a whole report.
    return report_to_json(report).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

// ---------------------------------------------------------------- reader

namespace {

// Walks the JSON tree, carrying the field path for error messages.
class Field {
  public:
    Field(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

    [[noreturn]] void fail(const std::string& problem) const {
        throw ReportFormatError((path_.empty() ? std::string("report") : path_) + ": " + problem);
    }
    const json& raw() const { return j_; }
    const std::string& path() const { return path_; }

    Field at(const char* key) const {
        if (!j_.is_object()) fail("expected an object");
        auto it = j_.find(key);
        if (it == j_.end()) Field(j_, join(key)).fail("missing");
        return Field(*it, join(key));
    }
    bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
    Field index(std::size_t i) const { return Field(j_[i], path_ + "[" + std::to_string(i) + "]"); }

    const json& object() const {
        if (!j_.is_object()) fail("expected an object");
        return j_;
    }
    std::size_t array_size() const {
        if (!j_.is_array()) fail("expected an array");
        return j_.size();
    }
    std::string str() const {
        if (!j_.is_string()) fail("expected a string");
        return j_.get<std::string>();
    }
    bool boolean() const {
        if (!j_.is_boolean()) fail("expected true or false");
        return j_.get<bool>();
    }
    double number() const {
        if (!j_.is_number()) fail("expected a number");
        const double v = j_.get<double>();
        if (!std::isfinite(v)) fail("expected a finite number");
        return v;
    }
    double non_negative() const {
        const double v = number();
        if (v < 0) fail("expected a non-negative number");
        return v;
    }
    template <typename Int>
    Int integer(Int lo = std::numeric_limits<Int>::min(), Int hi = std::numeric_limits<Int>::max()) const {
        if (!j_.is_number_integer()) fail("expected an integer");
        if (j_.is_number_unsigned()) {
            const auto v = j_.get<std::uint64_t>();
            if (v > static_cast<std::uint64_t>(hi)) fail("integer out of range");
            if (lo > 0 && v < static_cast<std::uint64_t>(lo)) fail("integer out of range");
            return static_cast<Int>(v);
        }
        const auto v = j_.get<std::int64_t>();
        if (v < static_cast<std::int64_t>(lo) ||
            (v > 0 && static_cast<std::uint64_t>(v) > static_cast<std::uint64_t>(hi)))
            fail("integer out of range");
        return static_cast<Int>(v);
    }
    std::vector<std::string> strings() const {
        std::vector<std::string> out;
        for (std::size_t i = 0, n = array_size(); i < n; ++i)
            out.push_back(index(i).str());
        return out;
    }
    Labels labels() const {
        Labels out;
        for (const auto& [k, v] : object().items())
            out[k] = Field(v, join(k.c_str())).str();
        return out;
    }

  private:
    std::string join(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
    const json& j_;
    std::string path_;
};

Summary read_summary(const Field& f) {
    Summary s;
    s.n = f.at("n").integer<std::size_t>(1);
    s.min = f.at("min").non_negative();
    s.max = f.at("max").non_negative();
    s.median = f.at("median").non_negative();
    s.mean = f.at("mean").non_negative();
    s.stddev = f.at("stddev").non_negative();
    s.cv = f.at("cv").non_negative();
    s.ci95_low = f.at("ci95_low").number();
    s.ci95_high = f.at("ci95_high").number();
    if (s.min > s.median || s.median > s.max) f.fail("min <= median <= max does not hold");
    return s;
}

Measurement read_measurement(const Field& f) {
    Measurement m;
    m.metric = f.at("metric").str();
    if (m.metric.empty()) f.at("metric").fail("empty metric id");
    m.unit = f.at("unit").str();
    m.labels = f.at("labels").labels();
    const Field samples = f.at("samples");
    for (std::size_t i = 0, n = samples.array_size(); i < n; ++i)
        m.samples.push_back(samples.index(i).non_negative());
    if (m.samples.empty()) samples.fail("a measurement needs at least one sample");
    m.summary = read_summary(f.at("summary"));
    if (m.summary.n != m.samples.size()) f.at("summary").at("n").fail("does not match the sample count");
    m.higher_is_better = f.at("higher_is_better").boolean();
    const auto timer = timer_kind_from(f.at("timer").str());
    if (!timer) f.at("timer").fail("unknown timer '" + f.at("timer").str() + "'");
    m.timer = *timer;
    m.iterations_per_sample = f.at("iterations_per_sample").integer<std::int64_t>(1);
    if (f.has("note")) m.note = f.at("note").str();
    return m;
}

DeviceInfo read_device(const Field& f) {
    DeviceInfo d;
    d.selector = f.at("selector").str();
    d.platform_index = f.at("platform_index").integer<int>(0);
    d.device_index = f.at("device_index").integer<int>(0);
    d.flat_index = f.at("flat_index").integer<int>(0);
    d.platform_name = f.at("platform_name").str();
    d.platform_vendor = f.at("platform_vendor").str();
    d.platform_version = f.at("platform_version").str();
    d.name = f.at("name").str();
    d.vendor = f.at("vendor").str();
    d.type = f.at("type").str();
    d.driver_version = f.at("driver_version").str();
    d.device_version = f.at("device_version").str();
    d.opencl_c_version = f.at("opencl_c_version").str();
    d.compute_units = f.at("compute_units").integer<std::uint32_t>(0);
    d.max_clock_mhz = f.at("max_clock_mhz").integer<std::uint32_t>(0);
    d.global_mem_bytes = f.at("global_mem_bytes").integer<std::uint64_t>(0);
    d.global_mem_cache_bytes = f.at("global_mem_cache_bytes").integer<std::uint64_t>(0);
    d.global_mem_cacheline_bytes = f.at("global_mem_cacheline_bytes").integer<std::uint32_t>(0);
    d.local_mem_bytes = f.at("local_mem_bytes").integer<std::uint64_t>(0);
    d.local_mem_dedicated = f.at("local_mem_dedicated").boolean();
    d.max_alloc_bytes = f.at("max_alloc_bytes").integer<std::uint64_t>(0);
    d.max_work_group_size = f.at("max_work_group_size").integer<std::uint64_t>(0);
    d.preferred_work_group_multiple = f.at("preferred_work_group_multiple").integer<std::uint64_t>(0);
    d.fp16 = f.at("fp16").boolean();
    d.fp64 = f.at("fp64").boolean();
    d.host_unified_memory = f.at("host_unified_memory").boolean();
    d.profiling = f.at("profiling").boolean();
    d.timer_resolution_ns = f.at("timer_resolution_ns").non_negative();
    d.native_vector_width_float = f.at("native_vector_width_float").integer<std::uint32_t>(0);
    d.native_vector_width_double = f.at("native_vector_width_double").integer<std::uint32_t>(0);
    d.native_vector_width_half = f.at("native_vector_width_half").integer<std::uint32_t>(0);
    if (!f.at("pci_address").raw().is_null()) d.pci_address = f.at("pci_address").str();
    d.pci_address_source = f.at("pci_address_source").str();
    d.extensions = f.at("extensions").strings();
    return d;
}

Finding read_finding(const Field& f) {
    Finding out;
    out.id = f.at("id").str();
    out.layer = f.at("layer").str();
    const auto sev = severity_from(f.at("severity").str());
    if (!sev) f.at("severity").fail("unknown severity '" + f.at("severity").str() + "'");
    out.severity = *sev;
    out.title = f.at("title").str();
    const Field ev = f.at("evidence");
    for (std::size_t i = 0, n = ev.array_size(); i < n; ++i) {
        const Field e = ev.index(i);
        out.evidence.push_back({e.at("metric").str(), e.at("labels").labels(), e.at("value").number(),
                                e.at("unit").str(), e.at("expectation").str()});
    }
    out.suggestion = f.at("suggestion").str();
    if (!f.at("estimated_gain").raw().is_null()) {
        const double g = f.at("estimated_gain").number();
        if (g < 0 || g > 1) f.at("estimated_gain").fail("expected a fraction between 0 and 1");
        out.estimated_gain = g;
    }
    out.gain_basis = f.at("gain_basis").str();
    out.confidence = f.at("confidence").number();
    if (out.confidence < 0 || out.confidence > 1) f.at("confidence").fail("expected a value between 0 and 1");
    // "target" arrived after the first reports; their absence is not an error.
    if (f.has("target") && !f.at("target").raw().is_null()) {
        const Field t = f.at("target");
        GainTarget target;
        target.pipeline = t.at("pipeline").str();
        target.stage = t.at("stage").str();
        target.stage_gain = t.at("stage_gain").number();
        if (target.stage_gain < 0 || target.stage_gain > 1)
            t.at("stage_gain").fail("expected a fraction between 0 and 1");
        if (t.has("pipeline_share") && !t.at("pipeline_share").raw().is_null()) {
            const double share = t.at("pipeline_share").number();
            if (share < 0 || share > 1) t.at("pipeline_share").fail("expected a fraction between 0 and 1");
            target.pipeline_share = share;
        }
        out.target = std::move(target);
    }
    // "kind", "factor" and "uncertain" arrived with the split into ranked findings and notes; an
    // older report's findings with a gain were all ranked.
    if (f.has("kind")) {
        const std::string kind = f.at("kind").str();
        if (kind != "ranked" && kind != "note") f.at("kind").fail("expected \"ranked\" or \"note\"");
        out.kind = kind == "ranked" ? FindingKind::ranked : FindingKind::note;
    } else {
        out.kind = out.estimated_gain ? FindingKind::ranked : FindingKind::note;
    }
    if (f.has("factor") && !f.at("factor").raw().is_null()) {
        const double factor = f.at("factor").number();
        if (!(factor > 0)) f.at("factor").fail("expected a positive number");
        out.factor = factor;
    }
    if (f.has("uncertain")) out.uncertain = f.at("uncertain").boolean();
    if (f.has("not_ranked")) out.not_ranked = f.at("not_ranked").str();
    out.rank = f.at("rank").integer<int>(0);
    return out;
}

Provenance read_provenance(const Field& f) {
    f.object();
    Provenance p;
    p.clprobe_version = f.at("clprobe_version").str();
    p.git_commit = f.at("git_commit").str();
    p.build_type = f.at("build_type").str();
    p.compiler = f.at("compiler").str();
    p.hwloc_version = f.at("hwloc_version").str();
    p.icd_loader = f.at("icd_loader").str();
    p.openblas = f.at("openblas").str();
    p.fmt_version = f.at("fmt_version").str();
    p.cli11_version = f.at("cli11_version").str();
    p.nlohmann_json_version = f.at("nlohmann_json_version").str();
    return p;
}

// "trust_notes" arrived after the first reports: absent, the report has none until analyze().
std::vector<TrustNote> read_trust_notes(const Field& f) {
    std::vector<TrustNote> notes;
    for (std::size_t i = 0, n = f.array_size(); i < n; ++i) {
        const Field note = f.index(i);
        notes.push_back({note.at("id").str(), note.at("warning").boolean(), note.at("text").str()});
    }
    return notes;
}

// "launch" arrived with `clprobe fleet`; only reports written under a launcher carry it.
ProbeResult read_probe_result(const Field& p) {
    ProbeResult pr;
    pr.id = p.at("id").str();
    pr.layer = p.at("layer").str();
    pr.title = p.at("title").str();
    const auto status = probe_status_from(p.at("status").str());
    if (!status) p.at("status").fail("unknown status '" + p.at("status").str() + "'");
    pr.status = *status;
    pr.reason = p.at("reason").str();
    const Field ms = p.at("measurements");
    for (std::size_t k = 0, nm = ms.array_size(); k < nm; ++k)
        pr.measurements.push_back(read_measurement(ms.index(k)));
    pr.attributes = p.at("attributes").object();
    pr.wall_seconds = p.at("wall_seconds").non_negative();
    // Optional: reports of earlier versions, and probes that ran outside diagnose, have none.
    if (p.has("host_load")) {
        const Field l = p.at("host_load");
        pr.host_load = HostLoad{l.at("seconds").non_negative(), l.at("cpus").integer<int>(0),
                                l.at("others_cpus").non_negative(), l.at("steal_cpus").non_negative()};
    }
    return pr;
}

LaunchContext read_launch(const Field& f) {
    LaunchContext l;
    l.launcher = f.at("launcher").str();
    l.rank = f.at("rank").str();
    for (auto [key, out] : {std::pair{"local_rank", &l.local_rank}, std::pair{"local_size", &l.local_size}})
        if (!f.at(key).raw().is_null()) *out = f.at(key).integer<int>(0);
    // "size" arrived with trace reports per rank; older reports lack it.
    if (f.has("size") && !f.at("size").raw().is_null()) l.world_size = f.at("size").integer<int>(1);
    l.took_turns = f.at("took_turns").boolean();
    l.waited = f.at("waited").boolean();
    l.turn_wait_seconds = f.at("turn_wait_seconds").non_negative();
    return l;
}

}  // namespace

namespace {

std::optional<MachineDrift> read_drift(const Field& parent) {
    if (!parent.has("drift") || parent.at("drift").raw().is_null()) return std::nullopt;
    try {
        return machine_drift_from_json(parent.at("drift").raw());
    } catch (const std::invalid_argument& e) {
        throw ReportFormatError(std::string("drift.") + e.what());
    }
}

// Pass `expected` (2, 3, ...): numbered in the order they ran, so a hand-edited file with a pass
// missing or repeated is refused rather than compared as movement it is not.
RunPass read_pass(const Field& f, int expected) {
    f.object();
    RunPass p;
    p.number = f.at("pass").integer<int>(2);
    if (p.number != expected) f.at("pass").fail("expected pass " + std::to_string(expected));
    p.device = f.at("device").str();
    p.started_at = f.at("started_at").str();
    p.wall_seconds = f.at("wall_seconds").non_negative();
    p.complete = f.at("complete").boolean();
    const Field results = f.at("results");
    for (std::size_t i = 0, n = results.array_size(); i < n; ++i)
        p.results.push_back(read_probe_result(results.index(i)));
    p.drift = read_drift(f);
    return p;
}

}  // namespace

RunReport report_from_json(const json& j) {
    const Field root(j, "");
    root.object();
    RunReport r;
    r.schema = root.at("schema").str();
    if (r.schema != RunReport::schema_id)
        root.at("schema").fail("not a clprobe report (expected '" + std::string(RunReport::schema_id) + "', found '" +
                               r.schema + "')");
    r.schema_version = root.at("schema_version").integer<int>(1);
    if (r.schema_version != RunReport::current_schema_version)
        root.at("schema_version")
            .fail("version " + std::to_string(r.schema_version) + " is not supported (this clprobe reads version " +
                  std::to_string(RunReport::current_schema_version) + ")");
    r.tool_version = root.at("tool_version").str();
    // "provenance" arrived after the first reports: absent or null, it stays unknown.
    if (root.has("provenance") && !root.at("provenance").raw().is_null())
        r.provenance = read_provenance(root.at("provenance"));
    r.created_at = root.at("created_at").str();
    r.command_line = root.at("command_line").strings();
    r.options = root.at("options").object();
    const Field host = root.at("host");
    r.host.hostname = host.at("hostname").str();
    r.host.os = host.at("os").str();
    r.host.kernel = host.at("kernel").str();
    r.host.cpu_model = host.at("cpu_model").str();
    r.host.logical_cpus = host.at("logical_cpus").integer<std::uint32_t>(0);
    if (!root.at("device").raw().is_null()) r.device = read_device(root.at("device"));

    const Field results = root.at("results");
    for (std::size_t i = 0, n = results.array_size(); i < n; ++i) {
        r.results.push_back(read_probe_result(results.index(i)));
    }
    const Field findings = root.at("findings");
    for (std::size_t i = 0, n = findings.array_size(); i < n; ++i)
        r.findings.push_back(read_finding(findings.index(i)));
    const Field skipped = root.at("rules_not_evaluated");
    for (std::size_t i = 0, n = skipped.array_size(); i < n; ++i)
        r.rules_not_evaluated.push_back({skipped.index(i).at("rule").str(), skipped.index(i).at("reason").str()});
    if (root.has("trust_notes")) r.trust_notes = read_trust_notes(root.at("trust_notes"));
    r.complete = root.at("complete").boolean();
    r.wall_seconds = root.at("wall_seconds").non_negative();
    if (root.has("launch") && !root.at("launch").raw().is_null()) r.launch = read_launch(root.at("launch"));
    // "drift" arrived with the drift monitor: older reports have none and compare as before.
    r.drift = read_drift(root);
    if (root.has("passes")) {
        const Field passes = root.at("passes");
        for (std::size_t i = 0, n = passes.array_size(); i < n; ++i)
            r.passes.push_back(read_pass(passes.index(i), static_cast<int>(i) + 2));
    }
    return r;
}

ProbeResult probe_result_from_json(const json& j) {
    const Field root(j, "result");
    root.object();
    return read_probe_result(root);
}

RunReport report_from_json_text(std::string_view text) {
    if (text.empty()) throw ReportFormatError("empty file, not a report");
    json j;
    try {
        j = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        throw ReportFormatError("not valid JSON (byte " + std::to_string(e.byte) + ")");
    } catch (const json::exception&) {
        // nlohmann reports a number too large for a double (1e999) as out_of_range, not a parse error.
        throw ReportFormatError("not valid JSON: a number is out of range (not finite)");
    }
    return report_from_json(j);
}

}  // namespace clprobe

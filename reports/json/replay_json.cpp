#include "json/replay_json.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "json/report_json.hpp"
#include "rules/replay_findings.hpp"
#include "rules/replay_verdict.hpp"

namespace clprobe::replay {

using nlohmann::json;

namespace {

json summary_json(const Summary& s) {
    return {{"n", s.n}, {"min", s.min}, {"median", s.median}, {"max", s.max}, {"mean", s.mean}, {"cv", s.cv}};
}

json interval_json(const std::optional<SpeedupInterval>& s) {
    if (!s) return nullptr;
    return {{"estimate", s->estimate},
            {"low", s->low},
            {"high", s->high},
            {"share_at_least", s->share_at_least},
            {"samples", s->samples}};
}

json mode_json(const TimeMode& m) {
    return {{"median", m.median}, {"min", m.min}, {"max", m.max}, {"n", m.n}};
}

json modes_json(const std::optional<TimeModes>& m) {
    if (!m) return nullptr;
    return {{"fast", mode_json(m->fast)}, {"slow", mode_json(m->slow)}, {"split", m->split}};
}

json variant_json(const ReplayResult& r, const VariantResult& v) {
    const VariantResult& ref = r.variants[0];
    json j = {{"kind", to_string(v.kind)},
              {"label", v.label},
              {"local_size", v.local_size},
              {"options", v.options},
              {"samples_ns", v.samples_ns},
              {"reference_ns", v.reference_ns},
              {"first_round", v.first_round},
              {"summary_ns", v.summary ? summary_json(*v.summary) : json(nullptr)},
              {"outputs", to_string(v.check)},
              {"ranked_eligible", rankable(v)},
              {"failure", v.failure.empty() ? json(nullptr) : json(v.failure)}};
    const auto ratio = time_ratio(ref, v);
    j["median_speedup"] = ratio && *ratio > 0 ? json(1 / *ratio) : json(nullptr);
    if (v.kind != VariantKind::as_captured) {
        // Written for readers; `report` judges the samples again (rules/replay_verdict).
        const VariantVerdict verdict = judge_variant(r, v);
        j["speedup"] = interval_json(verdict.stated());
        j["first_round_speedup"] = interval_json(verdict.speedups.first);
        j["confirmation_speedup"] = interval_json(verdict.speedups.confirmation);
        j["fast_mode_speedup"] = interval_json(verdict.speedups.fast_mode);
        j["verdict"] = {{"ranked", verdict.ranked}, {"why", verdict.why}};
    }
    if (v.errors)
        j["errors"] = {{"max_abs", std::isfinite(v.errors->max_abs) ? json(v.errors->max_abs) : json("inf")},
                       {"max_rel", std::isfinite(v.errors->max_rel) ? json(v.errors->max_rel) : json("inf")},
                       {"differing", v.errors->differing},
                       {"where", v.errors->where}};
    else
        j["errors"] = nullptr;
    return j;
}

// The enum value whose name is `name`, else `fallback`.
template <class E, std::size_t N>
E enum_named(const json& name, const std::array<E, N>& values, E fallback) {
    if (!name.is_string()) return fallback;
    for (E e : values)
        if (to_string(e) == name.get<std::string>()) return e;
    return fallback;
}

template <class T>
T value_or(const json& j, const char* key, T fallback) {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return fallback;
    try {
        return it->get<T>();
    } catch (const json::exception&) {
        return fallback;
    }
}

double finite_or_inf(const json& v) {
    return v.is_number() ? v.get<double>() : std::numeric_limits<double>::infinity();
}

VariantResult variant_from_json(const json& j) {
    VariantResult v;
    v.kind = enum_named(j.value("kind", json()),
                        std::array{VariantKind::as_captured, VariantKind::local_size, VariantKind::build_options,
                                   VariantKind::placement},
                        VariantKind::as_captured);
    v.label = value_or<std::string>(j, "label", "");
    v.local_size = value_or<std::string>(j, "local_size", "");
    v.options = value_or<std::string>(j, "options", "");
    v.samples_ns = value_or<std::vector<double>>(j, "samples_ns", {});
    v.reference_ns = value_or<std::vector<double>>(j, "reference_ns", {});
    v.first_round = value_or<std::size_t>(j, "first_round", 0);
    // Pairs only where every sample has its reference and the first round lies within them.
    if (v.reference_ns.size() != v.samples_ns.size() || v.first_round > v.samples_ns.size()) {
        v.reference_ns.clear();
        v.first_round = 0;
    }
    try {
        if (!v.samples_ns.empty()) v.summary = summarize(v.samples_ns);
    } catch (const std::invalid_argument&) {
        v.samples_ns.clear();
    }
    v.check = enum_named(j.value("outputs", json()),
                         std::array{OutputCheck::identical, OutputCheck::within_tolerance, OutputCheck::changed,
                                    OutputCheck::not_checked},
                         OutputCheck::not_checked);
    v.failure = value_or<std::string>(j, "failure", "");
    if (const auto e = j.find("errors"); e != j.end() && e->is_object())
        v.errors = OutputErrors{finite_or_inf(e->value("max_abs", json())), finite_or_inf(e->value("max_rel", json())),
                                value_or<std::uint64_t>(*e, "differing", 0), value_or<std::string>(*e, "where", "")};
    return v;
}

Summary summary_from_json(const json& j) {
    Summary s;
    s.n = value_or<std::size_t>(j, "n", 0);
    s.min = value_or<double>(j, "min", 0);
    s.median = value_or<double>(j, "median", 0);
    s.max = value_or<double>(j, "max", 0);
    s.mean = value_or<double>(j, "mean", 0);
    s.cv = value_or<double>(j, "cv", 0);
    return s;
}

std::optional<TimeModes> modes_from_json(const json& j) {
    const auto mode = [&](const char* key) {
        TimeMode m;
        if (const auto it = j.find(key); it != j.end() && it->is_object()) {
            m.median = value_or<double>(*it, "median", 0);
            m.min = value_or<double>(*it, "min", 0);
            m.max = value_or<double>(*it, "max", 0);
            m.n = value_or<std::size_t>(*it, "n", 0);
        }
        return m;
    };
    TimeModes m{mode("fast"), mode("slow"), value_or<double>(j, "split", 0)};
    if (m.fast.n == 0 || m.slow.n == 0 || m.fast.median <= 0) return std::nullopt;
    return m;
}

ReplayResult replay_result_from_json(const json& j) {
    ReplayResult r;
    r.folder = value_or<std::string>(j, "capture", "");
    r.kernel = value_or<std::string>(j, "kernel", "");
    r.pid = value_or<long long>(j, "pid", 0);
    r.device = value_or<std::string>(j, "device", "");
    r.status = enum_named(j.value("status", json()),
                          std::array{ReplayStatus::replayed, ReplayStatus::skipped, ReplayStatus::invalid,
                                     ReplayStatus::device_not_available, ReplayStatus::build_failed,
                                     ReplayStatus::not_reproducible, ReplayStatus::failed},
                          ReplayStatus::failed);
    r.reason = value_or<std::string>(j, "reason", "");
    if (const auto t = j.find("traced_ns"); t != j.end() && t->is_number()) r.traced_ns = t->get<long long>();
    r.launch_ordinal = value_or<long long>(j, "launch_ordinal", 0);
    if (const auto t = j.find("traced_like"); t != j.end() && t->is_object()) r.traced_like = summary_from_json(*t);
    r.traced_like_basis = value_or<std::string>(j, "traced_like_basis", "");
    r.traced_like_spread = value_or<double>(j, "traced_like_spread", 0);
    if (const auto m = j.find("traced_modes"); m != j.end() && m->is_object()) r.traced_modes = modes_from_json(*m);
    r.reliable = value_or<bool>(j, "reliable", false);
    r.reliability = value_or<std::string>(j, "reliability", "");
    r.tolerance = value_or<double>(j, "tolerance", 0);
    r.build_ms = value_or<double>(j, "build_ms", 0);
    if (const auto vs = j.find("variants"); vs != j.end() && vs->is_array())
        for (const auto& v : *vs)
            if (v.is_object()) r.variants.push_back(variant_from_json(v));
    // A replayed result without its reference cannot be shown as one.
    if (r.status == ReplayStatus::replayed && r.variants.empty()) r.status = ReplayStatus::failed;
    if (const auto b = j.find("bandwidth"); b != j.end() && b->is_object()) {
        BandwidthCheck c;
        c.bytes = value_or<double>(*b, "bytes", 0);
        c.kernel_gbps = value_or<double>(*b, "kernel_gbps", 0);
        c.copy_gbps = value_or<double>(*b, "copy_gbps", 0);
        c.copy_method = value_or<std::string>(*b, "copy_method", "");
        c.api_copy_gbps = value_or<double>(*b, "api_copy_gbps", 0);
        c.kernel_copy_gbps = value_or<double>(*b, "kernel_copy_gbps", 0);
        c.copy_samples_ns = value_or<std::vector<double>>(*b, "copy_samples_ns", {});
        r.bandwidth = c;
    }
    return r;
}

}  // namespace

std::vector<ReplayResult> replay_results_from_json(const json& section) {
    std::vector<ReplayResult> out;
    if (!section.is_object() || section.value("schema", json()) != replay_schema) return out;
    const auto replays = section.find("replays");
    if (replays == section.end() || !replays->is_array()) return out;
    for (const auto& r : *replays)
        if (r.is_object()) out.push_back(replay_result_from_json(r));
    return out;
}

json replay_result_to_json(const ReplayResult& r) {
    json variants = json::array();
    for (const auto& v : r.variants)
        variants.push_back(variant_json(r, v));
    json j = {{"capture", r.folder},
              {"kernel", r.kernel},
              {"pid", r.pid},
              {"device", r.device},
              {"status", to_string(r.status)},
              {"reason", r.reason.empty() ? json(nullptr) : json(r.reason)},
              {"traced_ns", r.traced_ns ? json(*r.traced_ns) : json(nullptr)},
              {"launch_ordinal", r.launch_ordinal},
              {"traced_like", r.traced_like ? summary_json(*r.traced_like) : json(nullptr)},
              {"traced_like_basis", r.traced_like_basis},
              {"traced_like_spread", r.traced_like_spread},
              {"traced_modes", modes_json(r.traced_modes)},
              {"replay_modes", modes_json(replay_modes(r))},
              {"reliable", r.reliable},
              {"reliability", r.reliability},
              {"tolerance", r.tolerance},
              {"build_ms", r.build_ms},
              {"variants", variants}};
    if (r.bandwidth)
        j["bandwidth"] = {{"bytes", r.bandwidth->bytes},
                          {"kernel_gbps", r.bandwidth->kernel_gbps},
                          {"copy_gbps", r.bandwidth->copy_gbps},
                          {"copy_method", r.bandwidth->copy_method},
                          {"api_copy_gbps", r.bandwidth->api_copy_gbps},
                          {"kernel_copy_gbps", r.bandwidth->kernel_copy_gbps},
                          {"copy_samples_ns", r.bandwidth->copy_samples_ns}};
    else
        j["bandwidth"] = nullptr;
    return j;
}

json replay_to_json(const std::vector<ReplayResult>& results, const std::vector<Finding>& findings) {
    json replays = json::array(), found = json::array();
    for (const auto& r : results)
        replays.push_back(replay_result_to_json(r));
    for (const auto& f : findings)
        found.push_back(finding_to_json(f));
    return {{"schema", replay_schema},
            {"schema_version", replay_schema_version},
            {"replays", replays},
            {"findings", found}};
}

}  // namespace clprobe::replay

#include "json/replay_json.hpp"

#include "json/report_json.hpp"
#include "rules/replay_findings.hpp"

namespace clprobe::replay {

using nlohmann::json;

namespace {

json summary_json(const Summary& s) {
    return {{"n", s.n}, {"min", s.min}, {"median", s.median}, {"max", s.max}, {"mean", s.mean}, {"cv", s.cv}};
}

json variant_json(const VariantResult& ref, const VariantResult& v) {
    json j = {{"kind", to_string(v.kind)},
              {"label", v.label},
              {"local_size", v.local_size},
              {"options", v.options},
              {"samples_ns", v.samples_ns},
              {"summary_ns", v.summary ? summary_json(*v.summary) : json(nullptr)},
              {"outputs", to_string(v.check)},
              {"ranked_eligible", rankable(v)},
              {"failure", v.failure.empty() ? json(nullptr) : json(v.failure)}};
    const auto ratio = time_ratio(ref, v);
    j["speedup"] = ratio && *ratio > 0 ? json(1 / *ratio) : json(nullptr);
    if (v.errors)
        j["errors"] = {{"max_abs", std::isfinite(v.errors->max_abs) ? json(v.errors->max_abs) : json("inf")},
                       {"max_rel", std::isfinite(v.errors->max_rel) ? json(v.errors->max_rel) : json("inf")},
                       {"differing", v.errors->differing},
                       {"where", v.errors->where}};
    else
        j["errors"] = nullptr;
    return j;
}

}  // namespace

json replay_result_to_json(const ReplayResult& r) {
    json variants = json::array();
    for (const auto& v : r.variants)
        variants.push_back(variant_json(r.variants[0], v));
    json j = {{"capture", r.folder},
              {"kernel", r.kernel},
              {"pid", r.pid},
              {"device", r.device},
              {"status", to_string(r.status)},
              {"reason", r.reason.empty() ? json(nullptr) : json(r.reason)},
              {"traced_ns", r.traced_ns ? json(*r.traced_ns) : json(nullptr)},
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

#include "core/attention_facts.hpp"

#include "core/report.hpp"

namespace clprobe {

namespace {

constexpr const char* prefill_probe_id = "attention.prefill";
constexpr const char* shape_key = "shape_skipped";
constexpr const char* unfused_key = "unfused_skipped";

// A recorded skip: its sentence, or (a hand-edited value of another type) that value written out.
std::optional<std::string> skip_of(const ProbeResult& p, const char* key) {
    if (!p.attributes.is_object()) return std::nullopt;
    const auto it = p.attributes.find(key);
    if (it == p.attributes.end()) return std::nullopt;
    return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

void record_prefill_shape_skipped(ProbeResult& out, const std::string& why) {
    out.attributes[shape_key] = why;
}

void record_prefill_unfused_skipped(ProbeResult& out, const std::string& why) {
    out.attributes[unfused_key] = why;
}

PrefillSkipFacts prefill_skips_of(const RunReport& report) {
    const ProbeResult* p = find_result(report, prefill_probe_id);
    if (!p) return {};
    return {skip_of(*p, shape_key), skip_of(*p, unfused_key)};
}

}  // namespace clprobe

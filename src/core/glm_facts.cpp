#include "core/glm_facts.hpp"

#include <cmath>

#include "core/report.hpp"

namespace clprobe {

namespace {

std::optional<double> number_at(const nlohmann::json& attributes, const char* key) {
    const auto it = attributes.find(key);
    if (it == attributes.end() || !it->is_number()) return std::nullopt;
    const double v = it->get<double>();
    return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<GlmRunShape> shape_in(const nlohmann::json& attributes) {
    const auto rows = number_at(attributes, "rows");
    if (!rows || *rows <= 0) return std::nullopt;
    GlmRunShape s;
    s.rows = static_cast<std::uint64_t>(*rows);
    if (const auto cols = number_at(attributes, "cols"); cols && *cols > 0) s.cols = static_cast<std::uint32_t>(*cols);
    return s;
}

const nlohmann::json* attributes_of(const RunReport& report, std::string_view probe_id) {
    const ProbeResult* r = find_result(report, probe_id);
    return r && r->attributes.is_object() ? &r->attributes : nullptr;
}

}  // namespace

void write_glm_run_shape(ProbeResult& out, const GlmRunShape& shape) {
    out.attributes["rows"] = shape.rows;
    out.attributes["cols"] = shape.cols;
}

void write_glm_gradient_facts(ProbeResult& out, const GlmGradientFacts& facts) {
    write_glm_run_shape(out, facts.ran);
    out.attributes["rows_requested"] = facts.rows_requested;
    if (facts.rows_capped) out.attributes["rows_capped_from"] = facts.rows_requested;
    out.attributes["density"] = facts.density;
    if (facts.sparse_crossover_density) out.attributes["sparse_crossover_density"] = *facts.sparse_crossover_density;
}

std::optional<GlmRunShape> glm_run_shape_of(const RunReport& report, std::string_view probe_id) {
    const auto* attributes = attributes_of(report, probe_id);
    return attributes ? shape_in(*attributes) : std::nullopt;
}

std::optional<GlmGradientFacts> glm_gradient_facts_of(const RunReport& report) {
    const auto* attributes = attributes_of(report, glm_probe_ids::gradient);
    if (!attributes) return std::nullopt;
    GlmGradientFacts f;
    if (const auto requested = number_at(*attributes, "rows_requested"); requested && *requested > 0)
        f.rows_requested = static_cast<std::uint64_t>(*requested);
    f.ran = shape_in(*attributes).value_or(GlmRunShape{});
    f.rows_capped = attributes->contains("rows_capped_from");
    f.density = number_at(*attributes, "density").value_or(0);
    f.sparse_crossover_density = number_at(*attributes, "sparse_crossover_density");
    return f;
}

}  // namespace clprobe

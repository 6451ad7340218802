#pragma once
// What the GLM probes record about the run itself, beyond their measurements: the shape each ran
// and, for glm.gradient, how the requested shape was capped and where sparse storage stops paying.
// The probes write these with one call and the GLM rules read them with one call, so neither side
// spells attribute keys. The attributes keep their flat keys ("rows", "cols", "rows_requested",
// "rows_capped_from", "density", "sparse_crossover_density"): saved reports read back unchanged.
#include <cstdint>
#include <optional>
#include <string_view>

namespace clprobe {

struct ProbeResult;
struct RunReport;

// Probe ids of the GLM workload whose facts are read back.
namespace glm_probe_ids {
inline constexpr const char* gradient = "glm.gradient";
inline constexpr const char* pipeline = "glm.pipeline";
inline constexpr const char* host_blas = "glm.host_blas";
}  // namespace glm_probe_ids

// The rows and columns a GLM probe ran (after any cap to what the device holds).
struct GlmRunShape {
    std::uint64_t rows = 0;
    std::uint32_t cols = 0;
};

struct GlmGradientFacts {
    GlmRunShape ran;
    std::uint64_t rows_requested = 0;  // --glm-rows; 0 = unknown
    bool rows_capped = false;          // ran fewer rows than requested (memory)
    double density = 0;                // of the generated CSR data
    // The density where CSR and dense would take the same time (estimated from the two measured).
    std::optional<double> sparse_crossover_density;
};

void write_glm_run_shape(ProbeResult& out, const GlmRunShape& shape);
void write_glm_gradient_facts(ProbeResult& out, const GlmGradientFacts& facts);

// Readers for saved reports. The shape: nullopt when the probe is absent or its rows are missing or
// not positive. The gradient facts: nullopt only when glm.gradient is absent; a fact it lacks stays
// at its zero (rows_requested 0 = unknown) or nullopt.
std::optional<GlmRunShape> glm_run_shape_of(const RunReport& report, std::string_view probe_id);
std::optional<GlmGradientFacts> glm_gradient_facts_of(const RunReport& report);

}  // namespace clprobe

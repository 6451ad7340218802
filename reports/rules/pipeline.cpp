#include "rules/pipeline.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "core/cost_model.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {
namespace {

constexpr std::string_view stage_suffix = ".stage_time";

// A traced program is what the user runs; then the workload pipelines; the transfer layer's
// copy+kernel pipeline stands in only when neither ran.
constexpr std::array<std::string_view, 5> preference = {"app.pipeline", pipeline_ids::glm, pipeline_ids::attention,
                                                        pipeline_ids::network_glm_step, pipeline_ids::transfer};

std::string variant_of(const Labels& labels) {
    std::string out;
    for (const auto& [k, v] : labels) {
        if (k == "stage") continue;
        if (!out.empty()) out += ", ";
        out += k + "=" + v;
    }
    return out;
}

bool ends_with(std::string_view s, std::string_view suffix) {
    return s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::size_t preference_of(std::string_view id) {
    const auto it = std::find(preference.begin(), preference.end(), id);
    return static_cast<std::size_t>(it - preference.begin());
}

std::string seconds_text(double s) {
    if (s >= 1) return fmt::format("{:.3g} s", s);
    if (s >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
    return fmt::format("{:.3g} us", s * 1e6);
}

}  // namespace

bool is_workload_pipeline(std::string_view id) {
    return id != pipeline_ids::transfer;
}

GainTarget stage_target(std::string_view pipeline_id, Stage stage, double stage_gain) {
    return GainTarget{std::string(pipeline_id), stage_name(stage), stage_gain, std::nullopt};
}

double Pipeline::total_seconds() const {
    double t = 0;
    for (const auto& s : stages)
        t += s.seconds;
    return t;
}

std::optional<double> Pipeline::stage_seconds(std::string_view stage) const {
    for (const auto& s : stages)
        if (s.name == stage) return s.seconds;
    return std::nullopt;
}

std::vector<Pipeline> pipelines_of(const RunReport& report) {
    std::vector<Pipeline> out;
    for (const auto& probe : report.results) {
        if (probe.status != ProbeStatus::ok) continue;
        for (const auto& m : probe.measurements) {
            const auto stage = m.labels.find("stage");
            if (!ends_with(m.metric, stage_suffix) || stage == m.labels.end()) continue;
            // A hand-edited or damaged report may hold anything: only real durations count.
            if (!std::isfinite(m.summary.median) || m.summary.median < 0) continue;
            const std::string id = m.metric.substr(0, m.metric.size() - stage_suffix.size());
            const std::string variant = variant_of(m.labels);
            auto it = std::find_if(out.begin(), out.end(),
                                   [&](const Pipeline& p) { return p.id == id && p.variant == variant; });
            if (it == out.end()) {
                Labels labels = m.labels;
                labels.erase("stage");
                it = out.insert(out.end(), Pipeline{id, variant, {}, std::move(labels)});
            }
            it->stages.push_back({stage->second, m.summary.median});
        }
    }
    return out;
}

std::optional<Pipeline> reference_pipeline(const std::vector<Pipeline>& pipelines, std::string_view pipeline_id,
                                           std::string_view stage) {
    const Pipeline* best = nullptr;
    for (const auto& p : pipelines) {
        if (p.total_seconds() <= 0 || !p.stage_seconds(stage)) continue;
        if (!pipeline_id.empty()) {
            if (p.id == pipeline_id) return p;  // its first variant: the baseline
            continue;
        }
        if (!best || preference_of(p.id) < preference_of(best->id)) best = &p;
    }
    if (best) return *best;
    return std::nullopt;
}

void apply_pipeline_shares(const RunReport& report, std::vector<Finding>& findings) {
    const auto pipelines = pipelines_of(report);
    for (auto& f : findings) {
        if (!f.target) continue;
        auto& t = *f.target;
        t.stage_gain = std::clamp(t.stage_gain, 0.0, 1.0);
        const auto p = reference_pipeline(pipelines, t.pipeline, t.stage);
        if (!p) {
            // Without a measured pipeline the gain stays the stage's own, and says so.
            f.estimated_gain = t.stage_gain;
            f.gain_basis += fmt::format("; on the {} stage alone (no pipeline with that stage was measured)", t.stage);
            continue;
        }
        const double share = std::clamp(*p->stage_seconds(t.stage) / p->total_seconds(), 0.0, 1.0);
        t.pipeline = p->id;
        t.pipeline_share = share;
        f.estimated_gain = t.stage_gain * share;
        f.measured_share = is_workload_pipeline(p->id);
        f.gain_basis += fmt::format(
            "; {:.0f}% faster {} stage, which is {:.0f}% of the measured {} step{} ({})", t.stage_gain * 100, t.stage,
            share * 100, p->id, p->variant.empty() ? "" : " [" + p->variant + "]", seconds_text(p->total_seconds()));
        // Where sensors read the step, the time saved is energy saved too, if the machine draws
        // the same average power over the shorter step (a first-order estimate, said so).
        if (const auto energy = step_energy_of(report, p->id, p->labels); energy && f.estimated_gain)
            f.gain_basis += fmt::format(
                "; it would also save about {:.3g} J of the {:.3g} J measured {} on {} (same average power)",
                *f.estimated_gain * energy->joules, energy->joules,
                p->id == app_pipeline_id ? "over the program's lifetime" : "per step", energy->scope);
    }
}

}  // namespace clprobe

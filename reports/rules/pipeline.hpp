#pragma once
// Workload pipelines as the ranking sees them. A probe that times a pipeline stage by stage
// records metric "<pipeline>.stage_time" (seconds, label "stage", optionally "variant"); each
// variant is one pipeline, its time the sum of its stages' medians. The first variant a probe
// records is its baseline: the way a user would first write it, which the ranking's gains are
// shares of.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/pipeline_stages.hpp"
#include "core/report.hpp"

namespace clprobe {

struct PipelineStage {
    std::string name;
    double seconds = 0;
};

struct Pipeline {
    std::string id;       // e.g. "glm.pipeline"
    std::string variant;  // the remaining labels, "" when there are none
    std::vector<PipelineStage> stages;
    // The same labels as a map (all but "stage"): what finds the step's other measurements, such
    // as its energy, which `variant`'s "k=v" text does not.
    Labels labels;

    double total_seconds() const;
    std::optional<double> stage_seconds(std::string_view stage) const;
};

// A finding's gain aimed at one stage of a pipeline (core/pipeline_stages.hpp names both); an
// empty pipeline id means the first measured pipeline that has the stage.
GainTarget stage_target(std::string_view pipeline_id, Stage stage, double stage_gain);

// Every pipeline in the report, in the order their first stage was recorded.
std::vector<Pipeline> pipelines_of(const RunReport& report);

// The pipeline a finding's gain is a share of: the baseline variant of `pipeline_id`, or, when
// that is empty, of the first pipeline in ranking preference (workload pipelines before the
// transfer one) that has `stage`. Empty when no such pipeline was measured.
std::optional<Pipeline> reference_pipeline(const std::vector<Pipeline>& pipelines, std::string_view pipeline_id,
                                           std::string_view stage);

// A step a user runs (a workload pipeline, a traced program): false only for the transfer
// layer's stand-in copy+kernel step, whose shares say nothing about the user's work.
bool is_workload_pipeline(std::string_view id);

// Turns each finding's local gain on one stage into a share of its pipeline's measured time
// (Finding::target), marking it measured_share when the pipeline is a workload's; findings
// without a target keep their gain.
void apply_pipeline_shares(const RunReport& report, std::vector<Finding>& findings);

}  // namespace clprobe

#pragma once
// The measured pipelines and their stages, named once. Probes record "<pipeline>.stage_time" with
// label stage=<name>; rules aim a finding's gain at a (pipeline, stage) pair (GainTarget). Both
// sides take the ids and names from here, so a renamed stage cannot silently stop a rule from
// finding its pipeline. The strings are the report's, unchanged.
//
// One Stage enum rather than one per pipeline: the same stage (upload, download, sync) exists in
// several pipelines, and a rule with no pipeline of its own aims at "the first measured pipeline
// that has this stage" (reports/rules/pipeline.hpp), which needs one vocabulary across them.
#include <array>
#include <optional>
#include <string_view>

namespace clprobe {

enum class Stage { upload, compute, download, host, sync, prefill, decode, allreduce, update };

// The stable name of a stage, as it appears in the stage label and in GainTarget::stage.
std::string_view to_string(Stage stage);
const char* stage_name(Stage stage);  // the same, as a C string for labels and targets
std::optional<Stage> stage_from(std::string_view name);

// Pipeline ids: the metric prefix of "<id>.stage_time" and "<id>.step_time".
namespace pipeline_ids {
inline constexpr const char* glm = "glm.pipeline";
inline constexpr const char* attention = "attention.pipeline";
inline constexpr const char* transfer = "transfer.pipeline";
inline constexpr const char* network_glm_step = "network.glm_step";
}  // namespace pipeline_ids

// Each pipeline's stages in the order its probe records them.
inline constexpr std::array<Stage, 5> glm_pipeline_stages = {Stage::upload, Stage::compute, Stage::download,
                                                             Stage::host, Stage::sync};
inline constexpr std::array<Stage, 4> attention_pipeline_stages = {Stage::upload, Stage::prefill, Stage::decode,
                                                                   Stage::download};
inline constexpr std::array<Stage, 3> transfer_pipeline_stages = {Stage::upload, Stage::compute, Stage::download};
inline constexpr std::array<Stage, 5> network_glm_step_stages = {Stage::compute, Stage::download, Stage::allreduce,
                                                                 Stage::update, Stage::upload};

}  // namespace clprobe

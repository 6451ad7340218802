#include "core/pipeline_stages.hpp"

#include <utility>

namespace clprobe {

namespace {

// The one table of stage names; the report's strings.
constexpr std::pair<Stage, const char*> stage_table[] = {
    {Stage::upload, "upload"}, {Stage::compute, "compute"},     {Stage::download, "download"},
    {Stage::host, "host"},     {Stage::sync, "sync"},           {Stage::prefill, "prefill"},
    {Stage::decode, "decode"}, {Stage::allreduce, "allreduce"}, {Stage::update, "update"},
};

}  // namespace

const char* stage_name(Stage stage) {
    for (const auto& [s, name] : stage_table)
        if (s == stage) return name;
    return "";
}

std::string_view to_string(Stage stage) {
    return stage_name(stage);
}

std::optional<Stage> stage_from(std::string_view name) {
    for (const auto& [s, n] : stage_table)
        if (name == n) return s;
    return std::nullopt;
}

}  // namespace clprobe

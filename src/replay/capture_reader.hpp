#pragma once
// Reads capture folders (docs/replay.md, "Capture format"). Captures are untrusted input (any
// program's records folder): every field is checked and a bad one becomes a one-line problem of
// that capture, never an exception out of the reader or a read past a file's end.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "replay/capture.hpp"

namespace clprobe::replay {

// Every capture under `replay_dir` (one folder per capture), in folder-name order. Folders without
// capture.json are incomplete (the layer writes it last) and left out.
std::vector<CaptureLoad> read_captures(const std::filesystem::path& replay_dir);

// One folder's capture.json, checked against the files beside it.
CaptureLoad read_capture(const std::filesystem::path& folder);

// The checks on parsed JSON alone plus the files' lengths under `folder`; throws CaptureError.
Capture parse_capture(const nlohmann::json& j, const std::filesystem::path& folder);

// A captured argument against the built kernel's argument type name (clGetKernelArgInfo's
// CL_KERNEL_ARG_TYPE_NAME): an `image..._t` must be captured as an image and a `sampler_t` as a
// sampler, and only they (a layer whose driver gave no argument info may have kept a sampler's
// handle as a scalar: setting it would hand the driver a pointer of another process). The one-line
// problem, or nullopt.
std::optional<std::string> arg_kind_mismatch(const CapturedArg& a, std::string_view type_name);

class CaptureError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

}  // namespace clprobe::replay

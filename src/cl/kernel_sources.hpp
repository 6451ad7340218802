#pragma once
// Where kernel sources come from: the copies embedded in the binary (default) or a folder given
// with --kernel-dir, so a kernel can be edited and re-run without rebuilding clprobe.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace clprobe {

class KernelSources {
  public:
    static KernelSources embedded();
    // Throws std::runtime_error when `dir` is not a folder holding at least one .cl file.
    static KernelSources from_directory(const std::filesystem::path& dir);

    // Throws std::runtime_error naming the file when it does not exist. A line `#include "x.clh"`
    // (a path relative to the kernel folder) is replaced by that file's text: embedded sources
    // have no folder the OpenCL compiler could search, so shared preambles are resolved here.
    std::string source(const std::string& relative_path) const;
    std::vector<std::string> files() const;  // sorted relative paths of the .cl programs (not the .clh parts)
    std::string origin() const;              // "embedded" or the folder

  private:
    std::string raw_source(const std::string& relative_path) const;

    std::optional<std::filesystem::path> dir_;
};

}  // namespace clprobe

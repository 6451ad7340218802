#pragma once
// Reads the kernel's text files (/proc, /sys) under a root folder: "" on the live machine, a
// synthetic tree in tests. A file that is missing or unreadable is nullopt, never an error: VMs and
// containers routinely lack cpufreq, DMI or cgroup files.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace clprobe {

class SystemFiles {
  public:
    explicit SystemFiles(std::string root = {}) : root_(std::move(root)) {}

    // The whole file (sysfs and procfs report size 0, so it is read to the end).
    std::optional<std::string> read(std::string_view path) const;
    // Entry names in a folder, sorted; empty when it is missing.
    std::vector<std::string> list(std::string_view dir) const;
    bool exists(std::string_view path) const;

  private:
    std::string full(std::string_view path) const { return root_ + std::string(path); }
    std::string root_;
};

}  // namespace clprobe

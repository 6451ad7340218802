#pragma once
// The workloads of the kernel layer (--workloads). A workload's probe ids and metric ids begin
// with its name and a dot ("glm.gradient", "attention.decode.time"), which is how reports tell a
// workload's figures from the layers' ceilings and microbenchmarks.
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

inline const std::vector<std::string>& known_workloads() {
    static const std::vector<std::string> workloads{"glm", "attention"};
    return workloads;
}

// Whether a probe or metric id belongs to a workload ("glm.fit" yes, "kernel.peak.fp32" no).
inline bool is_workload_id(std::string_view id) {
    for (const auto& w : known_workloads())
        if (id.size() > w.size() && id.substr(0, w.size()) == w && id[w.size()] == '.') return true;
    return false;
}

}  // namespace clprobe

#include "compare/metric_key.hpp"

namespace clprobe {

namespace {

// Labels that describe the circumstances of a number rather than what was measured.
const std::vector<std::string> volatile_labels = {"driver", "driver_version"};

}  // namespace

std::string pairing_key(const Measurement& m) {
    Labels key = m.labels;
    for (const auto& v : volatile_labels)
        key.erase(v);
    return m.metric + "{" + labels_to_string(key) + "}";
}

bool is_headline(const Measurement& m) {
    return m.labels.empty() && m.timer != TimerKind::none;
}

}  // namespace clprobe

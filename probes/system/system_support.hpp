#pragma once
// What the system layer's probes share: facts as one-sample measurements (so `compare` lines them
// up across machines), and the "unknown" marker for attributes the host does not expose.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/report.hpp"

namespace clprobe {

// A fact read from the system, not timed: one sample, TimerKind::none. As for every fact in a
// report, higher_is_better is true and means nothing: `compare` reports facts as same or changed.
Measurement fact(std::string metric, std::string unit, double value);

// A missing file is a missing fact, recorded as this string rather than an error.
inline constexpr const char* unknown = "unknown";

// The value, or "unknown".
template <typename T>
nlohmann::json or_unknown(const std::optional<T>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json(unknown);
}
inline nlohmann::json or_unknown(const std::string& s) {
    return s.empty() ? nlohmann::json(unknown) : nlohmann::json(s);
}

double to_gib(std::uint64_t bytes);

}  // namespace clprobe

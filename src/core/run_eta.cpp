#include "core/run_eta.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace clprobe {

RunEta::RunEta(std::vector<double> expected_seconds) : expected_(std::move(expected_seconds)) {
    for (auto& e : expected_)
        e = std::max(0.0, e);
}

void RunEta::finished(std::size_t index, double actual_seconds) {
    if (index >= expected_.size()) return;
    done_expected_ += expected_[index];
    done_actual_ += std::max(0.0, actual_seconds);
}

double RunEta::pace() const {
    // Until a second's worth of expectation has run, one fast or slow probe says little; the
    // clamp keeps one outlier (a cold compiler, a skipped probe) from swinging the estimate wildly.
    if (done_expected_ < 1.0) return 1.0;
    return std::clamp(done_actual_ / done_expected_, 0.25, 4.0);
}

double RunEta::seconds_left(std::size_t next) const {
    double left = 0;
    for (std::size_t i = next; i < expected_.size(); ++i)
        left += expected_[i];
    return left * pace();
}

std::string duration_text(double seconds) {
    if (!std::isfinite(seconds) || seconds < 1) return "<1 s";
    const auto s = static_cast<long long>(std::lround(seconds));
    if (s < 60) return fmt::format("{} s", s);
    return fmt::format("{} min {} s", s / 60, s % 60);
}

}  // namespace clprobe

#include "system/system_support.hpp"

namespace clprobe {

Measurement fact(std::string metric, std::string unit, double value) {
    return make_measurement(std::move(metric), std::move(unit), {}, {value}, TimerKind::none);
}

double to_gib(std::uint64_t bytes) {
    return static_cast<double>(bytes) / static_cast<double>(1ull << 30);
}

}  // namespace clprobe

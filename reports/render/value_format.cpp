#include "render/value_format.hpp"

#include <fmt/core.h>

#include <cmath>

namespace clprobe::units {

namespace {

struct Prefix {
    double factor;  // one of this unit in the base unit
    const char* name;
};

// Largest first: the first whose factor fits the value is used.
constexpr Prefix seconds[] = {{1, "s"}, {1e-3, "ms"}, {1e-6, "us"}, {1e-9, "ns"}};
constexpr Prefix bytes[] = {{1024.0 * 1024 * 1024, "GiB"}, {1024.0 * 1024, "MiB"}, {1024, "KiB"}, {1, "B"}};
constexpr Prefix bytes_per_s[] = {{1e3, "TB/s"}, {1, "GB/s"}, {1e-3, "MB/s"}, {1e-6, "KB/s"}};
constexpr Prefix flops[] = {{1e3, "TFLOP/s"}, {1, "GFLOP/s"}, {1e-3, "MFLOP/s"}};
constexpr Prefix iops[] = {{1e3, "TIOP/s"}, {1, "GIOP/s"}, {1e-3, "MIOP/s"}};  // integer operations

// The scale of the unit given, in its family's base unit, and that family; nullptr for units
// printed as they are.
template <std::size_t N>
const Prefix* in(const Prefix (&family)[N], std::string_view unit, double& scale) {
    for (const auto& p : family)
        if (unit == p.name) {
            scale = p.factor;
            return family;
        }
    return nullptr;
}

std::string trim_zeros(std::string text) {
    if (text.find('.') == std::string::npos || text.find('e') != std::string::npos) return text;
    while (text.back() == '0')
        text.pop_back();
    if (text.back() == '.') text.pop_back();
    return text;
}

template <std::size_t N>
std::string rescaled(double base, const Prefix (&family)[N], bool compact) {
    const Prefix* chosen = &family[N - 1];
    for (const auto& p : family)
        if (std::fabs(base) >= p.factor * 0.9995) {
            chosen = &p;
            break;
        }
    const std::string digits = sig3(base / chosen->factor);
    return (compact ? trim_zeros(digits) : digits) + " " + chosen->name;
}

}  // namespace

std::string sig3(double v) {
    if (v == 0 || !std::isfinite(v)) return v == 0 ? "0" : fmt::format("{}", v);
    const double a = std::fabs(v);
    if (a >= 1e6 || a < 1e-3) return fmt::format("{:.2e}", v);
    const int magnitude = static_cast<int>(std::floor(std::log10(a) + 1e-9));
    const int decimals = std::max(0, 2 - magnitude);
    std::string out = fmt::format("{:.{}f}", v, decimals);
    // Rounding can carry into another digit (9.996 -> "10.00"): print it again one decimal shorter.
    if (decimals > 0 && std::fabs(std::stod(out)) >= std::pow(10.0, magnitude + 1))
        out = fmt::format("{:.{}f}", v, decimals - 1);
    return out;
}

bool is_bytes(std::string_view unit) {
    return unit == "B" || unit == "bytes" || unit == "byte" || unit == "KiB" || unit == "MiB" || unit == "GiB";
}

std::string format(double value, std::string_view unit, bool compact) {
    if (value == 0 && compact) return "0";  // an axis's origin, in any unit
    double scale = 1;
    if (unit == "bytes" || unit == "byte") unit = "B";
    if (in(seconds, unit, scale)) return rescaled(value * scale, seconds, compact);
    if (in(bytes, unit, scale)) return rescaled(value * scale, bytes, compact);
    if (in(bytes_per_s, unit, scale)) return rescaled(value * scale, bytes_per_s, compact);
    if (in(flops, unit, scale)) return rescaled(value * scale, flops, compact);
    if (in(iops, unit, scale)) return rescaled(value * scale, iops, compact);
    const std::string digits = compact ? trim_zeros(sig3(value)) : sig3(value);
    if (unit.empty()) return digits;
    return digits + (unit == "%" || unit == "x" ? "" : " ") + std::string(unit);
}

}  // namespace clprobe::units

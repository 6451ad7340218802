#include "core/pcie_link.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdlib>
#include <regex>

namespace clprobe {

namespace {

constexpr PcieGeneration generations[] = {
    {1, 2.5, 8.0 / 10},     {2, 5.0, 8.0 / 10},     {3, 8.0, 128.0 / 130},
    {4, 16.0, 128.0 / 130}, {5, 32.0, 128.0 / 130}, {6, 64.0, 236.0 / 256},
};

}  // namespace

std::optional<PcieGeneration> pcie_generation(double gt_per_s) {
    for (const auto& g : generations)
        if (std::abs(gt_per_s - g.gt_per_s) <= 0.01 * g.gt_per_s) return g;
    return std::nullopt;
}

std::optional<double> pcie_link_bandwidth(double gt_per_s, int width) {
    const auto g = pcie_generation(gt_per_s);
    if (!g || width < 1) return std::nullopt;
    return g->gt_per_s * g->efficiency * width / 8.0;
}

std::optional<double> parse_link_speed(const std::string& text) {
    // The number is parsed by hand: strtod follows the locale's decimal point, sysfs does not.
    static const std::regex speed(R"(\s*(\d+)(?:\.(\d+))?\s*GT/s.*)", std::regex::icase);
    std::smatch m;
    if (!std::regex_match(text, m, speed)) return std::nullopt;
    double value = std::stod(m[1].str());
    if (m[2].matched) value += std::stod(m[2].str()) / std::pow(10.0, static_cast<double>(m[2].length()));
    if (!pcie_generation(value)) return std::nullopt;
    return value;
}

std::optional<int> parse_link_width(const std::string& text) {
    static const std::regex width(R"(\s*x?(\d{1,2})\s*)", std::regex::icase);
    std::smatch m;
    if (!std::regex_match(text, m, width)) return std::nullopt;
    const int w = std::stoi(m[1].str());
    if (w < 1) return std::nullopt;
    return w;
}

std::string describe_link(std::optional<double> gt_per_s, std::optional<int> width) {
    const auto g = gt_per_s ? pcie_generation(*gt_per_s) : std::nullopt;
    return fmt::format("PCIe gen{} x{}", g ? std::to_string(g->generation) : "?", width ? std::to_string(*width) : "?");
}

}  // namespace clprobe

#include "core/byte_size.hpp"

#include <cctype>
#include <charconv>

#include <fmt/core.h>

namespace clprobe {

std::string format_bytes(std::uint64_t bytes) {
    if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
    if (bytes >= (1ull << 20)) return fmt::format("{:.4g} MiB", static_cast<double>(bytes) / (1 << 20));
    if (bytes >= (1ull << 10)) return fmt::format("{:.4g} KiB", static_cast<double>(bytes) / (1 << 10));
    return fmt::format("{} B", bytes);
}

std::string bytes_text(double b) {
    if (b >= double(1 << 30)) return fmt::format("{:.3g} GiB", b / double(1 << 30));
    if (b >= double(1 << 20)) return fmt::format("{:.3g} MiB", b / double(1 << 20));
    if (b >= double(1 << 10)) return fmt::format("{:.3g} KiB", b / double(1 << 10));
    return fmt::format("{:.0f} B", b);
}

std::optional<std::uint64_t> parse_byte_size(std::string_view text) {
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end == text.data()) return std::nullopt;
    std::string unit(end, text.data() + text.size());
    for (char& c : unit)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    int shift = 0;
    if (unit.empty() || unit == "B")
        shift = 0;
    else if (unit == "K" || unit == "KB" || unit == "KIB")
        shift = 10;
    else if (unit == "M" || unit == "MB" || unit == "MIB")
        shift = 20;
    else if (unit == "G" || unit == "GB" || unit == "GIB")
        shift = 30;
    else if (unit == "T" || unit == "TB" || unit == "TIB")
        shift = 40;
    else
        return std::nullopt;
    if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
    return value << shift;
}

}  // namespace clprobe

#include "core/byte_size.hpp"

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

}  // namespace clprobe

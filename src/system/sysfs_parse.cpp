#include "system/sysfs_parse.hpp"

#include "core/text.hpp"

namespace clprobe {

std::optional<std::string> bracketed_choice(std::string_view text) {
    const auto open = text.find('[');
    const auto close = text.find(']', open == std::string_view::npos ? 0 : open);
    if (open == std::string_view::npos || close == std::string_view::npos || close <= open + 1) return std::nullopt;
    return std::string(text.substr(open + 1, close - open - 1));
}

std::optional<std::uint64_t> parse_cache_size(std::string_view text) {
    text = text::trim(text);
    if (text.empty()) return std::nullopt;
    std::uint64_t scale = 1;
    switch (text.back()) {
        case 'K':
            scale = 1ull << 10;
            break;
        case 'M':
            scale = 1ull << 20;
            break;
        case 'G':
            scale = 1ull << 30;
            break;
        default:
            break;
    }
    if (scale != 1) text.remove_suffix(1);
    const auto n = text::to_u64(text);
    if (!n || *n == 0 || *n > (1ull << 40) / scale) return std::nullopt;
    return *n * scale;
}

std::optional<double> khz_text_to_mhz(std::string_view text) {
    const auto khz = text::to_u64(text);
    if (!khz || *khz == 0) return std::nullopt;
    return static_cast<double>(*khz) / 1000.0;
}

}  // namespace clprobe

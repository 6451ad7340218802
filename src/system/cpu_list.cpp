#include "system/cpu_list.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace clprobe {

namespace {
// Linux's NR_CPUS tops out at 8192; anything larger is a malformed file, not a bigger machine,
// and must not make us allocate millions of entries.
constexpr std::uint64_t max_cpu = 1 << 16;
}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view text) {
    std::vector<int> cpus;
    text = text::trim(text);
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text::trim(text.substr(0, comma));
        text = comma == std::string_view::npos ? std::string_view{} : text::trim(text.substr(comma + 1));
        // "0,,1", ",1" or a trailing comma.
        if (item.empty() || (comma != std::string_view::npos && text.empty())) return std::nullopt;
        const auto dash = item.find('-');
        const auto first = text::to_u64(item.substr(0, dash));
        const auto last = dash == std::string_view::npos ? first : text::to_u64(item.substr(dash + 1));
        if (!first || !last || *last < *first || *last >= max_cpu) return std::nullopt;
        for (auto c = *first; c <= *last; ++c)
            cpus.push_back(static_cast<int>(c));
    }
    std::sort(cpus.begin(), cpus.end());
    cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
    return cpus;
}

std::string format_cpu_list(const std::vector<int>& cpus) {
    std::string out;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!out.empty()) out += ',';
        out += std::to_string(cpus[i]);
        if (j > i) out += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return out;
}

}  // namespace clprobe

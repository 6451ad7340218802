#include "core/device_selector.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "core/text.hpp"

namespace clprobe {

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

bool all_digits(std::string_view s) {
    return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

int parse_index(std::string_view digits, std::string_view whole) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size())
        throw SelectorError("device selector '" + std::string(whole) + "': index out of range");
    return value;
}

}  // namespace

DeviceSelector parse_device_selector(std::string_view text) {
    const std::string_view s = text::trim(text);
    if (s.empty()) throw SelectorError("empty device selector");

    if (const auto colon = s.find(':'); colon != std::string_view::npos) {
        const auto p = text::trim(s.substr(0, colon)), d = text::trim(s.substr(colon + 1));
        if (all_digits(p) && all_digits(d)) return SelectByPosition{parse_index(p, s), parse_index(d, s)};
        // Something index-like on either side ("1:", ":0", "1:x", "0:1:2") is a typo, not a name;
        // names may hold colons themselves (ROCm's "gfx90a:sramecc+:xnack-").
        const bool index_like = all_digits(p) || all_digits(d) || p.empty() || d.empty();
        if (index_like)
            throw SelectorError("malformed device selector '" + std::string(s) +
                                "': expected P:D with two non-negative integers");
    }
    if (all_digits(s)) return SelectByFlatIndex{parse_index(s, s)};
    if (s.front() == '-' && all_digits(s.substr(1)))
        throw SelectorError("malformed device selector '" + std::string(s) + "': indices are non-negative");
    const std::string l = lower(s);
    if (l == "gpu" || l == "cpu" || l == "accelerator") return SelectByType{l};
    return SelectByName{std::string(s)};
}

std::optional<std::size_t> match_device(const DeviceSelector& selector, const std::vector<DeviceListing>& devices) {
    auto find_if = [&](auto pred) -> std::optional<std::size_t> {
        for (std::size_t i = 0; i < devices.size(); ++i)
            if (pred(devices[i])) return i;
        return std::nullopt;
    };
    return std::visit(
        [&](const auto& sel) -> std::optional<std::size_t> {
            using T = std::decay_t<decltype(sel)>;
            if constexpr (std::is_same_v<T, SelectDefault>) {
                if (auto gpu = find_if([](const DeviceListing& d) { return d.type == "gpu"; })) return gpu;
                return devices.empty() ? std::nullopt : std::optional<std::size_t>(0);
            } else if constexpr (std::is_same_v<T, SelectByPosition>) {
                return find_if([&](const DeviceListing& d) {
                    return d.platform_index == sel.platform && d.device_index == sel.device;
                });
            } else if constexpr (std::is_same_v<T, SelectByFlatIndex>) {
                return find_if([&](const DeviceListing& d) { return d.flat_index == sel.index; });
            } else if constexpr (std::is_same_v<T, SelectByType>) {
                return find_if([&](const DeviceListing& d) { return d.type == sel.type; });
            } else {
                // Device name first; then "platform device" so "pocl" or "nvidia" also work.
                const std::string want = lower(sel.substring);
                if (auto by_name = find_if(
                        [&](const DeviceListing& d) { return lower(d.device_name).find(want) != std::string::npos; }))
                    return by_name;
                return find_if([&](const DeviceListing& d) {
                    return lower(d.platform_name + " " + d.device_name).find(want) != std::string::npos;
                });
            }
        },
        selector);
}

std::string describe(const DeviceSelector& selector) {
    return std::visit(
        [](const auto& sel) -> std::string {
            using T = std::decay_t<decltype(sel)>;
            if constexpr (std::is_same_v<T, SelectDefault>)
                return "default (first GPU, else first device)";
            else if constexpr (std::is_same_v<T, SelectByPosition>)
                return "platform " + std::to_string(sel.platform) + ", device " + std::to_string(sel.device);
            else if constexpr (std::is_same_v<T, SelectByFlatIndex>)
                return "device #" + std::to_string(sel.index);
            else if constexpr (std::is_same_v<T, SelectByType>)
                return "first " + sel.type + " device";
            else
                return "name containing '" + sel.substring + "'";
        },
        selector);
}

}  // namespace clprobe

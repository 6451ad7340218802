#include "core/text.hpp"

#include <charconv>
#include <cmath>

namespace clprobe::text {

namespace {
bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

template <typename T>
std::optional<T> to_integer(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    if (s.front() == '+') s.remove_prefix(1);
    T value{};
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
    return value;
}
}  // namespace

std::string_view trim(std::string_view s) {
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    while (!s.empty() && is_space(s.back()))
        s.remove_suffix(1);
    return s;
}

std::vector<std::string_view> split_whitespace(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        while (i < s.size() && is_space(s[i]))
            ++i;
        const std::size_t start = i;
        while (i < s.size() && !is_space(s[i]))
            ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

std::vector<std::string_view> lines(std::string_view s) {
    std::vector<std::string_view> out;
    while (!s.empty()) {
        const auto nl = s.find('\n');
        if (nl == std::string_view::npos) {
            out.push_back(s);
            break;
        }
        out.push_back(s.substr(0, nl));
        s.remove_prefix(nl + 1);
    }
    return out;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
    return to_integer<std::uint64_t>(s);
}

std::optional<std::int64_t> to_i64(std::string_view s) {
    return to_integer<std::int64_t>(s);
}

std::optional<double> to_double(std::string_view s) {
    s = trim(s);
    if (s.empty()) return std::nullopt;
    double value = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
    if (ec != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
    return value;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

std::string sentence_list(const std::vector<std::string>& items, std::string_view last_separator) {
    std::string out;
    for (std::size_t i = 0; i < items.size(); ++i) {
        if (i > 0) out += i + 1 == items.size() ? last_separator : std::string_view(", ");
        out += items[i];
    }
    return out;
}

}  // namespace clprobe::text

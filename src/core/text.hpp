#pragma once
// Small text helpers: for the kernel's text files, trimming, splitting on whitespace, numbers that
// may be missing or malformed (never an exception: a file the kernel did not write as expected is
// "unknown", not an error); for clprobe's own sentences, a list of items.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe::text {

std::string_view trim(std::string_view s);
std::vector<std::string_view> split_whitespace(std::string_view s);
// Lines without their '\n'; a final line without one counts too.
std::vector<std::string_view> lines(std::string_view s);

// Whole (trimmed) text as a number; nullopt when empty, malformed or out of range.
std::optional<std::uint64_t> to_u64(std::string_view s);
std::optional<std::int64_t> to_i64(std::string_view s);
std::optional<double> to_double(std::string_view s);

bool starts_with(std::string_view s, std::string_view prefix);

// Items as a sentence lists them: "a", "a and b", "a, b and c" (last_separator " and " or " or ").
std::string sentence_list(const std::vector<std::string>& items, std::string_view last_separator);

}  // namespace clprobe::text

#pragma once
// Parsers for sysfs values: pure functions over the file's text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace clprobe {

// The selected word of a "choice" file: "always [madvise] never" -> "madvise" (transparent huge
// pages); nullopt without brackets.
std::optional<std::string> bracketed_choice(std::string_view text);

// A cache size as sysfs writes it ("32K", "32768K", "1M", "512"), in bytes.
std::optional<std::uint64_t> parse_cache_size(std::string_view text);

// cpufreq values are kHz; reports speak MHz.
std::optional<double> khz_text_to_mhz(std::string_view text);

}  // namespace clprobe

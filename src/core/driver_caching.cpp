#include "core/driver_caching.hpp"

#include <fmt/core.h>

namespace clprobe {

namespace {

constexpr std::string_view magic = "clprobe-driver-caching-1\n";

}  // namespace

DriverCaching judge_driver_caching(double first_ms, double again_ms) {
    return again_ms < 0.45 * first_ms ? DriverCaching::caches : DriverCaching::does_not_cache;
}

std::string driver_caching_text(DriverCaching verdict, double first_ms, double again_ms) {
    // The two times stay in the file so the verdict can be checked by whoever finds it.
    return fmt::format("{}{}\nfirst_build_ms={:.1f}\nsame_build_again_ms={:.1f}\n", magic,
                       verdict == DriverCaching::caches ? "caches" : "does_not_cache", first_ms, again_ms);
}

std::optional<DriverCaching> parse_driver_caching(const std::string& text) {
    if (text.rfind(magic, 0) != 0) return std::nullopt;
    const std::size_t end = text.find('\n', magic.size());
    if (end == std::string::npos) return std::nullopt;
    const std::string verdict = text.substr(magic.size(), end - magic.size());
    if (verdict == "caches") return DriverCaching::caches;
    if (verdict == "does_not_cache") return DriverCaching::does_not_cache;
    return std::nullopt;
}

}  // namespace clprobe

#pragma once
// Progress and diagnostics go to stderr, never stdout (stdout is the report). Probes log through
// this so `--quiet` silences everything in one place.
#include <string_view>

#include <fmt/core.h>

namespace clprobe {

enum class LogLevel { quiet = 0, info = 1, debug = 2 };

class Log {
  public:
    static void set_level(LogLevel level);
    static LogLevel level();

    template <typename... Args>
    static void info(fmt::format_string<Args...> f, Args&&... args) {
        if (level() >= LogLevel::info) write(fmt::format(f, std::forward<Args>(args)...));
    }
    template <typename... Args>
    static void debug(fmt::format_string<Args...> f, Args&&... args) {
        if (level() >= LogLevel::debug) write(fmt::format(f, std::forward<Args>(args)...));
    }
    // Warnings show unless --quiet.
    template <typename... Args>
    static void warn(fmt::format_string<Args...> f, Args&&... args) {
        if (level() >= LogLevel::info) write("warning: " + fmt::format(f, std::forward<Args>(args)...));
    }

  private:
    static void write(std::string_view line);
};

}  // namespace clprobe

#include "core/log.hpp"

#include <atomic>
#include <cstdio>
#include <string>

namespace clprobe {

namespace {
std::atomic<LogLevel> g_level{LogLevel::info};
}

void Log::set_level(LogLevel level) {
    g_level = level;
}
LogLevel Log::level() {
    return g_level;
}

void Log::write(std::string_view line) {
    std::string text(line);
    text += '\n';
    std::fwrite(text.data(), 1, text.size(), stderr);
}

}  // namespace clprobe

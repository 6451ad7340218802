#include "cli/cli_common.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>

#include "cl/device_query.hpp"
#include "cl/kernel_sources.hpp"
#include "core/atomic_file.hpp"
#include "core/device_selector.hpp"
#include "json/report_json.hpp"

namespace clprobe {

void add_device_option(CLI::App* cmd, std::string& selector) {
    cmd->add_option("-d,--device", selector,
                    "Device: P:D, a flat index N, gpu|cpu|accelerator, or part of its name (default: $CLPROBE_DEVICE, "
                    "else the first GPU, else the first device)");
}

std::string device_list_text(const DeviceCatalog& catalog) {
    std::string out;
    for (const auto& p : catalog.platforms) {
        out += fmt::format("Platform {}: {} ({}; {})\n", p.index, p.name, p.vendor, p.version);
        if (p.error) out += fmt::format("  error: {}\n", *p.error);
        bool any = false;
        for (const auto& l : catalog.listings) {
            if (l.platform_index != p.index) continue;
            any = true;
            out += fmt::format("  -d {}:{}  (or -d {})  {:<12} {}\n", l.platform_index, l.device_index, l.flat_index,
                               l.type, l.device_name);
        }
        if (!any && !p.error) out += "  no devices\n";
    }
    return out;
}

SelectedDevice select_device(const std::string& selector_option) {
    SelectedDevice s;
    s.catalog = enumerate_devices();
    if (s.catalog.error)
        throw UsageError(
            fmt::format("no OpenCL platform found ({}); install an OpenCL driver (e.g. apt-get install "
                        "pocl-opencl-icd) or check OCL_ICD_VENDORS",
                        *s.catalog.error));
    if (s.catalog.listings.empty())
        throw UsageError("no OpenCL devices found on any platform:\n" + device_list_text(s.catalog));

    std::string text = selector_option;
    std::string source = "-d";
    if (text.empty()) {
        if (const char* env = std::getenv("CLPROBE_DEVICE"); env && *env) {
            text = env;
            source = "CLPROBE_DEVICE";
        }
    }
    DeviceSelector selector = SelectDefault{};
    if (!text.empty()) {
        try {
            selector = parse_device_selector(text);
        } catch (const SelectorError& e) {
            throw UsageError(fmt::format("{} ({}); devices:\n{}", e.what(), source, device_list_text(s.catalog)));
        }
    }
    const auto index = match_device(selector, s.catalog.listings);
    if (!index)
        throw UsageError(fmt::format("no device matches {} '{}' ({}); devices:\n{}", source, text, describe(selector),
                                     device_list_text(s.catalog)));
    s.index = *index;
    const auto& listing = s.catalog.listings[s.index];
    s.info = query_device_info(s.catalog.devices[s.index], listing,
                               s.catalog.platforms[static_cast<std::size_t>(listing.platform_index)]);
    return s;
}

std::unique_ptr<DeviceSession> open_session(const SelectedDevice& selected, const std::string& kernel_dir,
                                            bool use_cache) {
    KernelSources sources = KernelSources::embedded();
    if (!kernel_dir.empty()) {
        try {
            sources = KernelSources::from_directory(kernel_dir);
        } catch (const std::exception& e) {
            throw UsageError(e.what());
        }
    }
    CacheConfig cache;
    cache.enabled = use_cache;
    return std::make_unique<DeviceSession>(selected.catalog.devices[selected.index], selected.info, std::move(sources),
                                           std::move(cache));
}

RunReport load_report(const std::string& path) {
    try {
        return report_from_json_text(read_file(path, max_report_bytes));
    } catch (const std::exception& e) {
        throw UsageError(fmt::format("cannot read report '{}': {}", path, e.what()));
    }
}

std::string utc_timestamp() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::vector<std::string>& command_line() {
    static std::vector<std::string> args;
    return args;
}

namespace {

ColorMode& color_mode() {
    static ColorMode mode = ColorMode::automatic;
    return mode;
}

}  // namespace

void set_color_mode(ColorMode mode) {
    color_mode() = mode;
}

void add_color_option(CLI::App& app) {
    app.add_option_function<std::string>(
           "--color",
           [](const std::string& when) {
               set_color_mode(when == "always"  ? ColorMode::always
                              : when == "never" ? ColorMode::never
                                                : ColorMode::automatic);
           },
           "Colour the text report: auto (a terminal, unless NO_COLOR is set), always, never")
        ->check(CLI::IsMember({"auto", "always", "never"}))
        ->default_str("auto");
}

bool color_stdout() {
    switch (color_mode()) {
        case ColorMode::always:
            return true;
        case ColorMode::never:
            return false;
        default:
            break;
    }
    const char* no_color = std::getenv("NO_COLOR");
    return ::isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

}  // namespace clprobe

#pragma once
// What the subcommands share: device selection with its error messages, exit-code carrying
// exceptions, and report metadata.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cl/device_catalog.hpp"
#include "cl/device_session.hpp"
#include "core/report.hpp"

namespace clprobe {

// Bad input of any kind: exits with exit_code::usage after printing the message.
class UsageError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// -d/--device, falling back to $CLPROBE_DEVICE, then the default rule.
void add_device_option(CLI::App* cmd, std::string& selector);

struct SelectedDevice {
    DeviceCatalog catalog;
    std::size_t index = 0;  // into catalog.listings / catalog.devices
    DeviceInfo info;
};

// Enumerates devices and resolves the selector; throws UsageError (with the device list) when
// there is no platform, no device, or no match.
SelectedDevice select_device(const std::string& selector_option);

// Opens a session on the selected device; throws UsageError for a --kernel-dir that is not one.
std::unique_ptr<DeviceSession> open_session(const SelectedDevice& selected, const std::string& kernel_dir,
                                            bool use_cache);

std::string device_list_text(const DeviceCatalog& catalog);

// Reads a saved report; throws UsageError ("cannot read report 'F': ...") for a missing, empty,
// truncated, foreign or other-version file.
RunReport load_report(const std::string& path);
std::string utc_timestamp();

// The raw arguments, for RunReport::command_line (set by main).
std::vector<std::string>& command_line();

// --color: auto (a terminal, and NO_COLOR unset or empty), always (even into a pipe or a file),
// never.
enum class ColorMode { automatic, always, never };
void set_color_mode(ColorMode mode);
// Adds the global --color=auto|always|never option.
void add_color_option(CLI::App& app);

// Whether the text written to stdout gets ANSI colours, by --color.
bool color_stdout();

}  // namespace clprobe

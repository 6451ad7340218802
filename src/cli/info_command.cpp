// clprobe info: what matters for performance about one device.
#include <fmt/core.h>

#include <memory>

#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "json/report_json.hpp"
#include "render/text_report.hpp"

namespace clprobe {

namespace {

struct InfoOptions {
    std::string device;
    bool json = false;
};

int run_info(const InfoOptions& o) {
    const SelectedDevice selected = select_device(o.device);
    // A session completes what the device query alone cannot say (the preferred work-group
    // multiple of pre-3.0 drivers comes from a built kernel).
    auto session = open_session(selected, "", true);
    const DeviceInfo& info = session->info();
    if (o.json) {
        fmt::print("{}\n", device_info_to_json(info).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    } else {
        fmt::print("{}", render_device_info(info));
        fmt::print("  {:<30} {}\n", "extensions", info.extensions.size());
    }
    return exit_code::ok;
}

}  // namespace

CommandRunner add_info_command(CLI::App& app) {
    auto opts = std::make_shared<InfoOptions>();
    CLI::App* cmd = app.add_subcommand("info", "Show the performance-relevant properties of one device");
    add_device_option(cmd, opts->device);
    cmd->add_flag("--json", opts->json, "Print JSON instead of text");
    return [opts] { return run_info(*opts); };
}

}  // namespace clprobe

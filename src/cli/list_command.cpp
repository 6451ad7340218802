// clprobe list: every platform and device, with the selector for each.
#include <fmt/core.h>

#include <memory>

#include "builtin_probes.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "runtime/runner.hpp"

namespace clprobe {

namespace {

struct ListOptions {
    bool json = false;
    bool probes = false;  // --probes: the probe registry instead of the devices
};

// Every probe id diagnose's --probes and --skip accept, in run order, with where it runs.
int run_list_probes(const ListOptions& o) {
    const ProbeList probes = make_builtin_probes();
    if (o.json) {
        nlohmann::json out = nlohmann::json::array();
        for (const auto& p : probes)
            out.push_back({{"id", p->id()},
                           {"layer", p->layer()},
                           {"workload", p->workload()},
                           {"title", p->title()},
                           {"own_process", runs_in_own_process(*p)}});
        fmt::print("{}\n", out.dump(2));
        return exit_code::ok;
    }
    for (const auto& p : probes)
        fmt::print("{:<28} {:<9} {}\n", p->id(), p->layer(), p->title());
    return exit_code::ok;
}

nlohmann::json catalog_json(const DeviceCatalog& cat) {
    nlohmann::json platforms = nlohmann::json::array();
    for (const auto& p : cat.platforms) {
        nlohmann::json devices = nlohmann::json::array();
        for (const auto& l : cat.listings)
            if (l.platform_index == p.index)
                devices.push_back({{"selector", fmt::format("{}:{}", l.platform_index, l.device_index)},
                                   {"flat_index", l.flat_index},
                                   {"name", l.device_name},
                                   {"type", l.type}});
        platforms.push_back({{"index", p.index},
                             {"name", p.name},
                             {"vendor", p.vendor},
                             {"version", p.version},
                             {"error", p.error ? nlohmann::json(*p.error) : nlohmann::json(nullptr)},
                             {"devices", devices}});
    }
    return {{"schema", "clprobe.devices"}, {"schema_version", 1}, {"platforms", platforms}};
}

int run_list(const ListOptions& o) {
    if (o.probes) return run_list_probes(o);
    const DeviceCatalog cat = enumerate_devices();
    if (cat.error)
        throw UsageError(
            fmt::format("no OpenCL platform found ({}); install an OpenCL driver (e.g. apt-get install "
                        "pocl-opencl-icd) or check OCL_ICD_VENDORS",
                        *cat.error));
    if (o.json)
        fmt::print("{}\n", catalog_json(cat).dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    else
        fmt::print("{}", device_list_text(cat));
    return exit_code::ok;
}

}  // namespace

CommandRunner add_list_command(CLI::App& app) {
    auto opts = std::make_shared<ListOptions>();
    CLI::App* cmd = app.add_subcommand("list", "List every OpenCL platform and device, with its selector");
    cmd->add_flag("--json", opts->json, "Print JSON instead of text");
    cmd->add_flag("--probes", opts->probes, "List the probe ids (diagnose --probes, --skip) instead of the devices");
    return [opts] { return run_list(*opts); };
}

}  // namespace clprobe

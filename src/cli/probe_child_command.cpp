// clprobe __probe-child REQUEST: the child side of an isolated probe (runtime/probe_isolation).
// Hidden from --help: the parent starts it with fork + exec, the result channel on fd 3. It opens
// its own OpenCL context on the device the parent selected, runs one probe with the usual failure
// handling, and sends the ProbeResult (and its --trace commands) back over the channel.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>

#include "builtin_probes.hpp"
#include "cl/cl_error.hpp"
#include "cl/command_trace.hpp"
#include "cli/cli_common.hpp"
#include "cli/commands.hpp"
#include "cli/exit_codes.hpp"
#include "core/child_channel.hpp"
#include "core/log.hpp"
#include "core/scoped_signals.hpp"
#include "core/stop_points.hpp"
#include "json/report_json.hpp"
#include "runtime/probe_isolation.hpp"
#include "runtime/runner.hpp"

namespace clprobe {

namespace {

// Tests only: the child named here exits 0 before sending a result, as a driver's atexit handler
// or a stray exit() in a library would.
constexpr const char* exit_hook = "CLPROBE_TEST_CHILD_EXIT_WITHOUT_RESULT";

struct sigaction stop_action() {
    struct sigaction action {};
    action.sa_handler = [](int signal_number) { request_interrupt(signal_number); };
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND;
    return action;
}

int run_probe_child(const std::string& request_path, int channel_fd) {
    set_child_channel_fd(channel_fd);
    // The parent already said whatever opening the device had to say (a refused profiling queue).
    Log::set_level(LogLevel::quiet);
    const ProbeRequest request = read_probe_request(request_path);
    const ProbeList probes = make_builtin_probes();
    Probe* probe = nullptr;
    for (const auto& p : probes)
        if (p->id() == request.probe_id) probe = p.get();
    if (probe == nullptr) throw UsageError("__probe-child: no probe is named '" + request.probe_id + "'");
    // SIGTERM from the parent (its budget ran out, or it was interrupted) stops the probe at its
    // next stop point, so what it can still say arrives as a result; SIGKILL follows otherwise.
    const ScopedInterruptHandlers handlers(stop_action());
    CommandTrace::instance().enable(request.trace);

    const SelectedDevice selected = select_device(request.device_selector);
    std::unique_ptr<DeviceSession> session;
    std::string device_error;
    try {
        session = open_session(selected, request.kernel_dir, request.options.use_cache);
    } catch (const ClError& e) {
        device_error = std::string("the device could not be opened: ") + e.what();
    }
    if (const char* hook = std::getenv(exit_hook); hook && request.probe_id == hook) std::_Exit(0);
    ProbeContext ctx{session.get(), request.options, request.earlier, nullptr, device_error};
    const ProbeResult result = run_probe(*probe, ctx);
    if (request.trace) send_child_trace(CommandTrace::instance().raw_entries().dump());
    const bool sent =
        send_child_result(probe_result_to_json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    // Out at once: tearing down the context and the probe's buffers costs time per probe, and a
    // driver that hangs in its teardown must not turn a delivered result into a timeout.
    std::fflush(nullptr);
    std::_Exit(sent ? exit_code::ok : exit_code::failure);
}

}  // namespace

CommandRunner add_probe_child_command(CLI::App& app) {
    auto request = std::make_shared<std::string>();
    auto channel = std::make_shared<int>(3);
    CLI::App* cmd = app.add_subcommand("__probe-child", "Run one probe for an isolated diagnose (internal)");
    cmd->group("");  // hidden: not a command for users
    cmd->add_option("request", *request, "The request file the parent wrote")->required();
    cmd->add_option("--channel-fd", *channel, "The descriptor of the result channel");
    return [request, channel] { return run_probe_child(*request, *channel); };
}

}  // namespace clprobe

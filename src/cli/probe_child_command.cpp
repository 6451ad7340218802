// clprobe __probe-child REQUEST: the child side of isolated probes (runtime/probe_isolation).
// Hidden from --help: the parent starts it with fork + exec, the channel on fd 3 and the parent's
// answers on fd 4. It opens its own OpenCL context on the device the parent selected once, then
// runs the request's probes in turn with the usual failure handling: before each it asks the
// parent to start (core/child_channel), after each it sends the ProbeResult (and its --trace
// commands) back.
#include <unistd.h>

#include <algorithm>
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

// The request's probes, in its order; a name this clprobe does not know is a usage error.
std::vector<Probe*> requested_probes(const ProbeList& probes, const ProbeRequest& request) {
    std::vector<Probe*> chosen;
    for (const auto& id : request.probe_ids) {
        const auto it = std::find_if(probes.begin(), probes.end(), [&](const auto& p) { return p->id() == id; });
        if (it == probes.end()) throw UsageError("__probe-child: no probe is named '" + id + "'");
        chosen.push_back(it->get());
    }
    return chosen;
}

int run_probe_child(const std::string& request_path, int channel_fd, int go_fd) {
    set_child_channel_fds(channel_fd, go_fd);
    // The parent already said whatever opening the device had to say (a refused profiling queue).
    Log::set_level(LogLevel::quiet);
    ProbeRequest request = read_probe_request(request_path);
    const ProbeList probes = make_builtin_probes();
    const std::vector<Probe*> chosen = requested_probes(probes, request);
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
    const char* exit_without_result = std::getenv(exit_hook);
    for (Probe* probe : chosen) {
        if (interrupt_requested() || !ask_to_start(probe->id())) break;
        if (exit_without_result && probe->id() == exit_without_result) std::_Exit(0);
        ProbeContext ctx{session.get(), request.options, request.earlier, nullptr, device_error};
        ProbeResult result = run_probe(*probe, ctx);
        if (request.trace) {
            send_child_trace(CommandTrace::instance().raw_entries().dump());
            CommandTrace::instance().clear();
        }
        if (!send_child_result(
                probe_result_to_json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)))
            std::_Exit(exit_code::failure);
        // Workload probes read the ceilings measured before them, in this child too.
        request.earlier.push_back(std::move(result));
    }
    // Out at once: tearing down the context and the probes' buffers costs time, and a driver that
    // hangs in its teardown must not turn delivered results into a timeout.
    std::fflush(nullptr);
    std::_Exit(exit_code::ok);
}

}  // namespace

CommandRunner add_probe_child_command(CLI::App& app) {
    auto request = std::make_shared<std::string>();
    auto channel = std::make_shared<int>(3);
    auto go = std::make_shared<int>(4);
    CLI::App* cmd = app.add_subcommand("__probe-child", "Run one probe for an isolated diagnose (internal)");
    cmd->group("");  // hidden: not a command for users
    cmd->add_option("request", *request, "The request file the parent wrote")->required();
    cmd->add_option("--channel-fd", *channel, "The descriptor of the result channel");
    cmd->add_option("--go-fd", *go, "The descriptor the parent's answers arrive on");
    return [request, channel, go] { return run_probe_child(*request, *channel, *go); };
}

}  // namespace clprobe

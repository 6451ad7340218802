#include "runtime/probe_isolation.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "cl/command_trace.hpp"
#include "core/atomic_file.hpp"
#include "core/stop_points.hpp"
#include "json/report_json.hpp"
#include "runtime/run_options_json.hpp"

namespace clprobe {

namespace {

// The last lines of the child's output, enough to see a driver's assertion or abort message.
std::string last_lines(const std::string& text, std::size_t max_lines) {
    std::size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n') --pos;
    for (std::size_t n = 0; n < max_lines && pos > 0; ++n) {
        const std::size_t nl = text.rfind('\n', pos - 1);
        if (nl == std::string::npos) return text;
        pos = nl;
    }
    return text.substr(pos == 0 ? 0 : pos + 1);
}

std::string where(const ChildOutcome& o) {
    return o.breadcrumb.empty() ? std::string() : " while in: " + o.breadcrumb;
}

ProbeResult failed(const Probe& probe, ProbeStatus status, std::string reason, const ChildOutcome& o) {
    ProbeResult r;
    r.id = probe.id();
    r.layer = probe.layer();
    r.title = probe.title();
    r.status = status;
    r.reason = std::move(reason);
    r.wall_seconds = o.seconds;
    nlohmann::json isolation = {{"last_command", o.breadcrumb}, {"output_tail", last_lines(o.output_tail, 20)}};
    if (o.signal != 0) isolation["signal"] = signal_name(o.signal);
    if (o.exited) isolation["exit_status"] = o.exit_status;
    r.attributes["isolation"] = std::move(isolation);
    return r;
}

}  // namespace

ProbeResult result_of_message(const Probe& probe, const std::string& json, const ChildOutcome& o) {
    try {
        ProbeResult r = probe_result_from_json(nlohmann::json::parse(json));
        if (r.id == probe.id()) return r;
        return failed(probe, ProbeStatus::crashed,
                      fmt::format("crashed: its process sent the result of '{}' in its place", r.id), o);
    } catch (const std::exception& e) {
        return failed(probe, ProbeStatus::crashed,
                      std::string("crashed: its process sent an unreadable result (") + e.what() + ")", o);
    }
}

ProbeResult result_of_lost_probe(const Probe& probe, const ChildOutcome& o, double budget_seconds) {
    if (!o.spawn_error.empty())
        return failed(probe, ProbeStatus::error, "its process could not be started: " + o.spawn_error, o);
    if (o.stopped == ChildOutcome::Stop::budget) {
        ProbeResult r =
            failed(probe, ProbeStatus::timed_out,
                   fmt::format("timed out: it ran {:.0f} s, past its time budget of {:g} s (--probe-timeout) "
                               "without reaching a stop point, and its process was ended with {}{}",
                               o.seconds_in_probe, budget_seconds, signal_name(o.last_signal_sent), where(o)),
                   o);
        r.attributes["isolation"]["budget_seconds"] = budget_seconds;
        return r;
    }
    if (o.stopped == ChildOutcome::Stop::interrupt)
        return failed(probe, ProbeStatus::skipped,
                      fmt::format("interrupted by {}: its process was ended with {}", signal_name(interrupt_signal()),
                                  signal_name(o.last_signal_sent)),
                      o);
    if (o.killed_after_results)
        return failed(probe, ProbeStatus::crashed, "crashed: its process did not exit after its last result", o);
    if (o.signal != 0)
        return failed(probe, ProbeStatus::crashed,
                      fmt::format("crashed: its process was killed by {} ({}){}", signal_name(o.signal),
                                  ::strsignal(o.signal), where(o)),
                      o);
    return failed(probe, ProbeStatus::crashed,
                  fmt::format("crashed: its process exited with status {} without a result{}", o.exit_status, where(o)),
                  o);
}

ProbeRequest read_probe_request(const std::string& path) {
    try {
        const auto j = nlohmann::json::parse(read_file(path, max_report_bytes));
        ProbeRequest r;
        r.probe_ids = j.at("probes").get<std::vector<std::string>>();
        r.device_selector = j.at("device").get<std::string>();
        r.kernel_dir = j.at("kernel_dir").get<std::string>();
        r.trace = j.at("trace").get<bool>();
        r.options = run_options_from_json(j.at("run_options"));
        for (const auto& e : j.at("earlier"))
            r.earlier.push_back(probe_result_from_json(e));
        return r;
    } catch (const std::invalid_argument&) {
        throw;
    } catch (const std::exception& e) {
        throw std::invalid_argument(std::string("probe request '") + path + "': " + e.what());
    }
}

ProbeIsolator::ProbeIsolator(IsolationSettings settings, const RunOptions& options)
    : settings_(std::move(settings)), options_(options) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/clprobe-probes-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
        throw std::runtime_error("cannot make a temporary folder for the probe requests in " + pattern);
    folder_ = pattern;
}

ProbeIsolator::~ProbeIsolator() {
    std::error_code ignored;
    std::filesystem::remove_all(folder_, ignored);
}

std::string ProbeIsolator::request_text(const std::vector<const Probe*>& probes,
                                        const std::vector<ProbeResult>& earlier) {
    while (earlier_json_.size() < earlier.size())
        earlier_json_.push_back(probe_result_to_json(earlier[earlier_json_.size()]).dump());
    nlohmann::json ids = nlohmann::json::array();
    for (const Probe* p : probes)
        ids.push_back(p->id());
    const nlohmann::json head = {{"probes", std::move(ids)},
                                 {"device", settings_.device_selector},
                                 {"kernel_dir", settings_.kernel_dir},
                                 {"trace", settings_.trace},
                                 {"run_options", run_options_to_json(options_)}};
    std::string text = head.dump();
    text.pop_back();  // the closing brace: "earlier" joins the object
    text += ",\"earlier\":[";
    for (std::size_t i = 0; i < earlier_json_.size(); ++i)
        text += (i ? "," : "") + earlier_json_[i];
    text += "]}\n";
    return text;
}

std::size_t ProbeIsolator::run_batch(const std::vector<const Probe*>& batch, const std::vector<ProbeResult>& earlier,
                                     const BatchHooks& hooks) {
    const double budget = options_.probe_timeout > 0 ? options_.probe_timeout : probe_budget_for(options_.mode);
    const std::string request = folder_ + "/request.json";
    std::size_t next = 0;  // the first probe of the batch without a result
    while (next < batch.size() && !interrupt_requested()) {
        const std::vector<const Probe*> rest(batch.begin() + static_cast<std::ptrdiff_t>(next), batch.end());
        bool began = false;  // batch[next] was told to go
        ChildConversation talk;
        talk.on_start = [&](const std::string& id) {
            // A child that asks for anything but the next probe is not one this clprobe started.
            if (next >= batch.size() || id != batch[next]->id() || interrupt_requested()) return false;
            if (hooks.starting) hooks.starting(next);
            began = true;
            return true;
        };
        talk.on_result = [&](const std::string& json) {
            if (next >= batch.size()) return;
            hooks.finished(result_of_message(*batch[next], json, ChildOutcome{}));
            ++next;
            began = false;
        };
        talk.on_trace = [&](const std::string& json) {
            if (!settings_.trace) return;
            try {
                CommandTrace::instance().add_entries(nlohmann::json::parse(json));
            } catch (const std::exception&) {
                // A timeline cut short by a crash is not worth failing the probe over.
            }
        };
        talk.all_delivered = [&] { return next >= batch.size(); };
        ChildOutcome outcome;
        try {
            write_file_atomically(request, request_text(rest, earlier));
            outcome = run_child({settings_.executable, "__probe-child", request},
                                {budget + settings_.budget_slack_seconds, settings_.grace_seconds}, talk);
        } catch (const std::exception& e) {
            outcome.spawn_error = e.what();
        }
        if (next >= batch.size()) break;
        // The child ended owing the probe it was in (or about to start): that probe is lost, and
        // a new child takes the rest.
        if (outcome.stopped == ChildOutcome::Stop::interrupt && !began)
            break;  // interrupted before this probe began: the runner says it was not run
        ProbeResult lost = result_of_lost_probe(*batch[next], outcome, budget);
        lost.wall_seconds = outcome.seconds_in_probe;
        hooks.finished(std::move(lost));
        ++next;
        if (!outcome.spawn_error.empty()) {
            // No child can be started: the rest fail the same way, without trying each.
            for (; next < batch.size(); ++next)
                hooks.finished(result_of_lost_probe(*batch[next], outcome, budget));
        }
    }
    return next;
}

}  // namespace clprobe

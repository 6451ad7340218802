// How the runner hands isolated probes to their child processes (runtime/runner, probe_isolation):
// one batch per run of consecutive device probes of one layer, results in plan order, and the
// verdict on the probe a child was in when it died. Pure logic: no child is started here.
#include <catch2/catch.hpp>

#include <csignal>

#include "json/report_json.hpp"
#include "runtime/probe_isolation.hpp"
#include "runtime/runner.hpp"

using namespace clprobe;

namespace {

class FakeProbe : public Probe {
  public:
    FakeProbe(std::string id, std::string layer, bool device)
        : id_(std::move(id)), layer_(std::move(layer)), device_(device) {}
    std::string id() const override { return id_; }
    std::string layer() const override { return layer_; }
    std::string title() const override { return id_; }
    bool needs_device() const override { return device_; }
    void run(ProbeContext&, ProbeResult&) override {}

  private:
    std::string id_, layer_;
    bool device_;
};

}  // namespace

TEST_CASE("runner: consecutive device probes of one layer share a child, in plan order", "[runner][isolation]") {
    ProbeList probes;
    probes.push_back(std::make_unique<FakeProbe>("system.host", "system", false));
    probes.push_back(std::make_unique<FakeProbe>("transfer.a", "transfer", true));
    probes.push_back(std::make_unique<FakeProbe>("transfer.b", "transfer", true));
    probes.push_back(std::make_unique<FakeProbe>("kernel.a", "kernel", true));
    probes.push_back(std::make_unique<FakeProbe>("kernel.host", "kernel", false));
    probes.push_back(std::make_unique<FakeProbe>("kernel.b", "kernel", true));
    probes.push_back(std::make_unique<FakeProbe>("kernel.c", "kernel", true));
    std::vector<std::vector<std::string>> batches;
    std::vector<std::string> started;
    RunServices services;
    services.isolate = [&](const std::vector<const Probe*>& batch, const std::vector<ProbeResult>& earlier,
                           const std::function<void(std::size_t)>& starting,
                           const std::function<void(ProbeResult)>& finished) {
        batches.emplace_back();
        for (std::size_t k = 0; k < batch.size(); ++k) {
            batches.back().push_back(batch[k]->id());
            starting(k);
            ProbeResult r;
            r.id = batch[k]->id();
            r.layer = batch[k]->layer();
            r.status = ProbeStatus::ok;
            // Each result is in the runner's list before the next starts (a new child reads it).
            r.attributes["earlier"] = earlier.size();
            finished(std::move(r));
        }
        return batch.size();
    };
    RunnerHooks hooks;
    std::vector<std::size_t> indexes;
    hooks.on_start = [&](const Probe& p, std::size_t i, std::size_t n) {
        started.push_back(p.id());
        indexes.push_back(i);
        CHECK(n == 7);
    };
    const auto results = run_probes(probes, services, RunOptions{}, hooks);
    const std::vector<std::vector<std::string>> expected_batches{
        {"transfer.a", "transfer.b"}, {"kernel.a"}, {"kernel.b", "kernel.c"}};
    CHECK(batches == expected_batches);
    REQUIRE(results.size() == 7);
    for (std::size_t i = 0; i < results.size(); ++i) {
        CHECK(results[i].id == probes[i]->id());
        CHECK(indexes[i] == i);
        if (results[i].attributes.contains("earlier")) CHECK(results[i].attributes["earlier"] == i);
    }
    CHECK(started.size() == 7);
}

TEST_CASE("isolation: the probe a child was in when it ended takes the blame", "[isolation]") {
    const FakeProbe probe("glm.gradient", "kernel", true);
    ChildOutcome o;
    o.seconds = 40;
    o.seconds_in_probe = 12;
    o.breadcrumb = "glm.row/local";
    o.signal = SIGSEGV;
    ProbeResult r = result_of_lost_probe(probe, o, 30);
    CHECK(r.status == ProbeStatus::crashed);
    CHECK(r.reason.find("SIGSEGV") != std::string::npos);
    CHECK(r.reason.find("glm.row/local") != std::string::npos);
    CHECK(r.attributes["isolation"]["signal"] == "SIGSEGV");

    o = ChildOutcome{};
    o.seconds = 40;
    o.seconds_in_probe = 35;
    o.stopped = ChildOutcome::Stop::budget;
    o.last_signal_sent = SIGKILL;
    o.signal = SIGKILL;
    r = result_of_lost_probe(probe, o, 30);
    CHECK(r.status == ProbeStatus::timed_out);
    // The time in this probe, not the child's whole life (it ran earlier probes first).
    CHECK(r.reason.find("it ran 35 s") != std::string::npos);
    CHECK(r.attributes["isolation"]["budget_seconds"] == 30);

    o = ChildOutcome{};
    o.exited = true;
    o.exit_status = 0;
    r = result_of_lost_probe(probe, o, 30);
    CHECK(r.status == ProbeStatus::crashed);
    CHECK(r.reason.find("exited with status 0 without a result") != std::string::npos);
}

TEST_CASE("isolation: a result for another probe is not taken for this one", "[isolation]") {
    const FakeProbe probe("kernel.launch", "kernel", true);
    ProbeResult other;
    other.id = "kernel.peak";
    other.layer = "kernel";
    other.status = ProbeStatus::ok;
    ProbeResult r = result_of_message(probe, probe_result_to_json(other).dump(), {});
    CHECK(r.status == ProbeStatus::crashed);
    CHECK(r.reason.find("kernel.peak") != std::string::npos);
    r = result_of_message(probe, "{not json", {});
    CHECK(r.status == ProbeStatus::crashed);
    CHECK(r.reason.find("unreadable") != std::string::npos);
}

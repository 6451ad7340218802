// The Runner holds the node turn around the node-local layers and releases it before a layer
// that needs every rank at once (the network layer starts with a barrier), and at the end.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <filesystem>

#include "runtime/runner.hpp"
#include "system/node_turn.hpp"

using namespace clprobe;

namespace {

// Records whether the node turn was held while it ran.
class TurnProbe : public Probe {
  public:
    TurnProbe(std::string layer, const NodeTurn& turn, std::vector<std::pair<std::string, bool>>& log)
        : layer_(std::move(layer)), turn_(turn), log_(log) {}
    std::string id() const override { return layer_ + ".turn"; }
    std::string layer() const override { return layer_; }
    std::string title() const override { return "turn"; }
    bool needs_device() const override { return false; }
    void run(ProbeContext&, ProbeResult&) override { log_.emplace_back(layer_, turn_.held()); }

  private:
    std::string layer_;
    const NodeTurn& turn_;
    std::vector<std::pair<std::string, bool>>& log_;
};

}  // namespace

TEST_CASE("runner: node-local layers hold the node turn, the network layer does not", "[runner]") {
    const auto path =
        (std::filesystem::temp_directory_path() / ("clprobe-runner-turn-" + std::to_string(::getpid()))).string();
    NodeTurn turn(path);
    std::vector<std::pair<std::string, bool>> log;
    ProbeList probes;
    for (const char* layer : {"system", "kernel", "network"})
        probes.push_back(std::make_unique<TurnProbe>(layer, turn, log));
    RunServices services;
    services.node_turn = &turn;
    RunOptions options;  // no layer list: every probe runs
    const auto results = run_probes(probes, services, options);
    REQUIRE(results.size() == 3);
    for (const auto& r : results)
        CHECK(r.status == ProbeStatus::ok);
    const std::vector<std::pair<std::string, bool>> expected{{"system", true}, {"kernel", true}, {"network", false}};
    CHECK(log == expected);
    CHECK_FALSE(turn.held());  // released at the end too
    CHECK(is_node_local_layer("transfer"));
    CHECK_FALSE(is_node_local_layer("network"));
    std::filesystem::remove(path);
}

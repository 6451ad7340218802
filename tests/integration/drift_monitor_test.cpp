// The drift monitor on the test device: a few checks are recorded with positive rates after a
// verified reference, run_probes calls it before device probes only, and a planted wrong reference
// result (or a reference that does not build) turns it off with a note instead of failing.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "runtime/drift_monitor.hpp"
#include "runtime/runner.hpp"
#include "session_fixture.hpp"

using namespace clprobe;

namespace {

// A probe that records nothing; its layer and device need decide whether a check precedes it.
class StubProbe : public Probe {
  public:
    StubProbe(std::string id, std::string layer, bool device)
        : id_(std::move(id)), layer_(std::move(layer)), device_(device) {}
    std::string id() const override { return id_; }
    std::string layer() const override { return layer_; }
    std::string title() const override { return "stub"; }
    bool needs_device() const override { return device_; }
    void run(ProbeContext&, ProbeResult&) override {}

  private:
    std::string id_, layer_;
    bool device_;
};

// Small and quick: the test checks what is recorded, not how fast.
DriftMonitorConfig small_config() {
    DriftMonitorConfig c;
    c.min_buffer_bytes = 8ull << 20;
    c.target_seconds = 0.0005;
    return c;
}

}  // namespace

TEST_CASE("drift monitor: checks are verified, recorded in order with positive rates", "[drift]") {
    DeviceSession& s = test::shared_session();
    if (!s.profiling()) {
        DriftMonitor off(s, small_config());
        CHECK_FALSE(off.active());
        CHECK_FALSE(off.drift().note.empty());
        return;
    }
    DriftMonitor monitor(s, small_config());
    INFO(monitor.drift().note);
    REQUIRE(monitor.active());
    // The fastest of the read patterns on this device, chosen at set-up.
    CHECK((monitor.read_pattern() == "chunked" || monitor.read_pattern() == "chunked_wide" ||
           monitor.read_pattern() == "interleaved"));
    for (const char* probe : {"kernel.a", "kernel.b", "transfer.c", "kernel.d"})
        monitor.check(probe);
    const MachineDrift& d = monitor.drift();
    REQUIRE(d.checks.size() == 4);
    CHECK(d.note.empty());
    CHECK(d.checks[2].before_probe == "transfer.c");
    for (std::size_t i = 0; i < d.checks.size(); ++i) {
        CHECK(d.checks[i].compute_gflops > 0);
        CHECK(d.checks[i].memory_gb_per_s > 0);
        if (i > 0) CHECK(d.checks[i].offset_seconds >= d.checks[i - 1].offset_seconds);
    }
    CHECK(compute_series(d).n == 4);
    CHECK(memory_series(d).n == 4);
    CHECK(largest_spread(d).has_value());
    CHECK(d.cost_seconds > 0);
}

TEST_CASE("drift monitor: the runner's hooks check before device probes only", "[drift][runner]") {
    DeviceSession& s = test::shared_session();
    if (!s.profiling()) return;
    DriftMonitor monitor(s, small_config());
    REQUIRE(monitor.active());
    ProbeList probes;
    probes.push_back(std::make_unique<StubProbe>("system.stub", "system", false));
    probes.push_back(std::make_unique<StubProbe>("kernel.stub", "kernel", true));
    probes.push_back(std::make_unique<StubProbe>("kernel.host_stub", "kernel", false));
    probes.push_back(std::make_unique<StubProbe>("transfer.stub", "transfer", true));
    RunOptions options;
    options.mode = RunMode::quick;
    int started = 0;
    RunnerHooks hooks;
    hooks.on_start = [&](const Probe&, std::size_t, std::size_t) { ++started; };
    run_probes(probes, {&s, nullptr, "", nullptr}, options, with_drift_checks(hooks, monitor));
    CHECK(started == 4);  // the wrapped hook still runs
    const auto& checks = monitor.drift().checks;
    REQUIRE(checks.size() == 2);
    CHECK(checks[0].before_probe == "kernel.stub");
    CHECK(checks[1].before_probe == "transfer.stub");
}

TEST_CASE("drift monitor: a wrong reference result turns it off with a note", "[drift]") {
    DeviceSession& s = test::shared_session();
    if (!s.profiling()) return;
    for (const bool break_memory : {false, true}) {
        DriftMonitorConfig c = small_config();
        c.tamper = [break_memory](std::vector<float>& fma, std::vector<std::uint32_t>& reads) {
            if (break_memory)
                reads.back() += 1;
            else
                fma.front() *= 0.5f;
        };
        DriftMonitor monitor(s, std::move(c));
        CHECK_FALSE(monitor.active());
        monitor.check("kernel.after");
        CHECK(monitor.drift().checks.empty());
        CHECK_THAT(monitor.drift().note, Catch::Contains(break_memory ? "memory reference" : "FMA reference"));
    }
}

TEST_CASE("drift monitor: a reference whose chains ignore the work-item id is caught", "[drift]") {
    // Every item starts from item 0's values: what a driver may compute once for many items. At a
    // short calibration and at one of thousands of iterations: a recurrence that converged forgot
    // its start there, and a faster driver (Intel's, calibrated to more iterations) went uncaught.
    const auto dir = test::patched_kernel_dir("drift/reference.cl", "get_global_id(0) * 64", "0 * 64");
    const auto session = test::session_with_kernels(dir);
    if (!session->profiling()) return;
    for (const double target : {0.0005, 0.02}) {
        DriftMonitorConfig config = small_config();
        config.target_seconds = target;
        DriftMonitor monitor(*session, config);
        INFO("target launch " << target << " s");
        CHECK_FALSE(monitor.active());
        CHECK_THAT(monitor.drift().note, Catch::Contains("FMA reference"));
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("drift monitor: a read that skips data is caught in either pattern", "[drift]") {
    // Each pattern's first accumulator stops counting; whichever the monitor keeps, its sum is wrong.
    for (const char* from : {"acc0 += p[k];", "acc0 += in[i];"}) {
        const auto dir = test::patched_kernel_dir("drift/reference.cl", from, "");
        const auto session = test::session_with_kernels(dir);
        if (!session->profiling()) return;
        DriftMonitor monitor(*session, small_config());
        INFO(from << " -> pattern " << monitor.read_pattern());
        // The chunked patch reaches both chunked kernels (one macro defines them).
        const bool chunked = std::string(from).find("p[k]") != std::string::npos;
        if ((monitor.read_pattern().rfind("chunked", 0) == 0) == chunked) {
            CHECK_FALSE(monitor.active());
            CHECK_THAT(monitor.drift().note, Catch::Contains("memory reference"));
        }
        std::filesystem::remove_all(dir);
    }
}

TEST_CASE("drift monitor: a reference that does not build leaves it off, and the run goes on", "[drift]") {
    const auto dir = test::patched_kernel_dir("drift/reference.cl", "a0 = fma(a0, vb, vc);", "a0 = fma(a0, vb, vc) +;");
    const auto session = test::session_with_kernels(dir);
    if (!session->profiling()) return;
    DriftMonitor monitor(*session, small_config());
    CHECK_FALSE(monitor.active());
    CHECK_THAT(monitor.drift().note, Catch::Contains("did not build"));
}

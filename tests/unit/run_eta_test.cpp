// The progress line's time-left estimate.
#include <catch2/catch.hpp>

#include "core/run_eta.hpp"

using namespace clprobe;

TEST_CASE("run ETA: before any probe finished, the expectations are summed", "[eta]") {
    const RunEta eta({1, 2, 3});
    CHECK(eta.seconds_left(0) == Approx(6));
    CHECK(eta.seconds_left(2) == Approx(3));
    CHECK(eta.seconds_left(3) == 0);
}

TEST_CASE("run ETA: a machine running twice as slow as expected doubles what is left", "[eta]") {
    RunEta eta({2, 2, 4});
    eta.finished(0, 4);
    CHECK(eta.pace() == Approx(2));
    CHECK(eta.seconds_left(1) == Approx(12));
}

TEST_CASE("run ETA: tiny probes do not set the pace, and outliers are clamped", "[eta]") {
    RunEta eta({0.1, 10, 10});
    eta.finished(0, 5);  // a 0.1 s expectation that took 5 s says little
    CHECK(eta.pace() == 1);
    eta.finished(1, 1000);
    CHECK(eta.pace() == Approx(4));  // clamped
    RunEta fast({10, 10});
    fast.finished(0, 0);
    CHECK(fast.pace() == Approx(0.25));
    CHECK(fast.seconds_left(1) == Approx(2.5));
}

TEST_CASE("run ETA: bad input is tolerated", "[eta]") {
    RunEta eta({-3, 2});
    eta.finished(7, 1);  // out of range: ignored
    CHECK(eta.seconds_left(0) == Approx(2));
}

TEST_CASE("run ETA: durations read as estimates", "[eta]") {
    CHECK(duration_text(0.4) == "<1 s");
    CHECK(duration_text(-1) == "<1 s");
    CHECK(duration_text(12.4) == "12 s");
    CHECK(duration_text(125) == "2 min 5 s");
}

#include <catch2/catch.hpp>

#include "core/driver_caching.hpp"

using namespace clprobe;

TEST_CASE("a second build far faster than the first is the driver's cache") {
    // PoCL, measured: a cold compute.cl build ~900 ms, the same build again ~30 ms.
    CHECK(judge_driver_caching(900.0, 30.0) == DriverCaching::caches);
    // A driver that compiles again takes about as long, a little faster or slower.
    CHECK(judge_driver_caching(900.0, 850.0) == DriverCaching::does_not_cache);
    CHECK(judge_driver_caching(900.0, 1200.0) == DriverCaching::does_not_cache);
    // Measured: PoCL's hit on a small program at 23.5% of its cold build (159.8 -> 37.6 ms), Intel's
    // runtime building again at 70% (118.6 -> 83.2 ms).
    CHECK(judge_driver_caching(159.8, 37.6) == DriverCaching::caches);
    CHECK(judge_driver_caching(118.6, 83.2) == DriverCaching::does_not_cache);
    // The boundary: 45% of the first build is not yet a hit.
    CHECK(judge_driver_caching(400.0, 180.0) == DriverCaching::does_not_cache);
    CHECK(judge_driver_caching(400.0, 179.0) == DriverCaching::caches);
}

TEST_CASE("the verdict file reads back what was written and nothing else") {
    for (DriverCaching verdict : {DriverCaching::caches, DriverCaching::does_not_cache}) {
        const auto back = parse_driver_caching(driver_caching_text(verdict, 912.4, 31.0));
        REQUIRE(back.has_value());
        CHECK(*back == verdict);
    }
    const std::string text = driver_caching_text(DriverCaching::caches, 912.4, 31.0);
    CHECK(text.find("first_build_ms=912.4") != std::string::npos);
    CHECK(text.find("same_build_again_ms=31.0") != std::string::npos);
    CHECK_FALSE(parse_driver_caching("").has_value());
    CHECK_FALSE(parse_driver_caching("clprobe-driver-caching-0\ncaches\n").has_value());
    CHECK_FALSE(parse_driver_caching("clprobe-driver-caching-1\nmaybe\n").has_value());
    CHECK_FALSE(parse_driver_caching("clprobe-driver-caching-1\ncaches").has_value());
}

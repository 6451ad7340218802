#include <catch2/catch.hpp>

#include <stdexcept>

#include "core/program_plan.hpp"

using namespace clprobe;

namespace {
const ProgramNeed compute{"peak/compute.cl", "-D REAL=float"};
const ProgramNeed compute64{"peak/compute.cl", "-D REAL=double -D REAL_IS_DOUBLE"};
const ProgramNeed launch{"peak/launch.cl", ""};
const ProgramNeed attention{"attention/attention.cl", "-D HEAD_DIM=64 -D KV_GROUP=32"};
}  // namespace

TEST_CASE("a program several probes need is built once, in first-use order") {
    // kernel.build and kernel.compute.fp32 build the same program; the options tell fp64 apart.
    const auto unique = unique_programs({compute, launch, compute, compute64, launch});
    REQUIRE(unique.size() == 3);
    CHECK(unique[0] == compute);
    CHECK(unique[1] == launch);
    CHECK(unique[2] == compute64);
    CHECK(unique_programs({}).empty());
}

TEST_CASE("programs are dealt round robin to at most one worker each") {
    const std::vector<ProgramNeed> four{compute, compute64, launch, attention};
    const auto two = share_programs(four, 2);
    REQUIRE(two.size() == 2);
    CHECK(two[0] == std::vector<ProgramNeed>{compute, launch});
    CHECK(two[1] == std::vector<ProgramNeed>{compute64, attention});
    // More workers than programs: one program each, no idle worker started.
    const auto many = share_programs({compute, launch}, 8);
    REQUIRE(many.size() == 2);
    CHECK(many[0] == std::vector<ProgramNeed>{compute});
    CHECK(many[1] == std::vector<ProgramNeed>{launch});
    CHECK(share_programs({}, 2).empty());
    CHECK(share_programs(four, 0).empty());
}

TEST_CASE("a program travels as one argument, options with spaces included") {
    for (const auto& need : {compute, compute64, launch, attention}) {
        const ProgramNeed back = parse_program_argument(program_argument(need));
        CHECK(back == need);
    }
    CHECK_THROWS_AS(parse_program_argument("peak/compute.cl -D REAL=float"), std::invalid_argument);
    CHECK_THROWS_AS(parse_program_argument("\n-D REAL=float"), std::invalid_argument);
}

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

TEST_CASE("programs alone are dealt round robin to at most one builder each") {
    const std::vector<ProgramNeed> four{compute, compute64, launch, attention};
    const auto two = plan_builders(four, {}, 2);
    REQUIRE(two.size() == 2);
    CHECK(two[0] == BuilderShare{{compute, launch}, {}});
    CHECK(two[1] == BuilderShare{{compute64, attention}, {}});
    // More builders than programs: one program each, no idle builder started.
    const auto many = plan_builders({compute, launch}, {}, 8);
    REQUIRE(many.size() == 2);
    CHECK(many[0].programs == std::vector<ProgramNeed>{compute});
    CHECK(many[1].programs == std::vector<ProgramNeed>{launch});
    CHECK(plan_builders({}, {}, 2).empty());
    CHECK(plan_builders(four, {}, 0).empty());
    // A program listed twice is built once.
    CHECK(plan_builders({compute, compute, launch}, {}, 1) == std::vector<BuilderShare>{{{compute, launch}, {}}});
}

TEST_CASE("a warm-up group goes whole to one builder, with its programs") {
    const ProgramNeed gradient{"glm/gradient.cl", "-D REAL=float"};
    const ProgramNeed sparse{"glm/sparse.cl", "-D REAL=float"};
    const ProgramNeed row_block{"attention/attention.cl", "-D HEAD_DIM=64 -D ATTN_ROW_BLOCK"};
    const WarmUpGroup glm{{"glm.gradient"}, {gradient, sparse, launch}};
    const WarmUpGroup attn{{"attention.prefill", "attention.decode"}, {attention, row_block}};
    const std::vector<ProgramNeed> all{compute, launch, gradient, sparse, attention, row_block, compute64};
    const auto shares = plan_builders(all, {glm, attn}, 2);
    REQUIRE(shares.size() == 2);
    // The heavier group (2 programs + 2 x 4 = 10) first, to builder 0; the other (3 + 4 = 7) to
    // builder 1; then the two programs alone to the lighter builder, one after the other: 10, 7 + 1 + 1.
    CHECK(shares[0] == BuilderShare{{attention, row_block}, {"attention.prefill", "attention.decode"}});
    CHECK(shares[1] == BuilderShare{{gradient, sparse, launch, compute, compute64}, {"glm.gradient"}});
    // One builder: everything, each program once.
    const auto one = plan_builders(all, {glm, attn}, 1);
    REQUIRE(one.size() == 1);
    CHECK(one[0].programs.size() == all.size());
    CHECK(one[0].warm_ups == std::vector<std::string>{"attention.prefill", "attention.decode", "glm.gradient"});
    // A program two groups build goes with the first group only.
    const WarmUpGroup also_launch{{"kernel.launch"}, {launch}};
    const auto shared = plan_builders({}, {glm, also_launch}, 2);
    REQUIRE(shared.size() == 2);
    CHECK(shared[0].programs == std::vector<ProgramNeed>{gradient, sparse, launch});
    CHECK(shared[1] == BuilderShare{{}, {"kernel.launch"}});
}

TEST_CASE("a program travels as one argument, options with spaces included") {
    for (const auto& need : {compute, compute64, launch, attention}) {
        const ProgramNeed back = parse_program_argument(program_argument(need));
        CHECK(back == need);
    }
    CHECK_THROWS_AS(parse_program_argument("peak/compute.cl -D REAL=float"), std::invalid_argument);
    CHECK_THROWS_AS(parse_program_argument("\n-D REAL=float"), std::invalid_argument);
}

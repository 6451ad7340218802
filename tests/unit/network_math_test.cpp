// The network layer's arithmetic and facts without MPI: nccl-tests' busbw, the slow-pair test,
// the rank pairs rank 0 drives, and the facts' JSON. The launcher's world size, which decides
// whether MPI starts, is tested with the other launcher variables in launcher_env_test.cpp.
#include <catch2/catch.hpp>

#include <string>

#include "core/network_facts.hpp"
#include "core/network_math.hpp"

using namespace clprobe;

TEST_CASE("busbw follows the nccl-tests definition", "[network]") {
    // 4 MiB in 1 ms: algbw 4.194 GB/s; busbw = algbw * 2(n-1)/n.
    const double bytes = 4.0 * 1024 * 1024, t = 1e-3;
    CHECK(algorithm_bandwidth(bytes, t) == Approx(4.194304));
    CHECK(bus_bandwidth(bytes, t, 2) == Approx(4.194304));  // factor 1 for two ranks
    CHECK(bus_bandwidth(bytes, t, 4) == Approx(4.194304 * 1.5));
    CHECK(bus_bandwidth(bytes, t, 8) == Approx(4.194304 * 1.75));
    CHECK(bus_bandwidth_factor(1) == 0.0);
    CHECK(algorithm_bandwidth(bytes, 0) == 0.0);
}

TEST_CASE("slow pairs: below half the median pair, three pairs or more", "[network]") {
    const std::vector<PairBandwidth> even{{"0-1", 10}, {"0-2", 9}, {"1-2", 11}};
    CHECK(slow_pairs(even, 0.5).empty());
    const std::vector<PairBandwidth> one_slow{{"0-1", 10}, {"0-2", 10}, {"0-3", 2},
                                              {"1-2", 11}, {"1-3", 9},  {"2-3", 3}};
    const auto slow = slow_pairs(one_slow, 0.5);
    REQUIRE(slow.size() == 2);
    CHECK(slow[0].pair == "0-3");  // slowest first
    CHECK(slow[1].pair == "2-3");
    CHECK(median_pair_bandwidth(one_slow) == Approx(9.5));
    // Just above half the median: not slow.
    CHECK(slow_pairs({{"0-1", 10}, {"0-2", 10}, {"1-2", 5.01}}, 0.5).empty());
    CHECK(slow_pairs({{"0-1", 10}, {"0-2", 10}, {"1-2", 4.99}}, 0.5).size() == 1);
    // Two pairs: neither is the odd one out.
    CHECK(slow_pairs({{"0-1", 10}, {"0-2", 1}}, 0.5).empty());
}

TEST_CASE("rank pairs: every unordered pair once, in rank order", "[network]") {
    CHECK(rank_pairs(1).empty());
    CHECK(rank_pairs(2) == std::vector<std::pair<int, int>>{{0, 1}});
    const auto four = rank_pairs(4);
    CHECK(four.size() == 6);
    CHECK(four.front() == std::pair<int, int>{0, 1});
    CHECK(four.back() == std::pair<int, int>{2, 3});
    CHECK(pair_label(2, 3) == "2-3");
}

TEST_CASE("network facts round-trip through JSON and reject damaged values", "[network]") {
    NetworkFacts f;
    f.rank = 1;
    f.world_size = 2;
    f.peer = 0;
    f.library_version = "Open MPI v4.1.4";
    f.standard_version = "3.1";
    f.launcher = "OMPI_COMM_WORLD_SIZE";
    f.hosts = {"a", "b"};
    const auto back = network_facts_from(to_json_value(f));
    REQUIRE(back);
    CHECK(back->rank == 1);
    CHECK(back->world_size == 2);
    CHECK(back->peer == 0);
    CHECK(back->library_version == f.library_version);
    CHECK(back->hosts == f.hosts);
    NetworkFacts lone = f;
    lone.peer.reset();
    CHECK_FALSE(network_facts_from(to_json_value(lone))->peer);
    CHECK_FALSE(network_facts_from(nlohmann::json::array()));
    CHECK_FALSE(network_facts_from({{"rank", "1"}, {"world_size", 2}}));
}

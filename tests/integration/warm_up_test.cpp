// The builders' warm-ups: which probes they run and with what options (probes/program_needs), and
// the stamps diagnose keeps in clprobe's cache (runtime/warm_up_stamp): a cold run's builders warm
// the workloads' first launches once, and a changed key warms them again.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "program_needs.hpp"
#include "runtime/warm_up_stamp.hpp"

using namespace clprobe;

namespace {

std::filesystem::path fresh_dir() {
    std::random_device rd;
    return std::filesystem::temp_directory_path() / ("clprobe-stamp-" + std::to_string(rd()));
}

DeviceInfo device() {
    DeviceInfo d;
    d.platform_name = "Portable Computing Language";
    d.platform_version = "OpenCL 3.0 PoCL 3.1";
    d.name = "cpu-haswell";
    d.driver_version = "3.1";
    return d;
}

}  // namespace

TEST_CASE("a warm-up key changes with everything the driver's first launches depend on", "[warm_up]") {
    const RunOptions standard;
    const std::vector<std::string> sources{"kernel void f() {}\n-D REAL=float"};
    const std::string key = warm_up_key(device(), standard, "glm.gradient", sources);
    CHECK(key == warm_up_key(device(), standard, "glm.gradient", sources));
    CHECK(key != warm_up_key(device(), standard, "attention.decode", sources));
    DeviceInfo other = device();
    other.driver_version = "3.2";
    CHECK(key != warm_up_key(other, standard, "glm.gradient", sources));
    RunOptions quick;
    quick.mode = RunMode::quick;
    CHECK(key != warm_up_key(device(), quick, "glm.gradient", sources));
    RunOptions wider;
    wider.glm.cols = 128;
    CHECK(key != warm_up_key(device(), wider, "glm.gradient", sources));
    RunOptions longer;
    longer.attention.kv_len = 8192;
    CHECK(key != warm_up_key(device(), longer, "glm.gradient", sources));
    CHECK(key != warm_up_key(device(), standard, "glm.gradient", {"kernel void f() { }\n-D REAL=float"}));
    CHECK(key != warm_up_key(device(), standard, "glm.gradient", {"kernel void f() {}\n-D REAL=double"}));
    // What the run selects or where it writes is not part of it.
    RunOptions fewer;
    fewer.layers = {"kernel"};
    fewer.probe_timeout = 30;
    CHECK(key == warm_up_key(device(), fewer, "glm.gradient", sources));
}

TEST_CASE("a stamp is found only for its own key", "[warm_up]") {
    const auto dir = fresh_dir();
    const std::string key = warm_up_key(device(), RunOptions{}, "glm.gradient", {"x"});
    const std::string other = warm_up_key(device(), RunOptions{}, "attention.prefill", {"x"});
    CHECK_FALSE(warmed_up(dir, key));  // no folder yet
    REQUIRE(mark_warmed_up(dir, key));
    CHECK(warmed_up(dir, key));
    CHECK_FALSE(warmed_up(dir, other));
    // A stamp whose text is not the key (truncated, foreign) does not count.
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        std::ofstream(entry.path(), std::ios::trunc) << key.substr(0, key.size() / 2);
    CHECK_FALSE(warmed_up(dir, key));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a stamp that cannot be written is reported, not thrown", "[warm_up]") {
    const auto dir = fresh_dir();
    std::filesystem::create_directories(dir.parent_path());
    std::ofstream(dir) << "a file where the folder should be";
    const std::string key = warm_up_key(device(), RunOptions{}, "glm.gradient", {"x"});
    CHECK_FALSE(mark_warmed_up(dir, key));
    CHECK_FALSE(warmed_up(dir, key));
    CHECK_FALSE(mark_warmed_up({}, key));
    CHECK_FALSE(warmed_up({}, key));
    std::filesystem::remove(dir);
}

TEST_CASE("warm-ups are planned for the planned workloads, attention's two probes together", "[warm_up]") {
    DeviceInfo d = device();
    d.fp64 = true;
    const RunOptions o;
    const auto groups = warm_up_groups({"kernel.build", "attention.decode", "glm.gradient", "attention.prefill"}, o, d);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].probe_ids == std::vector<std::string>{"glm.gradient"});
    CHECK(groups[0].programs == programs_needed({"glm.gradient"}, o, d));
    CHECK(groups[1].probe_ids == std::vector<std::string>{"attention.prefill", "attention.decode"});
    CHECK(groups[1].programs == programs_needed({"attention.prefill", "attention.decode"}, o, d));
    CHECK(warm_up_groups({"kernel.build", "glm.fit", "attention.step"}, o, d).empty());
    CHECK(warm_up_groups({"attention.decode"}, o, d).front().probe_ids == std::vector<std::string>{"attention.decode"});
}

TEST_CASE("a warm-up runs the GLM on a few thousand rows and keeps every other option", "[warm_up]") {
    RunOptions o;
    o.mode = RunMode::full;
    o.glm.cols = 96;
    o.attention.kv_len = 2048;
    const RunOptions w = warm_up_options(o);
    CHECK(w.glm.rows == 8192);
    CHECK(w.mode == RunMode::full);
    CHECK(w.glm.cols == 96);
    CHECK(w.attention.kv_len == 2048);
    RunOptions few;
    few.glm.rows = 100;
    CHECK(warm_up_options(few).glm.rows == 100);
}

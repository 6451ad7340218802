// The replay's capture reader on synthetic capture folders: a good one, and each kind of bad input
// becoming a one-line problem instead of a crash or a read past a file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <random>

#include "replay/capture_reader.hpp"

using namespace clprobe::replay;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

class Folder {
  public:
    Folder() {
        std::random_device rd;
        path_ =
            fs::temp_directory_path() / ("clprobe-replay-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
        fs::create_directories(path_);
    }
    ~Folder() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }
    void write(const std::string& name, const std::string& bytes) const {
        std::ofstream(path_ / name, std::ios::binary) << bytes;
    }

  private:
    fs::path path_;
};

json good_capture() {
    return json::parse(R"({
      "format": "clprobe.replay.v1", "pid": 1234, "kernel": "saxpy", "launch_ordinal": 2,
      "device": {"name": "cpu", "vendor": "v", "platform": "Portable Computing Language", "driver_version": "1"},
      "program": {"origin": "source", "file": "program.cl", "options": "-cl-std=CL1.2"},
      "work_dim": 1, "global_offset": null, "global_size": [4], "local_size": null,
      "args": [
        {"index": 1, "kind": "scalar", "bytes_hex": "0000803f"},
        {"index": 0, "kind": "buffer", "size": 16, "flags": 1, "input": "arg0.in", "output": "arg0.out"},
        {"index": 2, "kind": "local", "size": 64}
      ],
      "traced_ns": 5000, "skipped": null})");
}

void write_data(const Folder& f) {
    f.write("program.cl", "kernel void saxpy(global float* x, float a, local float* t) {}");
    f.write("arg0.in", std::string(16, 'a'));
    f.write("arg0.out", std::string(16, 'b'));
}

std::string problem_with(const json& j, const std::function<void(const Folder&)>& extra = {}) {
    Folder f;
    write_data(f);
    if (extra) extra(f);
    f.write("capture.json", j.dump());
    const CaptureLoad load = read_capture(f.path());
    return load.capture ? std::string() : load.problem;
}

}  // namespace

TEST_CASE("replay capture: a good folder reads with its arguments in index order", "[replay]") {
    Folder f;
    write_data(f);
    f.write("capture.json", good_capture().dump());
    const CaptureLoad load = read_capture(f.path());
    REQUIRE(load.capture);
    const Capture& c = *load.capture;
    CHECK(c.kernel == "saxpy");
    CHECK(c.work_dim == 1);
    CHECK(c.global_size == Range{4, 1, 1});
    CHECK_FALSE(c.local_size);
    CHECK(c.traced_ns == 5000);
    REQUIRE(c.args.size() == 3);
    CHECK(c.args[0].kind == ArgKind::buffer);
    CHECK(c.args[0].input == f.path() / "arg0.in");
    CHECK(c.args[1].scalar_bytes == std::vector<unsigned char>{0x00, 0x00, 0x80, 0x3f});
    CHECK(c.args[2].kind == ArgKind::local);
    CHECK(c.args[2].size == 64);
}

TEST_CASE("replay capture: each bad field is a one-line problem", "[replay]") {
    auto with = [](const std::function<void(json&)>& edit) {
        json j = good_capture();
        edit(j);
        return problem_with(j);
    };
    CHECK_THAT(with([](json& j) { j["format"] = "clprobe.replay.v2"; }), Catch::Contains("format"));
    CHECK_THAT(with([](json& j) { j.erase("kernel"); }), Catch::Contains("'kernel' is missing"));
    CHECK_THAT(with([](json& j) { j["work_dim"] = 4; }), Catch::Contains("work_dim 4 is out of range"));
    CHECK_THAT(with([](json& j) { j["work_dim"] = 0; }), Catch::Contains("work_dim"));
    CHECK_THAT(with([](json& j) { j["global_size"] = json::array({4, 1}); }), Catch::Contains("work_dim (1) entries"));
    CHECK_THAT(with([](json& j) { j["global_size"] = json::array({0}); }), Catch::Contains("global_size[0]"));
    CHECK_THAT(with([](json& j) { j["global_size"] = json::array({1.5}); }), Catch::Contains("not an integer"));
    CHECK_THAT(with([](json& j) { j["local_size"] = json::array({8}); }), Catch::Contains("exceeds global_size"));
    CHECK_THAT(with([](json& j) { j["args"][1]["size"] = 32; }), Catch::Contains("holds 16 bytes"));
    CHECK_THAT(with([](json& j) { j["args"][1]["input"] = "../arg0.in"; }), Catch::Contains("not a file name"));
    CHECK_THAT(with([](json& j) { j["args"][1]["output"] = "arg9.out"; }), Catch::Contains("missing"));
    CHECK_THAT(with([](json& j) { j["args"][1]["flags"] = 1 << 20; }), Catch::Contains("unknown bits"));
    CHECK_THAT(with([](json& j) { j["args"][0]["bytes_hex"] = "abc"; }), Catch::Contains("hex"));
    CHECK_THAT(with([](json& j) { j["args"][0]["bytes_hex"] = "zz"; }), Catch::Contains("not hex"));
    CHECK_THAT(with([](json& j) { j["args"][2]["index"] = 0; }), Catch::Contains("appears twice"));
    CHECK_THAT(with([](json& j) { j["args"][2]["index"] = 5; }), Catch::Contains("argument 2 is missing"));
    CHECK_THAT(with([](json& j) { j["args"][2]["kind"] = "image"; }), Catch::Contains("not buffer, scalar or local"));
    CHECK_THAT(with([](json& j) { j["program"]["file"] = "program.spv"; }), Catch::Contains("is not program.cl"));
    CHECK_THAT(with([](json& j) { j["program"]["origin"] = "builtin"; }), Catch::Contains("origin"));
    CHECK_THAT(with([](json& j) { j["traced_ns"] = -1; }), Catch::Contains("traced_ns"));
    CHECK_THAT(with([](json& j) { j["args"] = 3; }), Catch::Contains("args is not an array"));
    CHECK_THAT(with([](json& j) { j = json::array(); }), Catch::Contains("not an object"));
    CHECK(with([](json&) {}).empty());
}

TEST_CASE("replay capture: not JSON, an empty program and a skipped capture", "[replay]") {
    Folder f;
    f.write("capture.json", "{\"format\": ");
    CHECK_THAT(read_capture(f.path()).problem, Catch::Contains("not valid JSON"));
    CHECK_THAT(problem_with(good_capture(), [](const Folder& g) { g.write("program.cl", ""); }),
               Catch::Contains("empty"));
    // A skipped capture has no data files and may have no args: it reads, with its reason.
    Folder s;
    json j = good_capture();
    j["skipped"] = "image argument 3";
    j["args"] = json::array();
    s.write("capture.json", j.dump());
    const auto load = read_capture(s.path());
    REQUIRE(load.capture);
    CHECK(load.capture->skipped == "image argument 3");
}

TEST_CASE("replay capture: folders without capture.json are incomplete and left out", "[replay]") {
    Folder root;
    fs::create_directories(root.path() / "1-0");
    fs::create_directories(root.path() / "1-1");
    std::ofstream(root.path() / "1-1" / "capture.json") << "[]";
    std::ofstream(root.path() / "1-0" / "capture.json.tmp") << "{}";
    const auto loads = read_captures(root.path());
    REQUIRE(loads.size() == 1);
    CHECK(loads[0].folder.filename() == "1-1");
    CHECK_FALSE(loads[0].capture);
    CHECK(read_captures(root.path() / "absent").empty());
}

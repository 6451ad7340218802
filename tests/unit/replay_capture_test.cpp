// The replay's capture reader on synthetic capture folders: a good one, and each kind of bad input
// becoming a one-line problem instead of a crash or a read past a file.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <fstream>
#include <random>

#include "replay/capture_reader.hpp"
#include "replay_test_support.hpp"

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
    CHECK_THAT(with([](json& j) { j["args"][2]["kind"] = "pointer"; }),
               Catch::Contains("not buffer, image, sampler, scalar or local"));
    CHECK_THAT(with([](json& j) { j["program"]["file"] = "program.spv"; }), Catch::Contains("is not program.cl"));
    CHECK_THAT(with([](json& j) { j["program"]["origin"] = "builtin"; }), Catch::Contains("origin"));
    CHECK_THAT(with([](json& j) { j["traced_ns"] = -1; }), Catch::Contains("traced_ns"));
    CHECK_THAT(with([](json& j) { j["args"] = 3; }), Catch::Contains("args is not an array"));
    CHECK_THAT(with([](json& j) { j = json::array(); }), Catch::Contains("not an object"));
    CHECK(with([](json&) {}).empty());
}

namespace {

// A 4 x 2 RGBA float image (16 bytes a pixel, 128 bytes) and a sampler, beside the good capture's
// arguments.
json image_capture() {
    json j = good_capture();
    j["args"].push_back(clprobe::test::image_arg_json());
    j["args"].push_back({{"index", 4},
                         {"kind", "sampler"},
                         {"normalized_coords", false},
                         {"addressing_mode", 0x1131},
                         {"filter_mode", 0x1140}});
    return j;
}

void write_image(const Folder& f) {
    f.write("arg3.in", std::string(128, 'c'));
    f.write("arg3.out", std::string(128, 'd'));
}

}  // namespace

TEST_CASE("replay capture: images and samplers read with their shapes", "[replay]") {
    Folder f;
    write_data(f);
    write_image(f);
    f.write("capture.json", image_capture().dump());
    const CaptureLoad load = read_capture(f.path());
    INFO(load.problem);
    REQUIRE(load.capture);
    const auto& args = load.capture->args;
    REQUIRE(args.size() == 5);
    CHECK(args[3].kind == ArgKind::image);
    CHECK(args[3].has_data());
    CHECK(args[3].size == 128);
    CHECK(args[3].flags == 4);
    CHECK(args[3].image.channel_order == 0x10B5);
    CHECK(args[3].image.channel_type == 0x10DE);
    CHECK(args[3].image.element_size == 16);
    CHECK(image_region(args[3].image) == Range{4, 2, 1});
    CHECK(args[3].output == f.path() / "arg3.out");
    CHECK(args[4].kind == ArgKind::sampler);
    CHECK_FALSE(args[4].has_data());
    CHECK_FALSE(args[4].sampler.normalized_coords);
    CHECK(args[4].sampler.addressing_mode == 0x1131);
    CHECK(args[4].sampler.filter_mode == 0x1140);

    // The regions of the other image types: layers are a 1-D array's second extent, a 2-D array's third.
    ImageShape s;
    s.width = 8;
    s.height = 4;
    s.depth = 2;
    s.array_size = 3;
    s.type = image1d_type;
    CHECK(image_region(s) == Range{8, 1, 1});
    s.type = image1d_buffer_type;
    CHECK(image_region(s) == Range{8, 1, 1});
    s.type = image1d_array_type;
    CHECK(image_region(s) == Range{8, 3, 1});
    s.type = image2d_array_type;
    CHECK(image_region(s) == Range{8, 4, 3});
    s.type = image3d_type;
    CHECK(image_region(s) == Range{8, 4, 2});
}

TEST_CASE("replay capture: each bad image or sampler field is a one-line problem", "[replay]") {
    auto with = [](const std::function<void(json&)>& edit) {
        json j = image_capture();
        edit(j);
        return problem_with(j, write_image);
    };
    CHECK(with([](json&) {}).empty());
    CHECK_THAT(with([](json& j) { j["args"][3]["image_type"] = 0x10F0; }), Catch::Contains("image_type 4336"));
    CHECK_THAT(with([](json& j) { j["args"][3]["image_type"] = 0x10F7; }), Catch::Contains("image_type"));
    CHECK_THAT(with([](json& j) { j["args"][3]["channel_order"] = 7; }), Catch::Contains("channel_order 7"));
    CHECK_THAT(with([](json& j) { j["args"][3]["channel_type"] = 0x10E1; }), Catch::Contains("channel_type"));
    CHECK_THAT(with([](json& j) { j["args"][3]["element_size"] = 0; }), Catch::Contains("element_size 0"));
    CHECK_THAT(with([](json& j) { j["args"][3]["element_size"] = 32; }), Catch::Contains("element_size 32"));
    CHECK_THAT(with([](json& j) { j["args"][3]["width"] = 0; }), Catch::Contains("width 0"));
    CHECK_THAT(with([](json& j) { j["args"][3]["height"] = "2"; }), Catch::Contains("height is not an integer"));
    CHECK_THAT(with([](json& j) { j["args"][3].erase("depth"); }), Catch::Contains("'depth' is missing"));
    // Extents a type does not have must be 1.
    CHECK_THAT(with([](json& j) { j["args"][3]["depth"] = 2; }), Catch::Contains("not 3-D"));
    CHECK_THAT(with([](json& j) { j["args"][3]["array_size"] = 2; }), Catch::Contains("no array"));
    CHECK_THAT(with([](json& j) { j["args"][3]["image_type"] = 0x10F4; }), Catch::Contains("without rows"));
    // The size must be the pixels' bytes, and the files that size.
    CHECK_THAT(with([](json& j) { j["args"][3]["width"] = 8; }), Catch::Contains("exceed its size 128"));
    CHECK_THAT(with([](json& j) { j["args"][3]["element_size"] = 8; }), Catch::Contains("is not 8 bytes x 8 pixels"));
    CHECK_THAT(with([](json& j) {
                   j["args"][3]["width"] = 1ll << 32;
                   j["args"][3]["height"] = 1ll << 32;
               }),
               Catch::Contains("exceed its size"));  // no overflow in the product
    CHECK_THAT(with([](json& j) { j["args"][3]["size"] = 256; }), Catch::Contains("holds 128 bytes"));
    CHECK_THAT(with([](json& j) { j["args"][3]["flags"] = 1 << 13; }), Catch::Contains("unknown bits"));
    CHECK_THAT(with([](json& j) { j["args"][3]["input"] = "/etc/passwd"; }), Catch::Contains("not a file name"));
    CHECK_THAT(with([](json& j) { j["args"][4]["normalized_coords"] = 1; }), Catch::Contains("not true or false"));
    CHECK_THAT(with([](json& j) { j["args"][4]["addressing_mode"] = 0x1135; }), Catch::Contains("addressing_mode"));
    CHECK_THAT(with([](json& j) { j["args"][4]["filter_mode"] = 0x1142; }), Catch::Contains("filter_mode"));
    CHECK_THAT(with([](json& j) { j["args"][4].erase("filter_mode"); }), Catch::Contains("'filter_mode' is missing"));
}

TEST_CASE("replay capture: images and samplers only where the kernel takes them", "[replay]") {
    CapturedArg image, sampler, scalar, buffer;
    image.kind = ArgKind::image;
    image.index = 0;
    sampler.kind = ArgKind::sampler;
    sampler.index = 1;
    scalar.kind = ArgKind::scalar;
    scalar.index = 1;
    buffer.kind = ArgKind::buffer;
    buffer.index = 2;
    CHECK_FALSE(arg_kind_mismatch(image, "image2d_t"));
    CHECK_FALSE(arg_kind_mismatch(image, "image1d_buffer_t"));
    CHECK_FALSE(arg_kind_mismatch(sampler, "sampler_t"));
    CHECK_FALSE(arg_kind_mismatch(scalar, "float"));
    CHECK_FALSE(arg_kind_mismatch(buffer, "float*"));
    CHECK_FALSE(arg_kind_mismatch(buffer, "image_params*"));  // a struct's name is no image type
    // A sampler's handle kept as a scalar (a layer without the driver's argument info).
    CHECK(arg_kind_mismatch(scalar, "sampler_t") == "argument 1 is a sampler_t in the kernel but a captured scalar");
    CHECK(arg_kind_mismatch(buffer, "image2d_t") == "argument 2 is a image2d_t in the kernel but a captured buffer");
    CHECK(arg_kind_mismatch(image, "float*"));
    CHECK(arg_kind_mismatch(sampler, "ulong"));
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

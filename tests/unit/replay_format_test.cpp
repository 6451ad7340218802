// The pure part of the trace layer's capture for replay (src/layer/replay_format.hpp): how an
// argument is classified, the budget, the skip reasons, and capture.json (clprobe.replay.v1).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "layer/replay_format.hpp"
#include "replay_test_support.hpp"

using namespace clprobe::layer::replay;

TEST_CASE("replay: clSetKernelArg values are classified as the capture contract says", "[replay]") {
    CHECK(classify_arg(8, false, true) == ArgKind::buffer);    // a cl_mem the layer saw created
    CHECK(classify_arg(8, false, false) == ArgKind::scalar);   // 8 bytes that are no known cl_mem
    CHECK(classify_arg(4096, true, false) == ArgKind::local);  // NULL value with a size
    CHECK(classify_arg(4, false, false) == ArgKind::scalar);
    CHECK(classify_arg(0, true, false) == ArgKind::scalar);          // no size: nothing to allocate
    CHECK(classify_arg(8, false, false, true) == ArgKind::sampler);  // a live cl_sampler the layer saw created
}

TEST_CASE("replay: argument type names force the kinds a replay cannot rebuild", "[replay]") {
    CHECK(kind_from_type_name("image2d_t") == ArgKind::image);
    CHECK(kind_from_type_name("sampler_t") == ArgKind::sampler);
    CHECK(kind_from_type_name("pipe int") == ArgKind::pipe);
    CHECK(kind_from_type_name("queue_t") == ArgKind::unknown);
    CHECK_FALSE(kind_from_type_name("float*").has_value());
    CHECK_FALSE(kind_from_type_name("uint").has_value());
}

TEST_CASE("replay: skip reasons name the argument", "[replay]") {
    CHECK_FALSE(arg_skip_reason(ArgKind::buffer, 0));
    CHECK_FALSE(arg_skip_reason(ArgKind::local, 1));
    CHECK_FALSE(arg_skip_reason(ArgKind::scalar, 2));
    CHECK_FALSE(arg_skip_reason(ArgKind::image, 3));
    CHECK_FALSE(arg_skip_reason(ArgKind::sampler, 2));
    CHECK(arg_skip_reason(ArgKind::svm, 1) == "SVM pointer argument 1");
    CHECK(arg_skip_reason(ArgKind::pipe, 4) == "pipe or unknown argument 4");
    CHECK(arg_skip_reason(ArgKind::unknown, 5) == "pipe or unknown argument 5");
    CHECK(source_skip_reason("kernel void k() { printf(\"%d\", 1); }") ==
          "kernel uses printf (a call at line 1 of the program's source; comments and strings are not read)");
    CHECK_THAT(*source_skip_reason("kernel void k(queue_t q) { enqueue_kernel(q, 0, r, ^{}); }"),
               Catch::StartsWith("device-side enqueue (a call at line 1"));
    // Only a call in the code: a word in a comment or a string is not one (OpenMM's PME kernels).
    CHECK_FALSE(source_skip_reason("// printf(\"x\") was here\nkernel void k() {}"));
    CHECK_FALSE(source_skip_reason("/* use printf (\"%d\", i) to debug */ kernel void k() {}"));
    CHECK_FALSE(source_skip_reason("constant char* s = \"printf(\\\"\";\nkernel void k() {}"));
    CHECK_FALSE(source_skip_reason("kernel void k() { int my_printf = 0; int printf_count = 1; }"));
    // The line of the call, past a comment that mentions it over two lines.
    CHECK_THAT(*source_skip_reason("/* printf\n(\"x\") */\nkernel void k() {\n printf (\"%d\", 1); }"),
               Catch::StartsWith("kernel uses printf (a call at line 4 "));
    CHECK(code_only("a /* b */ c // d\ne \"f\" 'g'") == "a         c     \ne \" \" ' '");
    CHECK_FALSE(source_skip_reason("kernel void k(global float* x) { x[0] = 1; }"));
}

TEST_CASE("replay: images are read whole, as their type's region; mipmaps and samples are not", "[replay]") {
    ImageShape s{image2d, 0x10B5, 0x10DE, 16, 64, 32, 1, 1};
    CHECK(image_region(s) == std::array<uint64_t, 3>{64, 32, 1});
    CHECK(image_bytes(s) == 64 * 32 * 16);
    s = {image1d_array, 0x10B0, 0x10D2, 1, 100, 1, 1, 5};
    CHECK(image_region(s) == std::array<uint64_t, 3>{100, 5, 1});
    s = {image2d_array, 0x10B0, 0x10D2, 2, 8, 4, 1, 3};
    CHECK(image_bytes(s) == 8 * 4 * 3 * 2);
    s = {image3d, 0x10B0, 0x10D2, 4, 8, 4, 2, 1};
    CHECK(image_region(s) == std::array<uint64_t, 3>{8, 4, 2});
    s = {image1d_buffer, 0x10B0, 0x10D2, 4, 1000, 1, 1, 1};
    CHECK(image_bytes(s) == 4000);
    s.type = 0x10F0;  // a buffer is no image
    CHECK_FALSE(image_region(s));
    CHECK(image_bytes(s) == 0);
    CHECK_FALSE(image_skip_reason(2, image2d, 0, 0));
    CHECK_FALSE(image_skip_reason(2, image2d, 1, 1));  // one level, one sample: the image itself
    CHECK(image_skip_reason(2, image2d, 3, 0) == "mipmapped image argument 2");
    CHECK(image_skip_reason(2, image2d, 0, 4) == "multisampled image argument 2");
    CHECK(image_skip_reason(1, 0x10F7, 0, 0) == "image argument 1 of memory object type 0x10f7");
}

TEST_CASE("replay: the budget takes what fits and says why the rest does not", "[replay]") {
    CaptureBudget budget(256ull << 20);
    CHECK_FALSE(budget.charge(100ull << 20));
    CHECK(budget.left() == 156ull << 20);
    const auto refused = budget.charge(600ull << 20);
    REQUIRE(refused);
    CHECK(*refused == "inputs and outputs 600.0 MiB exceed the capture budget (156.0 MiB left of 256.0 MiB)");
    CHECK(budget.left() == 156ull << 20);  // a refusal takes nothing
    // One capture takes at most half the budget, so a first large kernel cannot starve the rest.
    const auto greedy = budget.charge(129ull << 20);
    REQUIRE(greedy);
    CHECK(*greedy ==
          "inputs and outputs 129.0 MiB exceed half the capture budget (128.0 MiB of 256.0 MiB): one "
          "kernel may not take the room of all the others");
    CHECK_FALSE(budget.charge(128ull << 20));  // half fits
    CHECK_FALSE(budget.charge(28ull << 20));   // exactly what is left fits
    CHECK(budget.left() == 0);
    CHECK(budget.charge(1));
    budget.refund(56ull << 20);
    CHECK(budget.left() == 56ull << 20);
    budget.refund(1ull << 40);  // never more than was used
    CHECK(budget.left() == budget.total());
}

TEST_CASE("replay: capture.json carries every field of clprobe.replay.v1", "[replay]") {
    CaptureRecord r;
    r.pid = 1234;
    r.kernel = "saxpy";
    r.launch_ordinal = 2;
    r.device = {"dev \"x\"", "vendor", "platform", "1.0"};
    r.origin = "source";
    r.options = "-cl-std=CL1.2";
    r.work_dim = 2;
    r.global_size = {64, 32, 0};
    r.local_size = std::array<uint64_t, 3>{8, 4, 0};
    r.args.push_back({0, ArgKind::buffer, 4096, 1, {}});
    r.args.push_back({1, ArgKind::scalar, 4, 0, {0x00, 0x00, 0x80, 0x3f}});
    r.args.push_back({2, ArgKind::local, 256, 0, {}});
    CaptureArg image{3, ArgKind::image, 128, 4, {}};
    image.image = {image2d, 0x10B5, 0x10DE, 16, 4, 2, 1, 1};
    r.args.push_back(image);
    CaptureArg sampler{4, ArgKind::sampler, 0, 0, {}};
    sampler.sampler = {true, 0x1132, 0x1141};
    r.args.push_back(sampler);
    r.traced_ns = 123456;
    const auto j = nlohmann::json::parse(capture_json(r));
    CHECK(j["format"] == "clprobe.replay.v1");
    CHECK(j["pid"] == 1234);
    CHECK(j["kernel"] == "saxpy");
    CHECK(j["launch_ordinal"] == 2);
    CHECK(j["device"]["name"] == "dev \"x\"");
    CHECK(j["device"]["driver_version"] == "1.0");
    CHECK(j["program"] == nlohmann::json{{"origin", "source"}, {"file", "program.cl"}, {"options", "-cl-std=CL1.2"}});
    CHECK(j["work_dim"] == 2);
    CHECK(j["global_offset"].is_null());
    CHECK(j["global_size"] == nlohmann::json{64, 32});
    CHECK(j["local_size"] == nlohmann::json{8, 4});
    REQUIRE(j["args"].size() == 5);
    CHECK(j["args"][0] == nlohmann::json{{"index", 0},
                                         {"kind", "buffer"},
                                         {"size", 4096},
                                         {"flags", 1},
                                         {"input", "arg0.in"},
                                         {"output", "arg0.out"}});
    CHECK(j["args"][1] == nlohmann::json{{"index", 1}, {"kind", "scalar"}, {"bytes_hex", "0000803f"}});
    CHECK(j["args"][2] == nlohmann::json{{"index", 2}, {"kind", "local"}, {"size", 256}});
    CHECK(j["args"][3] == clprobe::test::image_arg_json());
    CHECK(j["args"][4] == nlohmann::json{{"index", 4},
                                         {"kind", "sampler"},
                                         {"normalized_coords", true},
                                         {"addressing_mode", 0x1132},
                                         {"filter_mode", 0x1141}});
    CHECK(j["traced_ns"] == 123456);
    CHECK(j["skipped"].is_null());
}

TEST_CASE("replay: a skipped capture has its reason, no arguments and no timing", "[replay]") {
    CaptureRecord r;
    r.kernel = "k";
    r.global_size = {16, 0, 0};
    r.global_offset = std::array<uint64_t, 3>{4, 0, 0};
    r.skipped = "image argument 3";
    const auto j = nlohmann::json::parse(capture_json(r));
    CHECK(j["skipped"] == "image argument 3");
    CHECK(j["args"].empty());
    CHECK(j["traced_ns"].is_null());
    CHECK(j["local_size"].is_null());
    CHECK(j["global_offset"] == nlohmann::json{4});
    CHECK(j["program"]["file"] == "");
    CHECK(json_escape("a\nb\x01") == "\"a\\nb\\u0001\"");
    CHECK(program_file("il") == "program.spv");
    CHECK(program_file("binary") == "program.bin");
    CHECK(data_file(3, true) == "arg3.out");
}

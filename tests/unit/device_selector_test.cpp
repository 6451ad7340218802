// Device selector grammar and matching over synthetic device listings (no OpenCL).
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/device_selector.hpp"

using namespace clprobe;

namespace {

DeviceListing listing(int platform, int device, int flat, std::string platform_name, std::string device_name,
                      std::string type) {
    DeviceListing d;
    d.platform_index = platform;
    d.device_index = device;
    d.flat_index = flat;
    d.platform_name = std::move(platform_name);
    d.device_name = std::move(device_name);
    d.type = std::move(type);
    return d;
}

// A CPU platform first, then two GPUs on a second platform, then an accelerator.
std::vector<DeviceListing> mixed_machine() {
    return {
        listing(0, 0, 0, "Portable Computing Language", "cpu-haswell-Intel(R) Xeon(R) Gold 6338", "cpu"),
        listing(1, 0, 1, "NVIDIA CUDA", "NVIDIA H200", "gpu"),
        listing(1, 1, 2, "NVIDIA CUDA", "NVIDIA A100-SXM4-80GB", "gpu"),
        listing(2, 0, 3, "Xilinx", "xilinx_u250_gen3x16", "accelerator"),
    };
}

std::optional<std::size_t> select(std::string_view text, const std::vector<DeviceListing>& devices) {
    return match_device(parse_device_selector(text), devices);
}

}  // namespace

TEST_CASE("parse_device_selector: P:D gives a position", "[selector]") {
    auto check = [](std::string_view text, int platform, int device) {
        INFO("selector '" << text << "'");
        const DeviceSelector sel = parse_device_selector(text);
        REQUIRE(std::holds_alternative<SelectByPosition>(sel));
        CHECK(std::get<SelectByPosition>(sel).platform == platform);
        CHECK(std::get<SelectByPosition>(sel).device == device);
    };
    check("0:0", 0, 0);
    check("0:1", 0, 1);
    check("12:34", 12, 34);
    check(" 2 : 3 ", 2, 3);
}

TEST_CASE("parse_device_selector: N gives a flat index", "[selector]") {
    auto check = [](std::string_view text, int index) {
        INFO("selector '" << text << "'");
        const DeviceSelector sel = parse_device_selector(text);
        REQUIRE(std::holds_alternative<SelectByFlatIndex>(sel));
        CHECK(std::get<SelectByFlatIndex>(sel).index == index);
    };
    check("0", 0);
    check("3", 3);
    check("  7  ", 7);
    check("42", 42);
}

TEST_CASE("parse_device_selector: type keywords are case-insensitive and normalised", "[selector]") {
    auto check = [](std::string_view text, const std::string& type) {
        INFO("selector '" << text << "'");
        const DeviceSelector sel = parse_device_selector(text);
        REQUIRE(std::holds_alternative<SelectByType>(sel));
        CHECK(std::get<SelectByType>(sel).type == type);
    };
    check("gpu", "gpu");
    check("GPU", "gpu");
    check("cpu", "cpu");
    check("Cpu", "cpu");
    check("accelerator", "accelerator");
    check("ACCELERATOR", "accelerator");
    check(" gPu ", "gpu");
}

TEST_CASE("parse_device_selector: anything else is a name substring, case kept", "[selector]") {
    auto check = [](std::string_view text, const std::string& substring) {
        INFO("selector '" << text << "'");
        const DeviceSelector sel = parse_device_selector(text);
        REQUIRE(std::holds_alternative<SelectByName>(sel));
        CHECK(std::get<SelectByName>(sel).substring == substring);
    };
    check("A100", "A100");
    check("pocl", "pocl");
    check("  NVIDIA H200  ", "NVIDIA H200");
    check("gpus", "gpus");                                      // not exactly a keyword
    check("gfx:foo", "gfx:foo");                                // a colon between two non-indices is part of a name
    check("gfx90a:sramecc+:xnack-", "gfx90a:sramecc+:xnack-");  // ROCm names hold two colons
    check("-x", "-x");                                          // a dash not followed by digits is not a negative index
    check("Xeon(R) Gold", "Xeon(R) Gold");
}

TEST_CASE("parse_device_selector: malformed index-like text throws SelectorError", "[selector]") {
    for (const char* text : {"", "   ", "1:", ":0", ":", "1:x", "x:1", "0:1:2", "1:2:3", ":1:2", "-1", "-0", " -12 ",
                             "99999999999", "1:99999999999"}) {
        INFO("selector '" << text << "'");
        CHECK_THROWS_AS(parse_device_selector(text), SelectorError);
    }
}

TEST_CASE("match_device: default picks the first GPU even when it is not first", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(match_device(SelectDefault{}, devices) == std::optional<std::size_t>(1));
}

TEST_CASE("match_device: default falls back to the first device without a GPU", "[selector]") {
    const std::vector<DeviceListing> devices = {
        listing(0, 0, 0, "Xilinx", "xilinx_u250", "accelerator"),
        listing(1, 0, 1, "Portable Computing Language", "cpu-zen4", "cpu"),
    };
    CHECK(match_device(SelectDefault{}, devices) == std::optional<std::size_t>(0));
    CHECK(match_device(SelectDefault{}, {}) == std::nullopt);
}

TEST_CASE("match_device: P:D selects by platform and device index", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(select("0:0", devices) == std::optional<std::size_t>(0));
    CHECK(select("1:0", devices) == std::optional<std::size_t>(1));
    CHECK(select("1:1", devices) == std::optional<std::size_t>(2));
    CHECK(select("2:0", devices) == std::optional<std::size_t>(3));
    // Out of range on either side matches nothing.
    CHECK(select("0:1", devices) == std::nullopt);
    CHECK(select("1:2", devices) == std::nullopt);
    CHECK(select("5:0", devices) == std::nullopt);
}

TEST_CASE("match_device: N selects by flat index", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(select("0", devices) == std::optional<std::size_t>(0));
    CHECK(select("2", devices) == std::optional<std::size_t>(2));
    CHECK(select("3", devices) == std::optional<std::size_t>(3));
    CHECK(select("4", devices) == std::nullopt);

    // The flat index is the listing's field, not the position in the vector.
    const std::vector<DeviceListing> filtered = {mixed_machine()[0], mixed_machine()[2]};
    CHECK(select("2", filtered) == std::optional<std::size_t>(1));
    CHECK(select("1", filtered) == std::nullopt);
}

TEST_CASE("match_device: type selects the first device of that type", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(select("gpu", devices) == std::optional<std::size_t>(1));
    CHECK(select("CPU", devices) == std::optional<std::size_t>(0));
    CHECK(select("Accelerator", devices) == std::optional<std::size_t>(3));

    const std::vector<DeviceListing> cpu_only = {mixed_machine()[0]};
    CHECK(select("gpu", cpu_only) == std::nullopt);
    CHECK(select("accelerator", cpu_only) == std::nullopt);
}

TEST_CASE("match_device: name substring is case-insensitive on the device name", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(select("a100", devices) == std::optional<std::size_t>(2));
    CHECK(select("H200", devices) == std::optional<std::size_t>(1));
    CHECK(select("xeon(r) GOLD", devices) == std::optional<std::size_t>(0));
    CHECK(select("nvidia", devices) == std::optional<std::size_t>(1));  // first of two matches
    CHECK(select("no such device", devices) == std::nullopt);
}

TEST_CASE("match_device: name falls back to platform name plus device name", "[selector]") {
    const auto devices = mixed_machine();
    CHECK(select("portable", devices) == std::optional<std::size_t>(0));
    CHECK(select("cuda", devices) == std::optional<std::size_t>(1));
    // Spans the platform name and the device name.
    CHECK(select("cuda nvidia a100", devices) == std::optional<std::size_t>(2));
    CHECK(select("Language cpu-haswell", devices) == std::optional<std::size_t>(0));
}

TEST_CASE("match_device: a device-name match wins over an earlier platform-name match", "[selector]") {
    const std::vector<DeviceListing> devices = {
        listing(0, 0, 0, "NVIDIA CUDA", "Tesla V100-PCIE-32GB", "gpu"),
        listing(1, 0, 1, "Portable Computing Language", "pthread-NVIDIA Grace", "cpu"),
    };
    CHECK(select("nvidia", devices) == std::optional<std::size_t>(1));
    CHECK(select("cuda tesla", devices) == std::optional<std::size_t>(0));
}

TEST_CASE("match_device: a full device name with colons selects that device", "[selector]") {
    const std::vector<DeviceListing> devices = {
        listing(0, 0, 0, "AMD Accelerated Parallel Processing", "gfx90a:sramecc+:xnack-", "gpu"),
        listing(0, 1, 1, "AMD Accelerated Parallel Processing", "gfx942:sramecc+:xnack-", "gpu"),
    };
    CHECK(select("gfx942:sramecc+:xnack-", devices) == std::optional<std::size_t>(1));
    CHECK(select("gfx90a:sramecc+", devices) == std::optional<std::size_t>(0));
}

TEST_CASE("match_device: nothing matches in an empty listing", "[selector]") {
    const std::vector<DeviceListing> none;
    CHECK(select("0:0", none) == std::nullopt);
    CHECK(select("0", none) == std::nullopt);
    CHECK(select("gpu", none) == std::nullopt);
    CHECK(select("nvidia", none) == std::nullopt);
}

TEST_CASE("describe: names each selector form", "[selector]") {
    CHECK(describe(SelectDefault{}) == "default (first GPU, else first device)");
    CHECK(describe(parse_device_selector("1:2")) == "platform 1, device 2");
    CHECK(describe(parse_device_selector("3")) == "device #3");
    CHECK(describe(parse_device_selector("GPU")) == "first gpu device");
    CHECK(describe(parse_device_selector("H200")) == "name containing 'H200'");
}

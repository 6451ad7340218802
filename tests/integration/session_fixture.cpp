#include "session_fixture.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <random>

#include "cl/device_catalog.hpp"
#include "cl/device_query.hpp"
#include "cl/kernel_sources.hpp"
#include "core/device_selector.hpp"
#include "runtime/runner.hpp"

namespace clprobe::test {

namespace {

struct Opened {
    DeviceCatalog catalog;
    std::size_t index = 0;
    DeviceInfo info;
};

const Opened& opened() {
    static const Opened o = [] {
        Opened out;
        out.catalog = enumerate_devices();
        if (out.catalog.error) FAIL("no OpenCL platform: " << *out.catalog.error);
        DeviceSelector sel = SelectDefault{};
        if (const char* env = std::getenv("CLPROBE_DEVICE"); env && *env) sel = parse_device_selector(env);
        const auto index = match_device(sel, out.catalog.listings);
        if (!index) FAIL("no OpenCL device matches");
        out.index = *index;
        const auto& l = out.catalog.listings[out.index];
        out.info = query_device_info(out.catalog.devices[out.index], l,
                                     out.catalog.platforms[static_cast<std::size_t>(l.platform_index)]);
        return out;
    }();
    return o;
}

}  // namespace

DeviceSession& shared_session() {
    static DeviceSession session(opened().catalog.devices[opened().index], opened().info, KernelSources::embedded(),
                                 CacheConfig{});
    return session;
}

std::unique_ptr<DeviceSession> session_with_kernels(const std::filesystem::path& kernel_dir) {
    return std::make_unique<DeviceSession>(opened().catalog.devices[opened().index], opened().info,
                                           KernelSources::from_directory(kernel_dir), CacheConfig{});
}

std::filesystem::path patched_kernel_dir(const std::string& file, const std::string& from, const std::string& to) {
    std::random_device rd;
    const auto dir = std::filesystem::temp_directory_path() / ("clprobe-kernels-" + std::to_string(rd()));
    const KernelSources embedded = KernelSources::embedded();
    bool replaced = false;
    for (const auto& rel : embedded.files()) {
        std::string text = embedded.source(rel);
        if (rel == file) {
            const auto pos = text.find(from);
            REQUIRE(pos != std::string::npos);
            text.replace(pos, from.size(), to);
            replaced = true;
        }
        const auto path = dir / rel;
        std::filesystem::create_directories(path.parent_path());
        std::ofstream(path) << text;
    }
    REQUIRE(replaced);
    return dir;
}

ProbeResult run_quick(Probe& probe, DeviceSession& session) {
    RunOptions options;
    options.mode = RunMode::quick;
    std::vector<ProbeResult> earlier;
    ProbeContext ctx{&session, options, earlier, nullptr};
    return run_probe(probe, ctx);
}

void check_samples(const ProbeResult& r, ZeroSamples zero) {
    for (const auto& m : r.measurements) {
        INFO(r.id << ": " << m.metric << " " << labels_to_string(m.labels));
        REQUIRE_FALSE(m.samples.empty());
        const bool may_be_zero = zero == ZeroSamples::allowed || m.unit == "fraction" || m.unit == "relative";
        for (double s : m.samples) {
            CHECK(std::isfinite(s));
            if (may_be_zero)
                CHECK(s >= 0);
            else
                CHECK(s > 0);
        }
        CHECK(m.summary.n == m.samples.size());
        CHECK(m.summary.min <= m.summary.median);
        CHECK(m.summary.median <= m.summary.max);
    }
}

}  // namespace clprobe::test

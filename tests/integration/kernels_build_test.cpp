// Every embedded kernel builds on the test device, --kernel-dir sees the same files, and a kernel
// that does not compile is reported with its file name and the compiler's log.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "cl/cl_error.hpp"
#include "cl/embedded_kernels.hpp"
#include "cl/kernel_sources.hpp"
#include "session_fixture.hpp"

using namespace clprobe;

namespace {
std::filesystem::path source_kernel_dir() {
    return std::filesystem::path(CLPROBE_SOURCE_DIR) / "kernels";
}
}  // namespace

TEST_CASE("every embedded kernel builds with its default options", "[kernels]") {
    auto& session = test::shared_session();
    const auto files = KernelSources::embedded().files();
    // Every embedded file but the .clh parts programs include is a program of its own.
    const auto parts = std::count_if(embedded::kernels().begin(), embedded::kernels().end(),
                                     [](const auto& k) { return std::filesystem::path(k.path).extension() == ".clh"; });
    CHECK(parts >= 1);
    REQUIRE(files.size() + static_cast<std::size_t>(parts) == embedded::kernels().size());
    REQUIRE_FALSE(files.empty());
    for (const auto& file : files) {
        INFO("kernel file " << file);
        const auto& built = session.kernels().program(file);
        CHECK(built.program.getInfo<CL_PROGRAM_NUM_KERNELS>() > 0);
    }
}

TEST_CASE("the compute kernel builds in double precision where the device has it", "[kernels]") {
    auto& session = test::shared_session();
    if (!session.info().fp64)
        SUCCEED("device has no fp64");
    else
        CHECK_NOTHROW(session.kernels().program("peak/compute.cl", "-D REAL=double -D REAL_IS_DOUBLE"));
}

TEST_CASE("a kernel folder given with --kernel-dir holds the same files as the embedded copies", "[kernels]") {
    const auto from_disk = KernelSources::from_directory(source_kernel_dir());
    CHECK(from_disk.files() == KernelSources::embedded().files());
    for (const auto& file : from_disk.files())
        CHECK(from_disk.source(file) == KernelSources::embedded().source(file));
}

TEST_CASE("a kernel folder that does not exist or holds no kernels is refused", "[kernels]") {
    CHECK_THROWS_WITH(KernelSources::from_directory("/nonexistent/clprobe"), Catch::Contains("not a folder"));
    const auto empty = std::filesystem::temp_directory_path() / "clprobe-empty-kernel-dir";
    std::filesystem::create_directories(empty);
    CHECK_THROWS_WITH(KernelSources::from_directory(empty), Catch::Contains("no .cl files"));
}

TEST_CASE("a shared preamble is included in place, keeping the including file's line numbers", "[kernels]") {
    const auto sparse = KernelSources::embedded().source("glm/sparse.cl");
    CHECK_THAT(sparse, !Catch::Contains("#include \""));
    CHECK_THAT(sparse, Catch::Contains("#define REAL float"));
    const auto dir = std::filesystem::temp_directory_path() / "clprobe-include-kernel-dir";
    std::filesystem::create_directories(dir / "a");
    {
        std::ofstream(dir / "a" / "part.clh") << "#define ONE 1\n";
        std::ofstream(dir / "a" / "main.cl") << "// main\n#include \"a/part.clh\"\n__kernel void k(void) {}\n";
        std::ofstream(dir / "a" / "broken.cl") << "#include \"a/missing.clh\"\n";
    }
    const auto from_dir = KernelSources::from_directory(dir);
    CHECK(from_dir.files() == std::vector<std::string>{"a/broken.cl", "a/main.cl"});  // parts are not programs
    CHECK(from_dir.source("a/main.cl") == "// main\n#define ONE 1\n\n#line 3\n__kernel void k(void) {}\n");
    CHECK_THROWS_WITH(from_dir.source("a/broken.cl"), Catch::Contains("a/missing.clh"));
    std::filesystem::remove_all(dir);
}

TEST_CASE("a kernel that fails to build names its file and keeps the build log", "[kernels]") {
    const auto dir = test::patched_kernel_dir("peak/launch.cl", "__kernel void empty(void) {}",
                                              "__kernel void empty(void) { this is not OpenCL C; }");
    auto session = test::session_with_kernels(dir);
    try {
        session->kernels().program("peak/launch.cl");
        FAIL("the broken kernel built");
    } catch (const KernelBuildError& e) {
        CHECK(e.kernel_file() == "peak/launch.cl");
        CHECK(e.code() == CL_BUILD_PROGRAM_FAILURE);
        CHECK_THAT(std::string(e.what()), Catch::Contains("clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)"));
        CHECK_THAT(std::string(e.what()), Catch::Contains("peak/launch.cl"));
        CHECK_FALSE(e.log().empty());
    }
    std::filesystem::remove_all(dir);
}

TEST_CASE("a program built twice is served from memory, and from the binary cache across sessions", "[kernels]") {
    auto& session = test::shared_session();
    const auto& first = session.kernels().program("peak/launch.cl");
    const auto& second = session.kernels().program("peak/launch.cl");
    CHECK(&first == &second);
    if (session.kernels().cache().enabled) {
        // program() leaves a driver that caches its own builds (PoCL) to its cache, by the verdict
        // this machine's earlier runs stored: put the binary there whatever that verdict is.
        session.kernels().store_in_binary_cache("peak/launch.cl", "");
        auto cached = session.kernels().build_from_binary_cache("peak/launch.cl", "");
        REQUIRE(cached.has_value());
        CHECK(cached->origin == BuildOrigin::binary_cache);
        CHECK(cl::Kernel(cached->program, "empty")() != nullptr);
    }
}

// Fuzz target: the replay's capture reader (docs/replay.md, "Capture format"), and what the replay
// makes of a capture before it needs a device: the result of an invalid or skipped capture, its
// reliability, findings, what-if table and JSON. capture.json lies in any program's records folder,
// so whatever its bytes, clprobe must say why it cannot replay it: a crash, a hang or an uncaught
// exception is a bug.
//
// Each input is written as capture.json into one folder that also holds the files the seed
// corpus (tests/fuzz/corpus/capture_reader) names: program.cl, program.spv, program.bin, and
// argN.in / argN.out of 32768, 16, 32768 and 4096 bytes for N = 0..3.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "json/replay_json.hpp"
#include "render/replay_text.hpp"
#include "replay/capture_reader.hpp"
#include "rules/replay_findings.hpp"

namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& bytes) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

void remove_folder();

const fs::path& folder() {
    static const fs::path path = [] {
        fs::path p = fs::temp_directory_path() / ("clprobe-capture-fuzz-" + std::to_string(::getpid()));
        fs::create_directories(p);
        write(p / "program.cl", "kernel void k(global float* x) { x[0] = 1; }\n");
        write(p / "program.spv", std::string(20, '\x07'));
        write(p / "program.bin", std::string(20, 'b'));
        const std::size_t sizes[] = {32768, 16, 32768, 4096};
        for (std::size_t i = 0; i < 4; ++i) {
            write(p / ("arg" + std::to_string(i) + ".in"), std::string(sizes[i], 'i'));
            write(p / ("arg" + std::to_string(i) + ".out"), std::string(sizes[i], 'o'));
        }
        std::atexit(remove_folder);
        return p;
    }();
    return path;
}

void remove_folder() {
    std::error_code ec;
    fs::remove_all(folder(), ec);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace clprobe;
    using namespace clprobe::replay;
    write(folder() / "capture.json", std::string(reinterpret_cast<const char*>(data), size));
    const CaptureLoad load = read_capture(folder());
    // As the engine fills a result before it looks for the device (replay_engine.cpp, replay_with).
    ReplayResult result;
    result.folder = load.folder.filename().string();
    if (!load.capture) {
        result.status = ReplayStatus::invalid;
        result.reason = load.problem;
    } else {
        const Capture& c = *load.capture;
        result.kernel = c.kernel;
        result.pid = c.pid;
        result.traced_ns = c.traced_ns;
        result.device = c.device.platform + " / " + c.device.name;
        result.status = c.skipped ? ReplayStatus::skipped : ReplayStatus::device_not_available;
        result.reason = c.skipped.value_or("no device here");
        for (const auto& a : c.args) {
            (void)to_string(a.kind);
            if (a.kind == ArgKind::image) (void)image_region(a.image);
            (void)arg_kind_mismatch(a, "sampler_t");
        }
    }
    judge_reliability(result);
    ReplayContext context;
    context.kernels[result.kernel] = KernelTotals{1e6, 10};
    context.wall_ns = 1e9;
    const std::vector<ReplayResult> results{result};
    const auto findings = replay_findings(results, context);
    (void)replay_text(results, findings);
    // As `clprobe replay --json` writes it: strict UTF-8 (a throw here is a bug the command would have).
    (void)replay_to_json(results, findings).dump(2);
    return 0;
}

#pragma once
// One captured kernel launch (the `clprobe.replay.v1` capture folder the trace layer writes under
// <records>/replay/<pid>-<n>/; docs/replay.md). Plain data: the reader validates it, the replay
// engine runs it, nothing here touches OpenCL.
#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace clprobe::replay {

inline constexpr const char* capture_format = "clprobe.replay.v1";

enum class ProgramOrigin { source, il, binary };
enum class ArgKind { buffer, scalar, local };

std::string_view to_string(ProgramOrigin o);
std::string_view to_string(ArgKind k);

struct CapturedDevice {
    std::string name, vendor, platform, driver_version;
};

struct CapturedArg {
    unsigned index = 0;
    ArgKind kind = ArgKind::buffer;
    std::uint64_t size = 0;                   // buffer bytes, or local-memory bytes
    std::uint64_t flags = 0;                  // cl_mem_flags as the program created the buffer
    std::filesystem::path input, output;      // buffers: absolute paths of argN.in / argN.out
    std::vector<unsigned char> scalar_bytes;  // scalars: the value as set by clSetKernelArg
};

using Range = std::array<std::uint64_t, 3>;  // unused dimensions are 1 (sizes) or 0 (offsets)

struct Capture {
    std::filesystem::path folder;
    long long pid = 0;
    std::string kernel;
    long long launch_ordinal = 1;
    CapturedDevice device;
    ProgramOrigin origin = ProgramOrigin::source;
    std::filesystem::path program_file;  // absolute
    std::string options;
    unsigned work_dim = 1;
    std::optional<Range> global_offset;
    Range global_size{1, 1, 1};
    std::optional<Range> local_size;  // nullopt: the program passed NULL
    std::vector<CapturedArg> args;    // ordered by index 0..n-1
    std::optional<long long> traced_ns;
    std::optional<std::string> skipped;  // the layer's reason; then nothing else is needed
};

// A capture folder as read: the capture, or why it cannot be replayed.
struct CaptureLoad {
    std::filesystem::path folder;
    std::optional<Capture> capture;
    std::string problem;  // one line; empty when capture is set
};

}  // namespace clprobe::replay

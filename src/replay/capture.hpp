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
enum class ArgKind { buffer, scalar, local, image, sampler };

std::string_view to_string(ProgramOrigin o);
std::string_view to_string(ArgKind k);

struct CapturedDevice {
    std::string name, vendor, platform, driver_version;
};

using Range = std::array<std::uint64_t, 3>;  // unused dimensions are 1 (sizes) or 0 (offsets)

// cl_mem_object_type values of the images a capture holds (the CL values: no OpenCL header here).
inline constexpr std::uint32_t image2d_type = 0x10F1, image3d_type = 0x10F2, image2d_array_type = 0x10F3,
                               image1d_type = 0x10F4, image1d_array_type = 0x10F5, image1d_buffer_type = 0x10F6;

// An image argument: its format and extents (1 where its type has no such extent). Its data files
// hold the pixels of level 0 tightly packed: rows of width x element_size bytes, then the next row,
// then the next slice or array layer.
struct ImageShape {
    std::uint32_t type = image2d_type;  // cl_mem_object_type
    std::uint32_t channel_order = 0;    // cl_channel_order
    std::uint32_t channel_type = 0;     // cl_channel_type
    std::uint64_t element_size = 0;     // bytes per pixel, as CL_IMAGE_ELEMENT_SIZE said
    std::uint64_t width = 1, height = 1, depth = 1, array_size = 1;
};

// The region (width, height, depth) clEnqueueRead/WriteImage covers the whole image with: a 1-D
// array's layers are its second extent, a 2-D array's its third.
Range image_region(const ImageShape& s);

struct SamplerShape {
    bool normalized_coords = false;
    std::uint32_t addressing_mode = 0;  // cl_addressing_mode
    std::uint32_t filter_mode = 0;      // cl_filter_mode
};

struct CapturedArg {
    unsigned index = 0;
    ArgKind kind = ArgKind::buffer;
    std::uint64_t size = 0;                   // buffer or image bytes, or local-memory bytes
    std::uint64_t flags = 0;                  // cl_mem_flags as the program created the buffer or image
    std::filesystem::path input, output;      // buffers, images: absolute paths of argN.in / argN.out
    std::vector<unsigned char> scalar_bytes;  // scalars: the value as set by clSetKernelArg
    ImageShape image;                         // images
    SamplerShape sampler;                     // samplers
    bool has_data() const { return kind == ArgKind::buffer || kind == ArgKind::image; }
};

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

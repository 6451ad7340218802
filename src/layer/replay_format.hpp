#pragma once
// The pure part of capturing kernel launches for replay (`clprobe trace --replay N`; docs/trace.md,
// "Capture for replay"): how a clSetKernelArg value is classified, the per-process byte budget,
// the reasons a kernel is skipped, and the text of capture.json (format clprobe.replay.v1, the
// contract with clprobe's replay). No OpenCL calls here, so the unit tests check it directly;
// replay_capture.cpp does the driver work.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe::layer::replay {

inline constexpr const char* format_id = "clprobe.replay.v1";

// What an argument was set to. `buffer` is what clSetKernelArg can tell (a cl_mem the layer saw
// created); at capture the memory object's type may turn it into an image or a pipe.
enum class ArgKind : uint8_t { buffer, local, scalar, svm, image, sampler, pipe, unknown };

// clSetKernelArg(kernel, index, size, value): a NULL value with a size is local memory; a value
// holding a cl_mem the layer saw created is a buffer (or, at capture, an image); one holding a
// live cl_sampler the layer saw created is a sampler; anything else is a scalar's bytes.
ArgKind classify_arg(size_t size, bool value_is_null, bool value_is_known_mem, bool value_is_known_sampler = false);

// A kernel argument's type name (clGetKernelArgInfo CL_KERNEL_ARG_TYPE_NAME, where the driver
// gives it): the kind it forces, or nullopt when the name says nothing the layer cannot replay.
std::optional<ArgKind> kind_from_type_name(std::string_view type_name);

// The one-line reason a kernel with this argument is not captured, or nullopt when it can be
// (buffers, local memory, scalars, images and samplers; an image or sampler may still be refused
// at capture by what its object says: image_skip_reason, sampler_skip_reason).
std::optional<std::string> arg_skip_reason(ArgKind kind, uint32_t index);

// A program's source that a standalone launch cannot reproduce: printf (its output would go to
// clprobe's stdout) or device-side enqueue. Program-wide: the layer does not parse which kernel
// calls what, so every kernel of such a program is skipped. The reason names the line of the call
// as its evidence.
std::optional<std::string> source_skip_reason(std::string_view source);
// The source with comments and string and character literals blanked (newlines kept): code alone.
std::string code_only(std::string_view source);
// Where `code` first calls `name` (the whole word followed by optional spaces and '('), if it does.
std::optional<size_t> first_call(std::string_view code, std::string_view name);

// "600.0 MiB"
std::string mib_text(uint64_t bytes);

// The per-process bound on the bytes kept (inputs plus outputs of the captured buffers).
class CaptureBudget {
  public:
    explicit CaptureBudget(uint64_t total = 256ull << 20) : total_(total) {}
    // Takes `bytes` from what is left, or returns the reason it does not fit (nothing taken): more
    // than is left, or more than half of the whole budget.
    std::optional<std::string> charge(uint64_t bytes);
    // Gives back bytes charged for a capture that was not written.
    void refund(uint64_t bytes) { used_ -= bytes > used_ ? used_ : bytes; }
    uint64_t left() const { return total_ - used_; }
    uint64_t total() const { return total_; }

  private:
    uint64_t total_ = 0;
    uint64_t used_ = 0;
};

// An image as clGetImageInfo describes it; the capture's data files hold its pixels tightly
// packed (clEnqueueReadImage with zero row and slice pitch): width x height x depth x array_size
// elements of element_size bytes, rows in order, then slices or array layers.
struct ImageShape {
    uint32_t type = 0;           // cl_mem_object_type: CL_MEM_OBJECT_IMAGE1D .. IMAGE1D_BUFFER
    uint32_t channel_order = 0;  // cl_channel_order
    uint32_t channel_type = 0;   // cl_channel_type
    uint64_t element_size = 0;   // CL_IMAGE_ELEMENT_SIZE
    uint64_t width = 1, height = 1, depth = 1, array_size = 1;  // 1 where the type has no such extent
};

// The cl_mem_object_type values of the images a capture keeps (the CL values, so this file needs
// no OpenCL header).
inline constexpr uint32_t image2d = 0x10F1, image3d = 0x10F2, image2d_array = 0x10F3, image1d = 0x10F4,
                          image1d_array = 0x10F5, image1d_buffer = 0x10F6;

// The width, height and depth of the region that reads a whole image of this type with
// clEnqueueReadImage (a 1-D array's layers are its second extent, a 2-D array's its third), or
// nullopt for a type that is no image.
std::optional<std::array<uint64_t, 3>> image_region(const ImageShape& shape);
// element_size x the region's volume; 0 for a type that is no image.
uint64_t image_bytes(const ImageShape& shape);
// What clGetImageInfo said that the capture does not reproduce: mipmaps, multisampling.
std::optional<std::string> image_skip_reason(uint32_t index, uint32_t type, uint64_t mip_levels, uint64_t samples);

// A sampler as clGetSamplerInfo describes it.
struct SamplerShape {
    bool normalized_coords = false;
    uint32_t addressing_mode = 0;  // cl_addressing_mode
    uint32_t filter_mode = 0;      // cl_filter_mode
};

struct CaptureArg {
    uint32_t index = 0;
    ArgKind kind = ArgKind::scalar;
    uint64_t size = 0;           // buffer, image: its bytes; local: the local size; scalar: the value's bytes
    uint64_t flags = 0;          // buffer, image: cl_mem_flags as created
    std::vector<uint8_t> bytes;  // scalar: the value
    ImageShape image;            // image
    SamplerShape sampler;        // sampler
};

struct DeviceText {
    std::string name, vendor, platform, driver_version;
};

struct CaptureRecord {
    uint64_t pid = 0;
    std::string kernel;
    uint64_t launch_ordinal = 0;
    DeviceText device;
    std::string origin;  // "source" | "il" | "binary" (empty: unknown, only in a skipped capture)
    std::string options;
    uint32_t work_dim = 1;
    std::optional<std::array<uint64_t, 3>> global_offset;
    std::array<uint64_t, 3> global_size{};
    std::optional<std::array<uint64_t, 3>> local_size;
    std::vector<CaptureArg> args;
    std::optional<uint64_t> traced_ns;
    std::optional<std::string> skipped;
    // false: the arguments' contents after the launch were not kept ("output": null), a capture
    // for counting the launch's work only (`trace --work` without `--replay`).
    bool outputs = true;
};

// The program file of an origin: program.cl, program.spv, program.bin ("" for an unknown origin).
std::string program_file(std::string_view origin);
// "arg3.in" / "arg3.out" (buffers and images)
std::string data_file(uint32_t index, bool output);

std::string json_escape(std::string_view text);
// capture.json's text, one object and a newline.
std::string capture_json(const CaptureRecord& r);

}  // namespace clprobe::layer::replay

#include "replay/capture_reader.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <set>
#include <system_error>

#include "core/atomic_file.hpp"

namespace clprobe::replay {

namespace fs = std::filesystem;

std::string_view to_string(ProgramOrigin o) {
    switch (o) {
        case ProgramOrigin::source:
            return "source";
        case ProgramOrigin::il:
            return "il";
        case ProgramOrigin::binary:
            return "binary";
    }
    return "?";
}

std::string_view to_string(ArgKind k) {
    switch (k) {
        case ArgKind::buffer:
            return "buffer";
        case ArgKind::scalar:
            return "scalar";
        case ArgKind::local:
            return "local";
        case ArgKind::image:
            return "image";
        case ArgKind::sampler:
            return "sampler";
    }
    return "?";
}

Range image_region(const ImageShape& s) {
    switch (s.type) {
        case image1d_array_type:
            return {s.width, s.array_size, 1};
        case image2d_type:
            return {s.width, s.height, 1};
        case image2d_array_type:
            return {s.width, s.height, s.array_size};
        case image3d_type:
            return {s.width, s.height, s.depth};
        default:  // 1-D images and 1-D image buffers
            return {s.width, 1, 1};
    }
}

namespace {

// capture.json is small (its data lives in the argN files); anything larger is not one.
constexpr std::size_t max_json_bytes = 4u << 20;
// clSetKernelArg scalars: the largest OpenCL type is a double16 or long16 (128 bytes).
constexpr std::size_t max_scalar_bytes = 128;
// Every cl_mem_flags bit OpenCL 3.0 defines (CL_MEM_READ_WRITE .. CL_MEM_KERNEL_READ_AND_WRITE).
constexpr std::uint64_t known_mem_flags = (1u << 13) - 1;
// The core spec's values: cl_channel_order CL_R .. CL_ABGR, cl_channel_type CL_SNORM_INT8 ..
// CL_UNORM_INT_101010_2, cl_addressing_mode CL_ADDRESS_NONE .. CL_ADDRESS_MIRRORED_REPEAT,
// cl_filter_mode CL_FILTER_NEAREST .. CL_FILTER_LINEAR.
constexpr long long first_channel_order = 0x10B0, last_channel_order = 0x10C3;
constexpr long long first_channel_type = 0x10D0, last_channel_type = 0x10E0;
constexpr long long first_addressing_mode = 0x1130, last_addressing_mode = 0x1134;
constexpr long long first_filter_mode = 0x1140, last_filter_mode = 0x1141;
// The largest pixel: four channels of 32 bits.
constexpr long long max_element_size = 16;
// An extent beyond any device's image limits (they are at most a few 2^16 per side, 2^27 pixels
// for a 1-D image buffer).
constexpr long long max_image_extent = 1ll << 32;

[[noreturn]] void fail(const std::string& why) {
    throw CaptureError(why);
}

const nlohmann::json& member(const nlohmann::json& j, const char* key, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) fail(fmt::format("{}: '{}' is missing", where, key));
    return j.at(key);
}

std::string string_of(const nlohmann::json& j, const char* key, const std::string& where) {
    const auto& v = member(j, key, where);
    if (!v.is_string()) fail(fmt::format("{}: '{}' is not a string", where, key));
    return v.get<std::string>();
}

// An integer in [lo, hi]; JSON floats (1.5, 1e3) are not integers here.
long long integer_of(const nlohmann::json& v, const std::string& what, long long lo, long long hi) {
    if (!v.is_number_integer()) fail(fmt::format("{} is not an integer", what));
    long long n = 0;
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(std::numeric_limits<long long>::max()))
            fail(fmt::format("{} {} is out of range", what, u));
        n = static_cast<long long>(u);
    } else {
        n = v.get<long long>();
    }
    if (n < lo || n > hi) fail(fmt::format("{} {} is out of range [{}, {}]", what, n, lo, hi));
    return n;
}

// A plain file name inside the capture folder (no folders, no "..": untrusted input).
fs::path data_file(const fs::path& folder, const std::string& name, const std::string& what) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        fail(fmt::format("{} '{}' is not a file name in the capture folder", what, name));
    return folder / name;
}

std::uint64_t file_length(const fs::path& path, const std::string& what) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) fail(fmt::format("{} {} is missing", what, path.filename().string()));
    const auto n = fs::file_size(path, ec);
    if (ec) fail(fmt::format("{} {}: {}", what, path.filename().string(), ec.message()));
    return n;
}

std::optional<Range> range_of(const nlohmann::json& v, const std::string& what, unsigned work_dim, bool offset,
                              bool may_be_null) {
    if (v.is_null()) {
        if (!may_be_null) fail(what + " is null");
        return std::nullopt;
    }
    if (!v.is_array() || v.size() != work_dim)
        fail(fmt::format("{} must be an array of work_dim ({}) entries", what, work_dim));
    Range r = offset ? Range{0, 0, 0} : Range{1, 1, 1};
    const long long lo = offset ? 0 : 1;
    for (unsigned d = 0; d < work_dim; ++d)
        r[d] = static_cast<std::uint64_t>(
            integer_of(v[d], fmt::format("{}[{}]", what, d), lo, std::numeric_limits<long long>::max()));
    return r;
}

std::vector<unsigned char> hex_bytes(const std::string& hex, const std::string& what) {
    if (hex.empty() || hex.size() % 2 != 0 || hex.size() / 2 > max_scalar_bytes)
        fail(fmt::format("{} must be 1 to {} bytes of hex", what, max_scalar_bytes));
    auto nibble = [&](char c) -> unsigned {
        if (c >= '0' && c <= '9') return static_cast<unsigned>(c - '0');
        if (c >= 'a' && c <= 'f') return static_cast<unsigned>(c - 'a' + 10);
        if (c >= 'A' && c <= 'F') return static_cast<unsigned>(c - 'A' + 10);
        fail(fmt::format("{} is not hex", what));
    };
    std::vector<unsigned char> out(hex.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = static_cast<unsigned char>(nibble(hex[2 * i]) * 16 + nibble(hex[2 * i + 1]));
    return out;
}

// size, flags and the two data files of a buffer or image; the files hold exactly `size` bytes.
void memory_fields(const nlohmann::json& a, const std::string& where, const fs::path& folder, CapturedArg& arg) {
    arg.size = static_cast<std::uint64_t>(
        integer_of(member(a, "size", where), where + ".size", 1, std::numeric_limits<long long>::max()));
    arg.flags = static_cast<std::uint64_t>(
        integer_of(member(a, "flags", where), where + ".flags", 0, std::numeric_limits<long long>::max()));
    if ((arg.flags & ~known_mem_flags) != 0) fail(fmt::format("{}.flags {:#x} has unknown bits", where, arg.flags));
    arg.input = data_file(folder, string_of(a, "input", where), where + ".input");
    // "output": null in a capture kept for counting work alone (no outputs to compare with).
    const bool has_output = !(a.contains("output") && a.at("output").is_null());
    if (has_output) arg.output = data_file(folder, string_of(a, "output", where), where + ".output");
    for (const auto& [path, what] :
         {std::pair{arg.input, where + ".input"}, std::pair{arg.output, where + ".output"}}) {
        if (path.empty()) continue;
        const auto n = file_length(path, what);
        if (n != arg.size)
            fail(fmt::format("{} {} holds {} bytes, not the argument's size {}", what, path.filename().string(), n,
                             arg.size));
    }
}

// An image's format and extents; its size must be element_size x the pixels of its region.
ImageShape image_of(const nlohmann::json& a, const std::string& where, std::uint64_t size) {
    auto field = [&](const char* key, long long lo, long long hi) {
        return integer_of(member(a, key, where), fmt::format("{}.{}", where, key), lo, hi);
    };
    ImageShape s;
    s.type = static_cast<std::uint32_t>(field("image_type", image2d_type, image1d_buffer_type));
    s.channel_order = static_cast<std::uint32_t>(field("channel_order", first_channel_order, last_channel_order));
    s.channel_type = static_cast<std::uint32_t>(field("channel_type", first_channel_type, last_channel_type));
    s.element_size = static_cast<std::uint64_t>(field("element_size", 1, max_element_size));
    s.width = static_cast<std::uint64_t>(field("width", 1, max_image_extent));
    s.height = static_cast<std::uint64_t>(field("height", 1, max_image_extent));
    s.depth = static_cast<std::uint64_t>(field("depth", 1, max_image_extent));
    s.array_size = static_cast<std::uint64_t>(field("array_size", 1, max_image_extent));
    const bool has_height = s.type == image2d_type || s.type == image2d_array_type || s.type == image3d_type;
    const bool has_layers = s.type == image1d_array_type || s.type == image2d_array_type;
    if (!has_height && s.height != 1) fail(fmt::format("{}.height {} of an image without rows", where, s.height));
    if (s.type != image3d_type && s.depth != 1)
        fail(fmt::format("{}.depth {} of an image that is not 3-D", where, s.depth));
    if (!has_layers && s.array_size != 1)
        fail(fmt::format("{}.array_size {} of an image that is no array", where, s.array_size));
    // element_size x width x height x depth, each step bounded by size: no overflow.
    std::uint64_t bytes = s.element_size;
    for (const std::uint64_t extent : image_region(s)) {
        if (bytes > size / extent)
            fail(fmt::format("{}: {} bytes of {} x {} x {} x {} pixels exceed its size {}", where, s.element_size,
                             s.width, s.height, s.depth, s.array_size, size));
        bytes *= extent;
    }
    if (bytes != size)
        fail(
            fmt::format("{}.size {} is not {} bytes x {} pixels", where, size, s.element_size, bytes / s.element_size));
    return s;
}

SamplerShape sampler_of(const nlohmann::json& a, const std::string& where) {
    SamplerShape s;
    const auto& normalized = member(a, "normalized_coords", where);
    if (!normalized.is_boolean()) fail(where + ".normalized_coords is not true or false");
    s.normalized_coords = normalized.get<bool>();
    s.addressing_mode = static_cast<std::uint32_t>(integer_of(
        member(a, "addressing_mode", where), where + ".addressing_mode", first_addressing_mode, last_addressing_mode));
    s.filter_mode = static_cast<std::uint32_t>(
        integer_of(member(a, "filter_mode", where), where + ".filter_mode", first_filter_mode, last_filter_mode));
    return s;
}

CapturedArg arg_of(const nlohmann::json& a, std::size_t position, const fs::path& folder) {
    const std::string where = fmt::format("args[{}]", position);
    if (!a.is_object()) fail(where + " is not an object");
    CapturedArg arg;
    arg.index = static_cast<unsigned>(integer_of(member(a, "index", where), where + ".index", 0, 1023));
    const std::string kind = string_of(a, "kind", where);
    if (kind == "buffer") {
        arg.kind = ArgKind::buffer;
        memory_fields(a, where, folder, arg);
    } else if (kind == "image") {
        arg.kind = ArgKind::image;
        memory_fields(a, where, folder, arg);
        arg.image = image_of(a, where, arg.size);
    } else if (kind == "sampler") {
        arg.kind = ArgKind::sampler;
        arg.sampler = sampler_of(a, where);
    } else if (kind == "scalar") {
        arg.kind = ArgKind::scalar;
        arg.scalar_bytes = hex_bytes(string_of(a, "bytes_hex", where), where + ".bytes_hex");
        arg.size = arg.scalar_bytes.size();
    } else if (kind == "local") {
        arg.kind = ArgKind::local;
        arg.size = static_cast<std::uint64_t>(
            integer_of(member(a, "size", where), where + ".size", 1, std::numeric_limits<long long>::max()));
    } else {
        fail(fmt::format("{}.kind '{}' is not buffer, image, sampler, scalar or local", where, kind));
    }
    return arg;
}

}  // namespace

Capture parse_capture(const nlohmann::json& j, const fs::path& folder) {
    if (!j.is_object()) fail("capture.json is not an object");
    const std::string format = string_of(j, "format", "capture");
    if (format != capture_format) fail(fmt::format("format '{}' is not {}", format, capture_format));
    Capture c;
    c.folder = folder;
    c.pid = integer_of(member(j, "pid", "capture"), "pid", 0, std::numeric_limits<long long>::max());
    c.kernel = string_of(j, "kernel", "capture");
    if (c.kernel.empty()) fail("kernel name is empty");
    c.launch_ordinal =
        integer_of(member(j, "launch_ordinal", "capture"), "launch_ordinal", 1, std::numeric_limits<long long>::max());
    const auto& dev = member(j, "device", "capture");
    c.device = {string_of(dev, "name", "device"), string_of(dev, "vendor", "device"),
                string_of(dev, "platform", "device"), string_of(dev, "driver_version", "device")};
    const auto& traced = member(j, "traced_ns", "capture");
    if (!traced.is_null()) c.traced_ns = integer_of(traced, "traced_ns", 1, std::numeric_limits<long long>::max());
    const auto& skipped = member(j, "skipped", "capture");
    if (!skipped.is_null()) {
        if (!skipped.is_string()) fail("skipped is not a string or null");
        // The layer's reason is shown on one line: never let a newline in it break the table.
        std::string why = skipped.get<std::string>();
        std::replace(why.begin(), why.end(), '\n', ' ');
        c.skipped = why.empty() ? std::string("skipped (no reason given)") : why;
        return c;  // a skipped capture has no data files and may have no args
    }

    const auto& program = member(j, "program", "capture");
    const std::string origin = string_of(program, "origin", "program");
    const std::string file = string_of(program, "file", "program");
    const char* expected = nullptr;
    if (origin == "source") {
        c.origin = ProgramOrigin::source;
        expected = "program.cl";
    } else if (origin == "il") {
        c.origin = ProgramOrigin::il;
        expected = "program.spv";
    } else if (origin == "binary") {
        c.origin = ProgramOrigin::binary;
        expected = "program.bin";
    } else {
        fail(fmt::format("program.origin '{}' is not source, il or binary", origin));
    }
    if (file != expected) fail(fmt::format("program.file '{}' is not {} for origin {}", file, expected, origin));
    c.program_file = folder / file;
    if (file_length(c.program_file, "program") == 0) fail(fmt::format("program {} is empty", file));
    c.options = string_of(program, "options", "program");

    c.work_dim = static_cast<unsigned>(integer_of(member(j, "work_dim", "capture"), "work_dim", 1, 3));
    c.global_offset = range_of(member(j, "global_offset", "capture"), "global_offset", c.work_dim, true, true);
    c.global_size = *range_of(member(j, "global_size", "capture"), "global_size", c.work_dim, false, false);
    c.local_size = range_of(member(j, "local_size", "capture"), "local_size", c.work_dim, false, true);
    if (c.local_size)
        for (unsigned d = 0; d < c.work_dim; ++d)
            if ((*c.local_size)[d] > c.global_size[d])
                fail(fmt::format("local_size[{}] {} exceeds global_size[{}] {}", d, (*c.local_size)[d], d,
                                 c.global_size[d]));

    const auto& args = member(j, "args", "capture");
    if (!args.is_array()) fail("args is not an array");
    if (args.size() > 1024) fail(fmt::format("{} args: more than any kernel takes", args.size()));
    std::set<unsigned> seen;
    for (std::size_t i = 0; i < args.size(); ++i) {
        CapturedArg a = arg_of(args[i], i, folder);
        if (!seen.insert(a.index).second) fail(fmt::format("argument index {} appears twice", a.index));
        c.args.push_back(std::move(a));
    }
    std::sort(c.args.begin(), c.args.end(), [](const auto& a, const auto& b) { return a.index < b.index; });
    for (std::size_t i = 0; i < c.args.size(); ++i)
        if (c.args[i].index != i)
            fail(fmt::format("argument {} is missing (indices must be 0..{})", i, c.args.size() - 1));
    return c;
}

std::optional<std::string> arg_kind_mismatch(const CapturedArg& a, std::string_view type_name) {
    const bool image = type_name.starts_with("image") && type_name.ends_with("_t");
    const bool sampler = type_name == "sampler_t";
    if (image == (a.kind == ArgKind::image) && sampler == (a.kind == ArgKind::sampler)) return std::nullopt;
    return fmt::format("argument {} is a {} in the kernel but a captured {}", a.index, type_name, to_string(a.kind));
}

CaptureLoad read_capture(const fs::path& folder) {
    CaptureLoad load;
    load.folder = folder;
    try {
        const std::string text = read_file(folder / "capture.json", max_json_bytes);
        const auto j = nlohmann::json::parse(text, nullptr, false);
        if (j.is_discarded()) fail("capture.json is not valid JSON");
        load.capture = parse_capture(j, folder);
    } catch (const std::exception& e) {
        load.capture.reset();
        load.problem = e.what();
        std::replace(load.problem.begin(), load.problem.end(), '\n', ' ');
    }
    return load;
}

std::vector<CaptureLoad> read_captures(const fs::path& replay_dir) {
    std::vector<fs::path> folders;
    std::error_code ec;
    for (fs::directory_iterator it(replay_dir, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->is_directory(e2) && fs::exists(it->path() / "capture.json", e2)) folders.push_back(it->path());
    }
    std::sort(folders.begin(), folders.end());
    std::vector<CaptureLoad> out;
    for (const auto& f : folders)
        out.push_back(read_capture(f));
    return out;
}

}  // namespace clprobe::replay

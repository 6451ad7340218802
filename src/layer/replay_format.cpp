#include "layer/replay_format.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>

namespace clprobe::layer::replay {

ArgKind classify_arg(size_t size, bool value_is_null, bool value_is_known_mem, bool value_is_known_sampler) {
    if (value_is_null) return size > 0 ? ArgKind::local : ArgKind::scalar;
    if (value_is_known_mem) return ArgKind::buffer;
    return value_is_known_sampler ? ArgKind::sampler : ArgKind::scalar;
}

std::optional<ArgKind> kind_from_type_name(std::string_view t) {
    if (t.find("image") != std::string_view::npos) return ArgKind::image;
    if (t.find("sampler_t") != std::string_view::npos) return ArgKind::sampler;
    if (t.find("pipe") != std::string_view::npos) return ArgKind::pipe;
    if (t.find("queue_t") != std::string_view::npos) return ArgKind::unknown;
    return std::nullopt;
}

std::optional<std::string> arg_skip_reason(ArgKind kind, uint32_t index) {
    const std::string n = std::to_string(index);
    switch (kind) {
        case ArgKind::buffer:
        case ArgKind::local:
        case ArgKind::scalar:
        case ArgKind::image:
        case ArgKind::sampler:
            return std::nullopt;
        case ArgKind::svm:
            return "SVM pointer argument " + n;
        case ArgKind::pipe:
        case ArgKind::unknown:
            break;
    }
    return "pipe or unknown argument " + n;
}

std::optional<std::array<uint64_t, 3>> image_region(const ImageShape& s) {
    switch (s.type) {
        case image1d:
        case image1d_buffer:
            return std::array<uint64_t, 3>{s.width, 1, 1};
        case image1d_array:
            return std::array<uint64_t, 3>{s.width, s.array_size, 1};
        case image2d:
            return std::array<uint64_t, 3>{s.width, s.height, 1};
        case image2d_array:
            return std::array<uint64_t, 3>{s.width, s.height, s.array_size};
        case image3d:
            return std::array<uint64_t, 3>{s.width, s.height, s.depth};
        default:
            return std::nullopt;
    }
}

uint64_t image_bytes(const ImageShape& s) {
    const auto r = image_region(s);
    return r ? s.element_size * (*r)[0] * (*r)[1] * (*r)[2] : 0;
}

std::optional<std::string> image_skip_reason(uint32_t index, uint32_t type, uint64_t mip_levels, uint64_t samples) {
    const std::string n = std::to_string(index);
    if (!image_region(ImageShape{type, 0, 0, 1, 1, 1, 1, 1})) {
        char text[96];
        std::snprintf(text, sizeof text, "image argument %u of memory object type 0x%x", index, type);
        return text;
    }
    // A replay reads and writes level 0 and sample 0 only.
    if (mip_levels > 1) return "mipmapped image argument " + n;
    if (samples > 1) return "multisampled image argument " + n;
    return std::nullopt;
}

std::string code_only(std::string_view source) {
    std::string out(source);
    enum { code, line_comment, block_comment, string, character } state = code;
    for (size_t i = 0; i < out.size(); ++i) {
        const char c = out[i], next = i + 1 < out.size() ? out[i + 1] : '\0';
        switch (state) {
            case code:
                if (c == '/' && next == '/')
                    state = line_comment;
                else if (c == '/' && next == '*')
                    state = block_comment;
                else if (c == '"')
                    state = string;
                else if (c == '\'')
                    state = character;
                else
                    continue;
                if (state == line_comment || state == block_comment) out[i] = out[i + 1] = ' ', ++i;
                continue;
            case line_comment:
                if (c == '\n')
                    state = code;
                else
                    out[i] = ' ';
                continue;
            case block_comment:
                if (c == '*' && next == '/') {
                    out[i] = out[i + 1] = ' ';
                    ++i;
                    state = code;
                } else if (c != '\n') {
                    out[i] = ' ';
                }
                continue;
            case string:
            case character:
                if (c == '\\' && next != '\0') {
                    out[i] = out[i + 1] = ' ';
                    ++i;
                } else if (c == (state == string ? '"' : '\'')) {
                    state = code;
                } else if (c != '\n') {
                    out[i] = ' ';
                }
                continue;
        }
    }
    return out;
}

// The offset of the first call of `name` in `code` (the word, then an opening parenthesis).
std::optional<size_t> first_call(std::string_view code, std::string_view name) {
    const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t at = code.find(name); at != std::string_view::npos; at = code.find(name, at + 1)) {
        if (at > 0 && word(code[at - 1])) continue;
        size_t end = at + name.size();
        if (end < code.size() && word(code[end])) continue;
        while (end < code.size() && std::isspace(static_cast<unsigned char>(code[end])))
            ++end;
        if (end < code.size() && code[end] == '(') return at;
    }
    return std::nullopt;
}

// "kernel uses printf (a call at line 12 of the program's source; comments and strings are not read)"
std::string call_evidence(std::string_view what, std::string_view code, size_t at) {
    const auto line = 1 + std::count(code.begin(), code.begin() + static_cast<std::ptrdiff_t>(at), '\n');
    return std::string(what) + " (a call at line " + std::to_string(line) +
           " of the program's source; comments and strings are not read)";
}

std::optional<std::string> source_skip_reason(std::string_view source) {
    // Calls in the code itself: a word in a comment or a string literal is not one (OpenMM's PME
    // kernels mention printf in a comment).
    const std::string code = code_only(source);
    if (const auto at = first_call(code, "printf")) return call_evidence("kernel uses printf", code, *at);
    if (const auto at = first_call(code, "enqueue_kernel")) return call_evidence("device-side enqueue", code, *at);
    return std::nullopt;
}

std::string mib_text(uint64_t bytes) {
    char text[64];
    std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
    return text;
}

std::optional<std::string> CaptureBudget::charge(uint64_t bytes) {
    if (bytes > left())
        return "inputs and outputs " + mib_text(bytes) + " exceed the capture budget (" + mib_text(left()) +
               " left of " + mib_text(total_) + ")";
    // The first kernels launched are captured first: one with large buffers, often not the hottest
    // (pyopencl_programs' copy took all 256 MiB before its FMA and integer kernels), must leave room.
    if (bytes > total_ / 2)
        return "inputs and outputs " + mib_text(bytes) + " exceed half the capture budget (" + mib_text(total_ / 2) +
               " of " + mib_text(total_) + "): one kernel may not take the room of all the others";
    used_ += bytes;
    return std::nullopt;
}

std::string program_file(std::string_view origin) {
    if (origin == "source") return "program.cl";
    if (origin == "il") return "program.spv";
    if (origin == "binary") return "program.bin";
    return {};
}

std::string data_file(uint32_t index, bool output) {
    return "arg" + std::to_string(index) + (output ? ".out" : ".in");
}

std::string json_escape(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (const char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char esc[8];
                    std::snprintf(esc, sizeof esc, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                    out += esc;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
    return out;
}

namespace {

std::string sizes(const std::array<uint64_t, 3>& v, uint32_t dims) {
    std::string out = "[";
    for (uint32_t i = 0; i < dims && i < 3; ++i) {
        if (i) out += ',';
        out += std::to_string(v[i]);
    }
    return out + "]";
}

std::string optional_sizes(const std::optional<std::array<uint64_t, 3>>& v, uint32_t dims) {
    return v ? sizes(*v, dims) : "null";
}

std::string hex(const std::vector<uint8_t>& bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (const uint8_t b : bytes) {
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}

std::string data_files(uint32_t index, bool outputs) {
    return ", \"input\": " + json_escape(data_file(index, false)) +
           ", \"output\": " + (outputs ? json_escape(data_file(index, true)) : std::string("null")) + "}";
}

std::string arg_json(const CaptureArg& a, bool outputs) {
    const std::string head = "{\"index\": " + std::to_string(a.index) + ", \"kind\": ";
    const ImageShape& i = a.image;
    switch (a.kind) {
        case ArgKind::buffer:
            return head + "\"buffer\", \"size\": " + std::to_string(a.size) +
                   ", \"flags\": " + std::to_string(a.flags) + data_files(a.index, outputs);
        case ArgKind::image:
            return head + "\"image\", \"size\": " + std::to_string(a.size) + ", \"flags\": " + std::to_string(a.flags) +
                   ", \"image_type\": " + std::to_string(i.type) +
                   ", \"channel_order\": " + std::to_string(i.channel_order) +
                   ", \"channel_type\": " + std::to_string(i.channel_type) +
                   ", \"element_size\": " + std::to_string(i.element_size) + ", \"width\": " + std::to_string(i.width) +
                   ", \"height\": " + std::to_string(i.height) + ", \"depth\": " + std::to_string(i.depth) +
                   ", \"array_size\": " + std::to_string(i.array_size) + data_files(a.index, outputs);
        case ArgKind::sampler:
            return head + "\"sampler\", \"normalized_coords\": " + (a.sampler.normalized_coords ? "true" : "false") +
                   ", \"addressing_mode\": " + std::to_string(a.sampler.addressing_mode) +
                   ", \"filter_mode\": " + std::to_string(a.sampler.filter_mode) + "}";
        case ArgKind::local:
            return head + "\"local\", \"size\": " + std::to_string(a.size) + "}";
        default:
            return head + "\"scalar\", \"bytes_hex\": \"" + hex(a.bytes) + "\"}";
    }
}

}  // namespace

std::string capture_json(const CaptureRecord& r) {
    std::string out = "{\n";
    out += "  \"format\": " + json_escape(format_id) + ",\n";
    out += "  \"pid\": " + std::to_string(r.pid) + ",\n";
    out += "  \"kernel\": " + json_escape(r.kernel) + ",\n";
    out += "  \"launch_ordinal\": " + std::to_string(r.launch_ordinal) + ",\n";
    out += "  \"device\": {\"name\": " + json_escape(r.device.name) + ", \"vendor\": " + json_escape(r.device.vendor) +
           ", \"platform\": " + json_escape(r.device.platform) +
           ", \"driver_version\": " + json_escape(r.device.driver_version) + "},\n";
    out += "  \"program\": {\"origin\": " + json_escape(r.origin) +
           ", \"file\": " + json_escape(program_file(r.origin)) + ", \"options\": " + json_escape(r.options) + "},\n";
    out += "  \"work_dim\": " + std::to_string(r.work_dim) + ",\n";
    out += "  \"global_offset\": " + optional_sizes(r.global_offset, r.work_dim) + ",\n";
    out += "  \"global_size\": " + sizes(r.global_size, r.work_dim) + ",\n";
    out += "  \"local_size\": " + optional_sizes(r.local_size, r.work_dim) + ",\n";
    out += "  \"args\": [";
    for (size_t i = 0; i < r.args.size(); ++i)
        out += (i ? ",\n    " : "\n    ") + arg_json(r.args[i], r.outputs);
    out += r.args.empty() ? "],\n" : "\n  ],\n";
    out += "  \"traced_ns\": " + (r.traced_ns ? std::to_string(*r.traced_ns) : std::string("null")) + ",\n";
    out += "  \"skipped\": " + (r.skipped ? json_escape(*r.skipped) : std::string("null")) + "\n";
    return out + "}\n";
}

}  // namespace clprobe::layer::replay

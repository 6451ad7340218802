#include "layer/replay_format.hpp"

#include <cstdio>

namespace clprobe::layer::replay {

ArgKind classify_arg(size_t size, bool value_is_null, bool value_is_known_mem) {
    if (value_is_null) return size > 0 ? ArgKind::local : ArgKind::scalar;
    return value_is_known_mem ? ArgKind::buffer : ArgKind::scalar;
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
            return std::nullopt;
        case ArgKind::svm:
            return "SVM pointer argument " + n;
        case ArgKind::image:
            return "image argument " + n;
        case ArgKind::sampler:
            return "sampler argument " + n;
        case ArgKind::pipe:
        case ArgKind::unknown:
            break;
    }
    return "pipe or unknown argument " + n;
}

std::optional<std::string> source_skip_reason(std::string_view source) {
    if (source.find("printf") != std::string_view::npos) return std::string("kernel uses printf");
    if (source.find("enqueue_kernel") != std::string_view::npos) return std::string("device-side enqueue");
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

std::string arg_json(const CaptureArg& a) {
    const std::string head = "{\"index\": " + std::to_string(a.index) + ", \"kind\": ";
    switch (a.kind) {
        case ArgKind::buffer:
            return head + "\"buffer\", \"size\": " + std::to_string(a.size) +
                   ", \"flags\": " + std::to_string(a.flags) +
                   ", \"input\": " + json_escape(data_file(a.index, false)) +
                   ", \"output\": " + json_escape(data_file(a.index, true)) + "}";
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
        out += (i ? ",\n    " : "\n    ") + arg_json(r.args[i]);
    out += r.args.empty() ? "],\n" : "\n  ],\n";
    out += "  \"traced_ns\": " + (r.traced_ns ? std::to_string(*r.traced_ns) : std::string("null")) + ",\n";
    out += "  \"skipped\": " + (r.skipped ? json_escape(*r.skipped) : std::string("null")) + "\n";
    return out + "}\n";
}

}  // namespace clprobe::layer::replay

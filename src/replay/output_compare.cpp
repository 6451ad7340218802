#include "replay/output_compare.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace clprobe::replay {

ElementType element_type_of(std::string_view name) {
    // Strip qualifiers and spaces: the type name is the first identifier that is a type.
    std::string word;
    for (char c : name) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
            word += c;
            continue;
        }
        if (!word.empty() && word != "const" && word != "volatile" && word != "restrict" && word != "__global" &&
            word != "global" && word != "__constant" && word != "constant" && word != "unsigned")
            break;
        word.clear();
    }
    if (word == "half") return ElementType::half;
    if (word == "float") return ElementType::float32;
    if (word == "double") return ElementType::float64;
    return ElementType::bytes;
}

ElementType image_element_type(std::uint32_t channel_type) {
    constexpr std::uint32_t cl_half_float = 0x10DD, cl_float = 0x10DE;
    if (channel_type == cl_half_float) return ElementType::half;
    if (channel_type == cl_float) return ElementType::float32;
    return ElementType::bytes;
}

std::string_view to_string(ElementType t) {
    switch (t) {
        case ElementType::bytes:
            return "bytes";
        case ElementType::half:
            return "half";
        case ElementType::float32:
            return "float";
        case ElementType::float64:
            return "double";
    }
    return "?";
}

double tolerance_of(ElementType t) {
    // A few units in the last place of each type, widened to what fast-math builds may lose in a
    // short chain of operations (OpenCL's relaxed-math ulp bounds are up to a few thousand ulp for
    // some built-ins): relative 1e-4 for float, 1e-10 for double, 1e-2 for half.
    switch (t) {
        case ElementType::half:
            return 1e-2;
        case ElementType::float32:
            return 1e-4;
        case ElementType::float64:
            return 1e-10;
        case ElementType::bytes:
            return 0;
    }
    return 0;
}

namespace {

double half_to_double(std::uint16_t h) {
    const int sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    double v = 0;
    if (exp == 0)
        v = std::ldexp(mant, -24);
    else if (exp == 31)
        v = mant ? std::nan("") : INFINITY;
    else
        v = std::ldexp(mant + 1024, exp - 25);
    return sign ? -v : v;
}

template <class T>
std::vector<double> elements(std::span<const unsigned char> bytes) {
    std::vector<double> out(bytes.size() / sizeof(T));
    for (std::size_t i = 0; i < out.size(); ++i) {
        T v;
        std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
        if constexpr (std::is_same_v<T, std::uint16_t>)
            out[i] = half_to_double(v);
        else
            out[i] = static_cast<double>(v);
    }
    return out;
}

std::vector<double> decode(std::span<const unsigned char> bytes, ElementType t) {
    switch (t) {
        case ElementType::half:
            return elements<std::uint16_t>(bytes);
        case ElementType::float32:
            return elements<float>(bytes);
        case ElementType::float64:
            return elements<double>(bytes);
        case ElementType::bytes:
            break;
    }
    return {};
}

std::size_t element_bytes(ElementType t) {
    return t == ElementType::half ? 2 : t == ElementType::float32 ? 4 : t == ElementType::float64 ? 8 : 1;
}

int rank(OutputCheck c) {
    return c == OutputCheck::identical ? 0 : c == OutputCheck::within_tolerance ? 1 : c == OutputCheck::changed ? 2 : 3;
}

}  // namespace

BufferComparison compare_buffer(std::span<const unsigned char> replayed, std::span<const unsigned char> captured,
                                ElementType type) {
    BufferComparison out;
    if (replayed.size() != captured.size()) {
        out.check = OutputCheck::changed;
        out.errors.differing = std::max(replayed.size(), captured.size());
        return out;
    }
    if (std::equal(replayed.begin(), replayed.end(), captured.begin())) return out;
    // A buffer whose length is not a whole number of elements is not of that type after all.
    if (type == ElementType::bytes || captured.size() % element_bytes(type) != 0) {
        out.check = OutputCheck::changed;
        for (std::size_t i = 0; i < captured.size(); ++i)
            out.errors.differing += replayed[i] != captured[i];
        return out;
    }
    const auto r = decode(replayed, type), c = decode(captured, type);
    double scale = 0;
    for (double v : c)
        if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
    const double tol = tolerance_of(type);
    bool all_within = true;
    for (std::size_t i = 0; i < c.size(); ++i) {
        std::uint64_t rb = 0, cb = 0;
        const std::size_t eb = element_bytes(type);
        std::memcpy(&rb, replayed.data() + i * eb, eb);
        std::memcpy(&cb, captured.data() + i * eb, eb);
        if (rb == cb) continue;
        ++out.errors.differing;
        const double a = r[i], b = c[i];
        if (std::isnan(a) || std::isnan(b) || std::isinf(a) || std::isinf(b)) {
            // NaN against a number, or an infinity against anything else: a different answer.
            if (!(std::isnan(a) && std::isnan(b))) {
                all_within = false;
                out.errors.max_abs = INFINITY;
                out.errors.max_rel = INFINITY;
            }
            continue;
        }
        const double diff = std::fabs(a - b);
        const double mag = std::max(std::fabs(a), std::fabs(b));
        out.errors.max_abs = std::max(out.errors.max_abs, diff);
        if (mag > 0) out.errors.max_rel = std::max(out.errors.max_rel, diff / mag);
        if (!(diff <= tol * mag || diff <= tol * scale)) all_within = false;
    }
    out.check = out.errors.differing == 0 ? OutputCheck::identical
                : all_within              ? OutputCheck::within_tolerance
                                          : OutputCheck::changed;
    return out;
}

void fold(VariantResult& v, const BufferComparison& c, unsigned arg_index, ElementType type) {
    if (v.check == OutputCheck::not_checked) v.check = OutputCheck::identical;
    if (c.check == OutputCheck::identical) return;
    const bool worse = rank(c.check) > rank(v.check);
    if (worse) v.check = c.check;
    OutputErrors& e = v.errors ? *v.errors : v.errors.emplace();
    if (worse || e.where.empty() || c.errors.max_rel > e.max_rel)
        e.where = fmt::format("arg {} ({}): {} {} differ", arg_index, to_string(type), c.errors.differing,
                              type == ElementType::bytes ? "bytes" : "elements");
    e.max_abs = std::max(e.max_abs, c.errors.max_abs);
    e.max_rel = std::max(e.max_rel, c.errors.max_rel);
    e.differing += c.errors.differing;
}

}  // namespace clprobe::replay

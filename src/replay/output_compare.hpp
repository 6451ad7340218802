#pragma once
// Compares a variant's outputs with the captured ones: bitwise, and for buffers whose kernel
// argument type is half, float or double (clGetKernelArgInfo's type name) element by element
// within a relative tolerance. Pure, unit-tested.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "replay/replay_result.hpp"

namespace clprobe::replay {

enum class ElementType { bytes, half, float32, float64 };

// "float*", "float4*", "__global double2 *" -> float32 / float64; anything else -> bytes.
ElementType element_type_of(std::string_view arg_type_name);
std::string_view to_string(ElementType t);
// An image's pixels by their cl_channel_type: CL_HALF_FLOAT -> half, CL_FLOAT -> float32; the
// normalized and integer types compare bitwise (bytes).
ElementType image_element_type(std::uint32_t channel_type);

// The stated tolerance per element type (docs/replay.md): an element passes when
// |r - c| <= tol * max(|r|, |c|) or |r - c| <= tol * (the buffer's largest |c|); NaN must meet NaN,
// an infinity the same infinity.
double tolerance_of(ElementType t);

struct BufferComparison {
    OutputCheck check = OutputCheck::identical;
    OutputErrors errors;  // zero when identical
};

// `replayed` and `captured` of equal length (else changed).
BufferComparison compare_buffer(std::span<const unsigned char> replayed, std::span<const unsigned char> captured,
                                ElementType type);

// Folds one buffer's comparison into a variant's: the worst check wins; errors keep the largest.
void fold(VariantResult& v, const BufferComparison& c, unsigned arg_index, ElementType type);

}  // namespace clprobe::replay

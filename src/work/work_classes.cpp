#include "work/work_classes.hpp"

#include <algorithm>
#include <array>
#include <span>

namespace clprobe::work {

namespace {

using Names = std::span<const std::string_view>;
using NameList = std::initializer_list<std::string_view>;

bool in(std::string_view name, Names names) {
    return std::find(names.begin(), names.end(), name) != names.end();
}
bool in(std::string_view name, NameList names) {
    return in(name, Names(names.begin(), names.size()));
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// Square roots, divisions done by a builtin, exponentials, logarithms, powers and trigonometry:
// work a special-function unit (or a long software sequence) does, kept apart from FLOPs. native_
// and half_ spellings are the same functions at lower accuracy.
constexpr std::string_view special_math[] = {
    "sqrt",   "rsqrt",  "cbrt",  "exp",    "exp2",     "exp10",     "expm1",       "log",           "log2",
    "log10",  "log1p",  "logb",  "pow",    "pown",     "powr",      "rootn",       "sin",           "cos",
    "tan",    "sincos", "asin",  "acos",   "atan",     "atan2",     "sinh",        "cosh",          "tanh",
    "asinh",  "acosh",  "atanh", "asinpi", "acospi",   "atanpi",    "atan2pi",     "sinpi",         "cospi",
    "tanpi",  "erf",    "erfc",  "tgamma", "lgamma",   "lgamma_r",  "hypot",       "fmod",          "remainder",
    "remquo", "divide", "recip", "length", "distance", "normalize", "fast_length", "fast_distance", "fast_normalize"};

constexpr std::string_view special_intrinsics[] = {"llvm.sqrt",  "llvm.exp", "llvm.exp2", "llvm.log", "llvm.log2",
                                                   "llvm.log10", "llvm.pow", "llvm.powi", "llvm.sin", "llvm.cos"};

// Integer ALU intrinsics LLVM forms from shifts, compares and selects (a rotate is one fshl).
constexpr std::string_view int_intrinsics[] = {"llvm.fshl",     "llvm.fshr",     "llvm.ctpop",      "llvm.ctlz",
                                               "llvm.cttz",     "llvm.bswap",    "llvm.bitreverse", "llvm.umax",
                                               "llvm.umin",     "llvm.smax",     "llvm.smin",       "llvm.abs",
                                               "llvm.sadd.sat", "llvm.uadd.sat", "llvm.ssub.sat",   "llvm.usub.sat"};

// Calls that do no arithmetic of their own: work-item queries, fences, conversions, and memory
// builtins whose bytes the plugin counts from Oclgrind's memory callbacks instead.
constexpr std::string_view no_arithmetic[] = {"get_global_id",
                                              "get_local_id",
                                              "get_group_id",
                                              "get_global_size",
                                              "get_local_size",
                                              "get_num_groups",
                                              "get_work_dim",
                                              "get_global_offset",
                                              "get_enqueued_local_size",
                                              "get_global_linear_id",
                                              "get_local_linear_id",
                                              "mem_fence",
                                              "read_mem_fence",
                                              "write_mem_fence",
                                              "async_work_group_copy",
                                              "async_work_group_strided_copy",
                                              "wait_group_events",
                                              "prefetch",
                                              "shuffle",
                                              "shuffle2",
                                              "isnan",
                                              "isinf",
                                              "isfinite",
                                              "isnormal",
                                              "isequal",
                                              "isnotequal",
                                              "isgreater",
                                              "isgreaterequal",
                                              "isless",
                                              "islessequal",
                                              "islessgreater",
                                              "isordered",
                                              "isunordered",
                                              "signbit",
                                              "any",
                                              "all"};

constexpr std::array<std::string_view, 12> no_arithmetic_prefixes = {
    "vload",    "vstore", "read_image",  "write_image", "atomic_",       "atom_",
    "convert_", "as_",    "llvm.memcpy", "llvm.memset", "llvm.lifetime", "llvm.dbg"};

std::string_view without_accuracy_prefix(std::string_view name) {
    for (std::string_view p : {"native_", "half_"})
        if (starts_with(name, p)) return name.substr(p.size());
    return name;
}

// "llvm.fmuladd.f32" -> "llvm.fmuladd"; "llvm.sadd.sat.i32" -> "llvm.sadd.sat".
bool intrinsic_is(std::string_view callee, Names names) {
    for (std::string_view n : names)
        if (callee == n || (starts_with(callee, n) && callee.size() > n.size() && callee[n.size()] == '.')) return true;
    return false;
}
bool intrinsic_is(std::string_view callee, NameList names) {
    return intrinsic_is(callee, Names(names.begin(), names.size()));
}

}  // namespace

std::string_view builtin_name(std::string_view callee) {
    if (!starts_with(callee, "_Z")) return callee;
    std::size_t i = 2, length = 0;
    while (i < callee.size() && callee[i] >= '0' && callee[i] <= '9')
        length = length * 10 + static_cast<std::size_t>(callee[i++] - '0');
    if (length == 0 || i + length > callee.size()) return callee;
    return callee.substr(i, length);
}

OpClass classify_call(std::string_view callee, bool result_is_float, bool result_is_int) {
    if (intrinsic_is(callee, {"llvm.fmuladd", "llvm.fma"})) return OpClass::fma;
    if (intrinsic_is(callee, special_intrinsics)) return OpClass::special;
    if (intrinsic_is(callee, int_intrinsics)) return OpClass::int_op;
    if (intrinsic_is(callee, {"llvm.uadd.with.overflow", "llvm.sadd.with.overflow", "llvm.usub.with.overflow",
                              "llvm.ssub.with.overflow", "llvm.umul.with.overflow", "llvm.smul.with.overflow"}))
        return OpClass::int_op;
    const std::string_view name = builtin_name(callee);
    for (std::string_view p : no_arithmetic_prefixes)
        if (starts_with(name, p)) return OpClass::none;
    if (in(name, no_arithmetic)) return OpClass::none;
    if (in(name, {"barrier", "work_group_barrier"})) return OpClass::barrier;
    if (in(name, {"fma", "mad"})) return result_is_float ? OpClass::fma : OpClass::none;
    if (name == "dot") return OpClass::dot;
    if (in(without_accuracy_prefix(name), special_math)) return OpClass::special;
    if (in(name, {"mad24", "mad_hi", "mad_sat"})) return OpClass::int_mad;
    if (starts_with(name, "llvm.")) {
        // Other intrinsics: fabs, minnum, floor and the like on floats; anything else is no work.
        return result_is_float ? OpClass::flop : OpClass::none;
    }
    if (result_is_float) return OpClass::flop;  // fabs, fmin, floor, clamp, mix...: one per lane
    if (result_is_int) return OpClass::int_op;  // rotate, popcount, clz, mul_hi, min, add_sat...
    return OpClass::none;
}

}  // namespace clprobe::work

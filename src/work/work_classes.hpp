#pragma once
// What one executed LLVM instruction of an OpenCL kernel counts as (docs/trace.md, "How work is
// counted"). Pure: no LLVM, no Oclgrind, so the rules are unit-tested on names and types alone;
// the Oclgrind plugin (oclgrind_counter.cpp) reads the instruction and asks here.
#include <cstdint>
#include <string_view>

namespace clprobe::work {

enum class Precision : std::uint8_t { half, single, dbl, count };

// The kind of work an instruction is counted as, before its lanes multiply it.
enum class OpClass : std::uint8_t {
    none,     // moves, casts, branches, address arithmetic (getelementptr), work-item queries
    flop,     // one floating-point add, subtract, multiply, divide, negate or cheap math builtin
    fma,      // fused or contracted multiply-add: two floating-point operations
    dot,      // dot(): a multiply and an add per lane
    special,  // transcendental or square-root builtins (a special-function unit's work, not a FLOP)
    int_op,   // one integer ALU operation (add, sub, mul, div, rem, shifts, and/or/xor, compares)
    int_mad,  // integer multiply-add builtins (mad24, mad_hi, mad_sat): two integer operations
    barrier,  // barrier(), work_group_barrier()
};

// The class of an OpenCL builtin or LLVM intrinsic named `callee` (a declaration, not a function of
// the program), whose result (or, for void calls, nothing) is floating point or integer.
// `callee` is as LLVM spells it: "llvm.fmuladd.f32", "_Z3madfff", "_Z6rotateDv4_jS_".
OpClass classify_call(std::string_view callee, bool result_is_float, bool result_is_int);

// The unmangled OpenCL builtin name of an Itanium-mangled callee ("_Z3madfff" -> "mad"); the
// name itself when it is not mangled.
std::string_view builtin_name(std::string_view callee);

}  // namespace clprobe::work

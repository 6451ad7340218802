#pragma once
// A kernel's arguments in one call, in the kernel's parameter order: set_args(k, in, out, n)
// instead of one setArg line per index, so an argument list reads like the kernel's signature.
#include "cl/cl_api.hpp"

namespace clprobe {

template <class... Args>
void set_args(cl::Kernel& kernel, const Args&... args) {
    cl_uint index = 0;
    (kernel.setArg(index++, args), ...);  // a comma fold runs left to right: index 0, 1, 2...
}

}  // namespace clprobe

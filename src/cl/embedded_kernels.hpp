#pragma once
// Table of kernels/**/*.cl embedded at build time (kernels/CMakeLists.txt generates it).
#include <vector>

namespace clprobe {
struct EmbeddedKernel {
    const char* path;    // relative to kernels/, e.g. "peak/bandwidth.cl"
    const char* source;  // NUL-terminated OpenCL C
};
namespace embedded {
const std::vector<EmbeddedKernel>& kernels();
}
}  // namespace clprobe

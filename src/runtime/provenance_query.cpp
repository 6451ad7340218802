#include "runtime/provenance_query.hpp"

#include <dlfcn.h>
#include <fmt/core.h>
#include <hwloc.h>

#include <CL/cl.h>

#ifdef CLPROBE_HAVE_OPENBLAS
#include <cblas.h>
#endif

#include <cstring>
#include <string>
#include <vector>

namespace clprobe {

namespace {

std::string hwloc_runtime_version() {
    const unsigned v = hwloc_get_api_version();
    return fmt::format("{}.{}.{}", v >> 16, (v >> 8) & 0xff, v & 0xff);
}

// The loader's own query (cl_loader_info: ocl-icd and the Khronos loader export it). Looked up by
// name rather than linked, so a loader without it still runs clprobe: the answer is then "unknown".
using LoaderInfoFn = cl_int (*)(cl_uint, std::size_t, void*, std::size_t*);
constexpr cl_uint icdl_version = 2;  // CL_ICDL_VERSION
constexpr cl_uint icdl_name = 3;     // CL_ICDL_NAME

std::string loader_string(LoaderInfoFn query, cl_uint param) {
    std::size_t size = 0;
    if (query(param, 0, nullptr, &size) != CL_SUCCESS || size == 0 || size > 4096) return "";
    std::vector<char> text(size);
    if (query(param, size, text.data(), nullptr) != CL_SUCCESS) return "";
    return std::string(text.data(), strnlen(text.data(), size));
}

// ocl-icd and the Khronos loader hand the query out through clGetExtensionFunctionAddress (itself
// looked up by name: it is deprecated in the headers, and another loader may lack it); a loader
// might also export it directly.
LoaderInfoFn loader_info_query() {
    constexpr const char* name = "clGetICDLoaderInfoOCLICD";
    if (void* direct = ::dlsym(RTLD_DEFAULT, name)) return reinterpret_cast<LoaderInfoFn>(direct);
    using ExtensionAddressFn = void* (*)(const char*);
    const auto lookup = reinterpret_cast<ExtensionAddressFn>(::dlsym(RTLD_DEFAULT, "clGetExtensionFunctionAddress"));
    return lookup ? reinterpret_cast<LoaderInfoFn>(lookup(name)) : nullptr;
}

std::string icd_loader_version() {
    const LoaderInfoFn query = loader_info_query();
    if (!query) return "unknown";
    const std::string name = loader_string(query, icdl_name);
    const std::string version = loader_string(query, icdl_version);
    if (name.empty() && version.empty()) return "unknown";
    return name.empty() ? version : version.empty() ? name : name + " " + version;
}

std::string openblas_config() {
#ifdef CLPROBE_HAVE_OPENBLAS
    const char* config = openblas_get_config();
    std::string text = config ? config : "";
    text.erase(text.find_last_not_of(' ') + 1);  // it ends with a space
    return text.empty() ? "unknown" : text;
#else
    return "not built in";
#endif
}

}  // namespace

Provenance current_provenance() {
    Provenance p = build_provenance();
    p.hwloc_version = hwloc_runtime_version();
    p.icd_loader = icd_loader_version();
    p.openblas = openblas_config();
    return p;
}

}  // namespace clprobe

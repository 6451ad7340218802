#pragma once
// OpenCL failures as exceptions that carry the call and the error's name, e.g.
// "clEnqueueWriteBuffer: CL_OUT_OF_RESOURCES (-5)", from one table of every error code.
#include <stdexcept>
#include <string>
#include <string_view>

#include "cl/cl_api.hpp"

namespace clprobe {

std::string_view cl_error_name(cl_int code);  // "CL_UNKNOWN_ERROR" for codes not in the table

class ClError : public std::runtime_error {
  public:
    ClError(std::string call, cl_int code, std::string detail = {});
    const std::string& call() const { return call_; }
    cl_int code() const { return code_; }
    const std::string& detail() const { return detail_; }

  private:
    std::string call_;
    cl_int code_;
    std::string detail_;
};

// A kernel that would not build: names the kernel file and keeps the compiler's log.
class KernelBuildError : public ClError {
  public:
    KernelBuildError(std::string kernel_file, cl_int code, std::string log);
    const std::string& kernel_file() const { return kernel_file_; }
    const std::string& log() const { return log_; }

  private:
    std::string kernel_file_;
    std::string log_;
};

inline void cl_check(cl_int code, const char* call) {
    if (code != CL_SUCCESS) throw ClError(call, code);
}

// Converts the bindings' cl::Error (whose what() is the failing call's name).
ClError to_cl_error(const cl::Error& e);

}  // namespace clprobe

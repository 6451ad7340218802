#pragma once
// The one place that configures the Khronos C++ bindings, so every file sees the same settings.
// Minimum 1.1 / target 3.0: opencl.hpp then decides at run time whether a platform has the 2.0+
// entry points (its helper for that is only compiled when the minimum is below 1.2).
#define CL_HPP_MINIMUM_OPENCL_VERSION 110
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_ENABLE_EXCEPTIONS
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wignored-attributes"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif
#include <CL/opencl.hpp>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#include <CL/cl_ext.h>

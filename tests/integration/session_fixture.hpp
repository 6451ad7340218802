#pragma once
// One device session per test process (PoCL's CPU device in CI): opening it and building kernels
// is the expensive part, so every test shares it.
#include <filesystem>
#include <string>

#include "cl/device_session.hpp"
#include "runtime/probe.hpp"

namespace clprobe::test {

// The default device (first GPU, else first device), or $CLPROBE_DEVICE.
DeviceSession& shared_session();

// A fresh session on the same device whose kernels come from `kernel_dir`.
std::unique_ptr<DeviceSession> session_with_kernels(const std::filesystem::path& kernel_dir);

// A temporary folder holding a copy of every embedded kernel, with `from` replaced by `to` in
// `file` (the replacement must happen, or the test fails): builds deliberately broken kernels.
std::filesystem::path patched_kernel_dir(const std::string& file, const std::string& from, const std::string& to);

// Runs a probe in quick mode on `session`, the way `diagnose --quick` would.
ProbeResult run_quick(Probe& probe, DeviceSession& session);

// Which measured samples may be exactly zero: none but fractions and relative errors (a padding
// share, an overlap that hid nothing, an exact result), or any (host facts: no swap in use).
enum class ZeroSamples { fractions_only, allowed };

// Every measurement of `r` has finite samples, positive unless `zero` allows otherwise, and a
// summary of exactly those samples (n, and min <= median <= max).
void check_samples(const ProbeResult& r, ZeroSamples zero = ZeroSamples::fractions_only);

}  // namespace clprobe::test

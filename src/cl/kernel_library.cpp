#include "cl/kernel_library.hpp"

#include <fmt/core.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>

#include "cl/cl_error.hpp"
#include "cl/stderr_capture.hpp"
#include "core/atomic_file.hpp"
#include "core/child_channel.hpp"
#include "core/fnv_hash.hpp"
#include "core/log.hpp"

namespace clprobe {

namespace {

// The cache format's own version: bump it when the file layout or key changes.
constexpr std::string_view cache_magic = "CLPROBE-BINARY-CACHE-2\n";

double ms_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

std::string build_log(const cl::Program& program, const cl::Device& device) {
    try {
        return program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device);
    } catch (const cl::Error&) {
        return {};
    }
}

// Builds `program`, converting failure into KernelBuildError with the compiler's log. What the
// driver prints on stderr meanwhile is kept out of clprobe's progress stream.
void build_or_throw(cl::Program& program, const cl::Device& device, const std::string& file,
                    const std::string& options) {
    // The C call, not cl::Program::build: the bindings fetch the build log inside their error
    // path, and a driver that refuses the log query then replaces the build's own error code.
    StderrCapture capture;
    const cl_device_id id = device();
    const cl_int err = clBuildProgram(program(), 1, &id, options.c_str(), nullptr, nullptr);
    const std::string chatter = capture.finish();
    if (err != CL_SUCCESS) {
        const std::string log = build_log(program, device);
        throw KernelBuildError(file, err, log.empty() ? chatter : log);
    }
    if (!chatter.empty()) Log::debug("driver output while building {}:\n{}", file, chatter);
}

// A program built from either origin, timed from `start` (create and build).
BuiltProgram built(cl::Program program, BuildOrigin origin, const std::string& options,
                   std::chrono::steady_clock::time_point start) {
    BuiltProgram out;
    out.build_ms = ms_since(start);
    out.program = std::move(program);
    out.origin = origin;
    out.options = options;
    return out;
}

}  // namespace

std::filesystem::path default_cache_dir() {
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::filesystem::path(xdg) / "clprobe";
    if (const char* home = std::getenv("HOME"); home && *home)
        return std::filesystem::path(home) / ".cache" / "clprobe";
    return {};
}

KernelLibrary::KernelLibrary(cl::Context context, cl::Device device, const DeviceInfo& info, KernelSources sources,
                             CacheConfig cache)
    : context_(std::move(context)),
      device_(std::move(device)),
      info_(info),
      sources_(std::move(sources)),
      cache_(std::move(cache)) {
    if (cache_.enabled && cache_.dir.empty()) cache_.dir = default_cache_dir();
    if (cache_.enabled) {
        std::error_code ec;
        std::filesystem::create_directories(cache_.dir, ec);
        if (cache_.dir.empty() || ec) {
            Log::warn("kernel binary cache disabled: cannot create '{}'", cache_.dir.string());
            cache_.enabled = false;
        }
    }
}

std::string KernelLibrary::cache_key(const std::string& source, const std::string& options) const {
    return fmt::format("platform={} {}\ndevice={}\ndevice_version={}\ndriver={}\noptions={}\nsource={:016x}:{}\n",
                       info_.platform_name, info_.platform_version, info_.name, info_.device_version,
                       info_.driver_version, options, fnv1a64(source), source.size());
}

std::filesystem::path KernelLibrary::cache_path(const std::string& key) const {
    return cache_.dir / fmt::format("{:016x}.clbin", fnv1a64(key));
}

BuiltProgram KernelLibrary::build_from_source(const std::string& file, const std::string& options) {
    const std::string source = sources_.source(file);
    const auto start = std::chrono::steady_clock::now();
    cl::Program program(context_, source);
    build_or_throw(program, device_, file, options);
    BuiltProgram out = built(std::move(program), BuildOrigin::source, options, start);
    out.log = build_log(out.program, device_);
    return out;
}

std::optional<BuiltProgram> KernelLibrary::build_from_binary_cache(const std::string& file,
                                                                   const std::string& options) {
    if (!cache_.enabled) return std::nullopt;
    const std::string key = cache_key(sources_.source(file), options);
    std::string content;
    try {
        content = read_file(cache_path(key), 1u << 30);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    // Layout: magic, key length line, key, binary. Anything else is stale or foreign: ignore it.
    if (content.rfind(cache_magic, 0) != 0) return std::nullopt;
    const auto nl = content.find('\n', cache_magic.size());
    if (nl == std::string::npos) return std::nullopt;
    std::size_t key_len = 0;
    try {
        key_len = std::stoul(content.substr(cache_magic.size(), nl - cache_magic.size()));
    } catch (const std::exception&) {
        return std::nullopt;
    }
    if (content.size() < nl + 1 + key_len || content.compare(nl + 1, key_len, key) != 0) return std::nullopt;
    const std::size_t offset = nl + 1 + key_len;
    if (offset == content.size()) return std::nullopt;

    const auto start = std::chrono::steady_clock::now();
    try {
        cl::Program::Binaries binaries{
            std::vector<unsigned char>(content.begin() + static_cast<std::ptrdiff_t>(offset), content.end())};
        cl::Program program(context_, {device_}, binaries);
        build_or_throw(program, device_, file, options);
        return built(std::move(program), BuildOrigin::binary_cache, options, start);
    } catch (const ClError& e) {
        Log::debug("cached binary for {} rejected ({}); rebuilding from source", file, e.what());
        return std::nullopt;
    } catch (const cl::Error& e) {
        Log::debug("cached binary for {} rejected ({}); rebuilding from source", file, to_cl_error(e).what());
        return std::nullopt;
    }
}

void KernelLibrary::store_binary(const std::string& key, const cl::Program& program) {
    try {
        const auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
        if (binaries.empty() || binaries.front().empty()) return;
        std::string content(cache_magic);
        content += std::to_string(key.size()) + "\n" + key;
        content.append(reinterpret_cast<const char*>(binaries.front().data()), binaries.front().size());
        write_file_atomically(cache_path(key), content);
    } catch (const std::exception& e) {
        // A cache that cannot be written costs speed, not correctness.
        Log::debug("kernel binary cache not written: {}", e.what());
    }
}

DriverCaching KernelLibrary::driver_caching(const std::string& file, const std::string& options) {
    if (driver_caching_) return *driver_caching_;
    const std::string device_key =
        fmt::format("platform={} {}\ndevice={}\ndevice_version={}\ndriver={}\n", info_.platform_name,
                    info_.platform_version, info_.name, info_.device_version, info_.driver_version);
    const std::filesystem::path path = cache_.dir / fmt::format("driver-caching-{:016x}.txt", fnv1a64(device_key));
    try {
        driver_caching_ = parse_driver_caching(read_file(path, 4096));
    } catch (const std::exception&) {
        // Not judged yet on this machine and driver.
    }
    if (driver_caching_) return *driver_caching_;
    // A define no cache has seen makes the first build cold; the second asks the driver for the
    // same program again. Paid once per driver: the verdict is kept beside the binaries.
    try {
        std::random_device rd;
        const std::string probe_options =
            fmt::format("{} -D CLPROBE_DRIVER_CACHE_CHECK={}", options, (std::uint64_t{rd()} << 32) | rd());
        const double first_ms = build_from_source(file, probe_options).build_ms;
        const double again_ms = build_from_source(file, probe_options).build_ms;
        driver_caching_ = judge_driver_caching(first_ms, again_ms);
        Log::debug("driver {} {} its own builds: {:.1f} ms cold, {:.1f} ms again", info_.driver_version,
                   *driver_caching_ == DriverCaching::caches ? "caches" : "does not cache", first_ms, again_ms);
        write_file_atomically(path, driver_caching_text(*driver_caching_, first_ms, again_ms));
    } catch (const std::exception& e) {
        // Unjudged is treated as a driver without a cache: clprobe keeps the binaries, as before.
        Log::debug("driver caching not judged: {}", e.what());
        if (!driver_caching_) driver_caching_ = DriverCaching::does_not_cache;
    }
    return *driver_caching_;
}

void KernelLibrary::store_in_binary_cache(const std::string& file, const std::string& options) {
    const BuiltProgram& built = program(file, options);
    if (cache_.enabled && built.origin == BuildOrigin::source)
        store_binary(cache_key(sources_.source(file), options), built.program);
}

const BuiltProgram& KernelLibrary::program(const std::string& file, const std::string& options) {
    const auto memo_key = std::make_pair(file, options);
    if (auto it = built_.find(memo_key); it != built_.end()) return it->second;
    // A compiler that crashes or hangs is reported with the program it was building.
    drop_breadcrumb("building " + file);
    std::optional<BuiltProgram> built = build_from_binary_cache(file, options);
    if (!built) {
        built = build_from_source(file, options);
        if (cache_.enabled && driver_caching(file, options) == DriverCaching::does_not_cache)
            store_binary(cache_key(sources_.source(file), options), built->program);
    }
    Log::debug("built {} [{}] in {:.1f} ms ({})", file, options, built->build_ms,
               built->origin == BuildOrigin::source ? "source" : "binary cache");
    return built_.emplace(memo_key, std::move(*built)).first->second;
}

cl::Kernel KernelLibrary::kernel(const std::string& file, const char* name, const std::string& options) {
    const auto& built = program(file, options);
    try {
        return cl::Kernel(built.program, name);
    } catch (const cl::Error& e) {
        throw ClError("clCreateKernel", e.err(), std::string(name) + " in " + file);
    }
}

}  // namespace clprobe

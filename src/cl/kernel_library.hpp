#pragma once
// Builds kernels for one device: measures each build, keeps program binaries in a cache keyed by
// device + driver + source + options, and turns build failures into KernelBuildError with the log.
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "cl/cl_api.hpp"
#include "cl/kernel_sources.hpp"
#include "core/device_info.hpp"
#include "core/driver_caching.hpp"

namespace clprobe {

struct CacheConfig {
    bool enabled = true;
    std::filesystem::path dir;  // default_cache_dir() unless set
};

// $XDG_CACHE_HOME/clprobe, else $HOME/.cache/clprobe.
std::filesystem::path default_cache_dir();

enum class BuildOrigin { source, binary_cache };

struct BuiltProgram {
    cl::Program program;
    double build_ms = 0;  // host wall time of create + build
    BuildOrigin origin = BuildOrigin::source;
    std::string options;
    std::string log;  // the compiler's log, often empty on success
};

class KernelLibrary {
  public:
    KernelLibrary(cl::Context context, cl::Device device, const DeviceInfo& info, KernelSources sources,
                  CacheConfig cache);

    // Memoised per (file, options): a probe asking twice gets the same program.
    const BuiltProgram& program(const std::string& file, const std::string& options = "");
    cl::Kernel kernel(const std::string& file, const char* name, const std::string& options = "");

    // For the build-time probe: always compiles from source, touching no cache of ours.
    BuiltProgram build_from_source(const std::string& file, const std::string& options);
    // Loads the cached binary (after program() has put it there); nullopt when absent or stale.
    std::optional<BuiltProgram> build_from_binary_cache(const std::string& file, const std::string& options);
    // Puts program(file, options) into the binary cache even where program() leaves the caching to
    // the driver (the build-time probe measures loads from it on every driver).
    void store_in_binary_cache(const std::string& file, const std::string& options);

    const KernelSources& sources() const { return sources_; }
    const CacheConfig& cache() const { return cache_; }

  private:
    std::string cache_key(const std::string& source, const std::string& options) const;
    std::filesystem::path cache_path(const std::string& key) const;
    void store_binary(const std::string& key, const cl::Program& program);
    // Whether the driver caches built programs itself, from the verdict file in the cache folder,
    // else judged once from two builds of `file` with a never-seen define (core/driver_caching).
    DriverCaching driver_caching(const std::string& file, const std::string& options);

    cl::Context context_;
    cl::Device device_;
    DeviceInfo info_;
    KernelSources sources_;
    CacheConfig cache_;
    std::map<std::pair<std::string, std::string>, BuiltProgram> built_;
    std::optional<DriverCaching> driver_caching_;
};

}  // namespace clprobe

// kernel.build: what compiling a program costs on this driver, cold and from caches. A serving
// process that builds at start-up, or a script that rebuilds per run, pays this every time.
#include <fmt/core.h>

#include <random>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/stop_points.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

// A real kernel of moderate size (the fp32 compute ceiling), with the options its probe uses.
constexpr const char* subject_file = "peak/compute.cl";
constexpr const char* subject_options = "-D REAL=float";

class BuildTimeProbe final : public Probe {
  public:
    std::string id() const override { return "kernel.build"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "Program build time"; }
    // Cold builds run the device compiler (about a second per program on PoCL).
    double expected_seconds(RunMode mode) const override { return 2.5 * mode_time_factor(mode); }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        KernelLibrary& lib = ctx.device->kernels();
        const int cold_builds = ctx.options.mode == RunMode::quick ? 2 : ctx.options.mode == RunMode::full ? 5 : 3;
        const int warm_builds = 5;

        // Cold: a never-seen define makes the source new to every cache, the driver's included.
        // The first build in a process also pays for loading the compiler; it is excluded so the
        // samples measure compilation alone.
        std::random_device rd;
        auto cold_build = [&] {
            check_stop();  // builds take a second each: a signal should not wait for all of them
            const auto nonce = (std::uint64_t{rd()} << 32) | rd();
            return lib
                .build_from_source(subject_file, fmt::format("{} -D CLPROBE_BUILD_NONCE={}", subject_options, nonce))
                .build_ms;
        };
        cold_build();
        std::vector<double> cold;
        for (int i = 0; i < cold_builds; ++i)
            cold.push_back(cold_build());
        add(out, "cold", std::move(cold));

        // From source again: drivers with their own cache (PoCL, NVIDIA) answer from it.
        lib.build_from_source(subject_file, subject_options);
        std::vector<double> driver;
        for (int i = 0; i < warm_builds; ++i)
            driver.push_back(lib.build_from_source(subject_file, subject_options).build_ms);
        add(out, "driver_cache", std::move(driver));

        // From clprobe's binary cache (clCreateProgramWithBinary + build).
        if (!lib.cache().enabled) {
            out.attributes["binary_cache"] = "not measured: binary cache disabled (--no-cache)";
            return;
        }
        lib.store_in_binary_cache(subject_file, subject_options);  // also where the driver caches itself
        std::vector<double> binary;
        for (int i = 0; i < warm_builds; ++i) {
            auto built = lib.build_from_binary_cache(subject_file, subject_options);
            if (!built) {
                out.attributes["binary_cache"] = "not measured: the driver returned no reusable binary";
                return;
            }
            binary.push_back(built->build_ms);
        }
        add(out, "binary_cache", std::move(binary));
        out.attributes["subject"] = fmt::format("{} {}", subject_file, subject_options);
    }

  private:
    static void add(ProbeResult& out, const char* path, std::vector<double> samples) {
        out.measurements.push_back(make_measurement("kernel.build.time", "ms", {{"path", path}}, std::move(samples),
                                                    TimerKind::host_steady_clock, /*higher_is_better=*/false));
    }
};

}  // namespace

std::unique_ptr<Probe> make_build_time_probe() {
    return std::make_unique<BuildTimeProbe>();
}

}  // namespace clprobe

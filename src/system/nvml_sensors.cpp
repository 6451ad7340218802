#include "system/nvml_sensors.hpp"

#include <dlfcn.h>
#include <fmt/core.h>

namespace clprobe {

namespace {

// NVML's C interface, the few calls used here, declared from its documented signatures (no
// nvml.h at build time): every call returns nvmlReturn_t, 0 for success.
using NvmlReturn = int;
using NvmlDevice = void*;
constexpr NvmlReturn nvml_success = 0;

struct NvmlApi {
    NvmlReturn (*init)() = nullptr;
    NvmlReturn (*shutdown)() = nullptr;
    NvmlReturn (*count)(unsigned int*) = nullptr;
    NvmlReturn (*handle)(unsigned int, NvmlDevice*) = nullptr;
    NvmlReturn (*total_energy)(NvmlDevice, unsigned long long*) = nullptr;
    NvmlReturn (*power_usage)(NvmlDevice, unsigned int*) = nullptr;
    const char* (*error_string)(NvmlReturn) = nullptr;
};

// The loaded library, initialised; shut down and closed when the last sensor goes.
class NvmlLibrary {
  public:
    NvmlLibrary(void* handle, NvmlApi api) : handle_(handle), api_(api) {}
    ~NvmlLibrary() {
        api_.shutdown();
        ::dlclose(handle_);
    }
    NvmlLibrary(const NvmlLibrary&) = delete;
    NvmlLibrary& operator=(const NvmlLibrary&) = delete;
    const NvmlApi& api() const { return api_; }
    std::string error(NvmlReturn r) const {
        const char* text = api_.error_string ? api_.error_string(r) : nullptr;
        return text ? fmt::format("{} ({})", text, r) : fmt::format("NVML error {}", r);
    }

  private:
    void* handle_;
    NvmlApi api_;
};

class NvmlSensor final : public EnergySensor {
  public:
    NvmlSensor(std::shared_ptr<NvmlLibrary> nvml, NvmlDevice device, unsigned index, SensorKind kind)
        : nvml_(std::move(nvml)), device_(device), index_(index), kind_(kind) {}
    std::string name() const override { return fmt::format("nvml {}", index_); }
    std::string scope() const override { return fmt::format("gpu {}", index_); }
    SensorKind kind() const override { return kind_; }
    double resolution() const override { return 1e-3; }  // millijoules, milliwatts

    SensorReading read() override {
        const NvmlApi& api = nvml_->api();
        if (kind_ == SensorKind::energy_counter) {
            unsigned long long mj = 0;
            const NvmlReturn r = api.total_energy(device_, &mj);
            if (r != nvml_success)
                return {std::nullopt,
                        fmt::format("{}: nvmlDeviceGetTotalEnergyConsumption: {}", name(), nvml_->error(r))};
            if (!origin_) origin_ = mj;
            if (mj < *origin_) return {std::nullopt, fmt::format("{}: the energy counter went backwards", name())};
            return {static_cast<double>(mj - *origin_) * 1e-3, {}};
        }
        unsigned int mw = 0;
        const NvmlReturn r = api.power_usage(device_, &mw);
        if (r != nvml_success)
            return {std::nullopt, fmt::format("{}: nvmlDeviceGetPowerUsage: {}", name(), nvml_->error(r))};
        return {static_cast<double>(mw) * 1e-3, {}};
    }

  private:
    std::shared_ptr<NvmlLibrary> nvml_;
    NvmlDevice device_;
    unsigned index_;
    SensorKind kind_;
    std::optional<unsigned long long> origin_;
};

template <typename F>
bool bind(void* handle, const char* symbol, F& to) {
    to = reinterpret_cast<F>(::dlsym(handle, symbol));
    return to != nullptr;
}

}  // namespace

void discover_nvml_sensors(const std::string& library, SensorDiscovery& out) {
    void* handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = ::dlerror();
        out.notes.push_back(fmt::format("NVML: {} not loaded ({})", library, why ? why : "unknown error"));
        return;
    }
    NvmlApi api;
    const char* missing = nullptr;
    if (!bind(handle, "nvmlInit_v2", api.init))
        missing = "nvmlInit_v2";
    else if (!bind(handle, "nvmlShutdown", api.shutdown))
        missing = "nvmlShutdown";
    else if (!bind(handle, "nvmlDeviceGetCount_v2", api.count))
        missing = "nvmlDeviceGetCount_v2";
    else if (!bind(handle, "nvmlDeviceGetHandleByIndex_v2", api.handle))
        missing = "nvmlDeviceGetHandleByIndex_v2";
    if (missing) {
        out.notes.push_back(fmt::format("NVML: {} has no {}", library, missing));
        ::dlclose(handle);
        return;
    }
    // Optional: older drivers lack the energy counter, and the error text is a convenience.
    bind(handle, "nvmlDeviceGetTotalEnergyConsumption", api.total_energy);
    bind(handle, "nvmlDeviceGetPowerUsage", api.power_usage);
    bind(handle, "nvmlErrorString", api.error_string);
    if (const NvmlReturn r = api.init(); r != nvml_success) {
        const char* text = api.error_string ? api.error_string(r) : nullptr;
        out.notes.push_back(fmt::format("NVML: nvmlInit_v2 failed ({})", text ? text : std::to_string(r)));
        ::dlclose(handle);
        return;
    }
    auto nvml = std::make_shared<NvmlLibrary>(handle, api);
    unsigned int count = 0;
    if (const NvmlReturn r = api.count(&count); r != nvml_success) {
        out.notes.push_back(fmt::format("NVML: nvmlDeviceGetCount_v2: {}", nvml->error(r)));
        return;
    }
    if (count == 0) {
        out.notes.push_back("NVML: no GPU");
        return;
    }
    for (unsigned i = 0; i < count; ++i) {
        NvmlDevice device = nullptr;
        if (const NvmlReturn r = api.handle(i, &device); r != nvml_success) {
            out.notes.push_back(fmt::format("NVML: GPU {}: nvmlDeviceGetHandleByIndex_v2: {}", i, nvml->error(r)));
            continue;
        }
        unsigned long long mj = 0;
        unsigned int mw = 0;
        if (api.total_energy && api.total_energy(device, &mj) == nvml_success) {
            auto sensor = std::make_unique<NvmlSensor>(nvml, device, i, SensorKind::energy_counter);
            sensor->read();  // the counter's origin
            out.sensors.push_back(std::move(sensor));
        } else if (api.power_usage && api.power_usage(device, &mw) == nvml_success) {
            out.sensors.push_back(std::make_unique<NvmlSensor>(nvml, device, i, SensorKind::power_sampler));
        } else {
            out.notes.push_back(fmt::format("NVML: GPU {} reports neither its energy nor its power", i));
        }
    }
}

}  // namespace clprobe

// A stand-in for libnvidia-ml.so.1 with the few calls clprobe's NVML sensors make, so the unit
// tests exercise the dlopen path without a GPU (selected with CLPROBE_NVML_LIBRARY). Its behaviour
// comes from the environment, read at nvmlInit_v2:
//   FAKE_NVML_DEVICES     number of GPUs (default 1)
//   FAKE_NVML_INIT_FAIL   nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED (9)
//   FAKE_NVML_NO_ENERGY   nvmlDeviceGetTotalEnergyConsumption is NVML_ERROR_NOT_SUPPORTED (3)
//   FAKE_NVML_POWER_MW    what nvmlDeviceGetPowerUsage returns (default 75000)
//   FAKE_NVML_FAIL_AFTER  every call on a GPU fails (NVML_ERROR_GPU_IS_LOST, 15) after this many on it
// Each GPU's energy counter starts at 5,000,000 mJ and advances 250 mJ per call on it, a known step
// the tests check against.
#include <cstdlib>
#include <cstring>

namespace {

int devices = 1;
bool no_energy = false;
unsigned power_mw = 75000;
long fail_after = -1;
// Per GPU: the calls made on it and its energy counter.
constexpr int max_devices = 16;
long calls[max_devices];
unsigned long long energy_mj[max_devices];
int device_ids[max_devices];

int index_of(void* device) {
    return static_cast<int>(static_cast<int*>(device) - device_ids);
}

long env_number(const char* name, long fallback) {
    const char* v = std::getenv(name);
    return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

bool lost(int device) {
    ++calls[device];
    return fail_after >= 0 && calls[device] > fail_after;
}

}  // namespace

extern "C" {

int nvmlInit_v2() {
    if (std::getenv("FAKE_NVML_INIT_FAIL")) return 9;
    devices = static_cast<int>(env_number("FAKE_NVML_DEVICES", 1));
    no_energy = std::getenv("FAKE_NVML_NO_ENERGY") != nullptr;
    power_mw = static_cast<unsigned>(env_number("FAKE_NVML_POWER_MW", 75000));
    fail_after = env_number("FAKE_NVML_FAIL_AFTER", -1);
    for (int i = 0; i < max_devices; ++i) {
        calls[i] = 0;
        energy_mj[i] = 5000000;
    }
    return 0;
}

int nvmlShutdown() {
    return 0;
}

const char* nvmlErrorString(int result) {
    switch (result) {
        case 3:
            return "Not Supported";
        case 9:
            return "Driver Not Loaded";
        case 15:
            return "GPU is lost";
        default:
            return "Unknown Error";
    }
}

int nvmlDeviceGetCount_v2(unsigned int* count) {
    *count = static_cast<unsigned>(devices);
    return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
    if (index >= static_cast<unsigned>(devices) || index >= max_devices) return 2;  // NVML_ERROR_INVALID_ARGUMENT
    *device = &device_ids[index];
    return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void* device, unsigned long long* energy) {
    if (no_energy) return 3;
    const int i = index_of(device);
    if (lost(i)) return 15;
    energy_mj[i] += 250;
    *energy = energy_mj[i];
    return 0;
}

int nvmlDeviceGetPowerUsage(void* device, unsigned int* power) {
    if (lost(index_of(device))) return 15;
    *power = power_mw;
    return 0;
}

}  // extern "C"

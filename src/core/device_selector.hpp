#pragma once
// Device selection grammar, kept free of OpenCL so it is unit-tested on synthetic listings:
//   P:D (platform and device index), N (flat index), gpu|cpu|accelerator, or a name substring.
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace clprobe {

struct DeviceListing {
    int platform_index = 0;
    int device_index = 0;
    int flat_index = 0;
    std::string platform_name;
    std::string device_name;
    std::string type;  // gpu, cpu, accelerator, custom, other
};

struct SelectByPosition {
    int platform = 0, device = 0;
};
struct SelectByFlatIndex {
    int index = 0;
};
struct SelectByType {
    std::string type;
};
struct SelectByName {
    std::string substring;
};
struct SelectDefault {};  // first GPU, else the first device

using DeviceSelector = std::variant<SelectDefault, SelectByPosition, SelectByFlatIndex, SelectByType, SelectByName>;

class SelectorError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws SelectorError for text that looks like an index but is not one ("1:", ":0", "1:x", "-1").
DeviceSelector parse_device_selector(std::string_view text);

// Index into `devices` of the selected device, or nullopt when nothing matches.
std::optional<std::size_t> match_device(const DeviceSelector& selector, const std::vector<DeviceListing>& devices);

std::string describe(const DeviceSelector& selector);

}  // namespace clprobe

#include "system/cpu_features.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace clprobe {

namespace {

bool has(const std::vector<std::string>& flags, std::string_view f) {
    return std::find(flags.begin(), flags.end(), f) != flags.end();
}

bool is_x86(std::string_view m) {
    return m == "x86_64" || m == "amd64" || m == "i386" || m == "i486" || m == "i586" || m == "i686";
}

}  // namespace

std::vector<IsaFeature> isa_features(const std::vector<std::string>& flags, std::string_view machine) {
    std::vector<IsaFeature> out;
    if (is_x86(machine)) {
        for (const char* f : {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512_vnni", "avx512_bf16", "avx512_fp16",
                              "amx_tile", "amx_bf16", "amx_int8"})
            out.push_back({f, has(flags, f)});
    } else if (text::starts_with(machine, "aarch64") || text::starts_with(machine, "arm")) {
        // 64-bit kernels call Advanced SIMD "asimd"; 32-bit ones "neon".
        out.push_back({"neon", has(flags, "asimd") || has(flags, "neon")});
        for (const char* f : {"asimddp", "sve", "sve2", "bf16", "i8mm"})
            out.push_back({f, has(flags, f)});
    }
    return out;
}

bool has_hypervisor_flag(const std::vector<std::string>& flags) {
    return has(flags, "hypervisor");
}

}  // namespace clprobe

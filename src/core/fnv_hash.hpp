#pragma once
// FNV-1a, 64 bits: a stable name for a cache entry's key (the key itself is stored beside it and
// compared, so a collision costs a rebuild, never a wrong answer).
#include <cstdint>
#include <string_view>

namespace clprobe {

inline std::uint64_t fnv1a64(std::string_view data) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : data) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

}  // namespace clprobe

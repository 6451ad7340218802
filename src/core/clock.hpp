#pragma once
// Host-clock seconds since a moment: the one helper the probes and the sampler time host work with.
#include <chrono>

namespace clprobe {

inline double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace clprobe

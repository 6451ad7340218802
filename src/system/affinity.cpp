#include "system/affinity.hpp"

#include <sched.h>

#include <cerrno>

namespace clprobe {

std::vector<int> process_affinity() {
    std::vector<int> cpus;
    // The mask must be at least as large as the kernel's; grow it past the 1024 CPUs of cpu_set_t.
    for (int size = 1024; size <= (1 << 16); size *= 2) {
        cpu_set_t* set = CPU_ALLOC(size);
        if (!set) return cpus;
        const std::size_t bytes = CPU_ALLOC_SIZE(size);
        CPU_ZERO_S(bytes, set);
        if (::sched_getaffinity(0, bytes, set) == 0) {
            for (int c = 0; c < size; ++c)
                if (CPU_ISSET_S(c, bytes, set)) cpus.push_back(c);
            CPU_FREE(set);
            return cpus;
        }
        const int err = errno;
        CPU_FREE(set);
        if (err != EINVAL) return cpus;
    }
    return cpus;
}

}  // namespace clprobe

#include "system/host_load.hpp"

namespace clprobe {

std::optional<HostLoad> host_load_between(const ActivitySnapshot& first, const ActivitySnapshot& last, int self_pid,
                                          double ticks_per_second) {
    ActivityAccounting accounting(self_pid, ticks_per_second);
    accounting.add(first);
    accounting.add(last);
    const ActivitySummary s = accounting.summary(0);
    if (!(s.window_seconds > 0) || s.counted_cpus.empty() || !(s.capacity_seconds > 0)) return std::nullopt;
    HostLoad load;
    load.seconds = s.window_seconds;
    load.cpus = static_cast<int>(s.counted_cpus.size());
    load.others_cpus = s.others_cpu_seconds / s.window_seconds;
    load.steal_cpus = s.steal_seconds / s.window_seconds;
    return load;
}

}  // namespace clprobe

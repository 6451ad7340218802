#pragma once
// A probe's host load (core/report.hpp HostLoad) from two /proc snapshots around it: pure
// bookkeeping over ActivityAccounting, so unit tests feed synthetic snapshots.
#include <optional>

#include "core/report.hpp"
#include "system/activity_accounting.hpp"

namespace clprobe {

// The load between two snapshots of the same counted CPUs; nullopt when no time passed between
// them or they counted no CPU.
std::optional<HostLoad> host_load_between(const ActivitySnapshot& first, const ActivitySnapshot& last, int self_pid,
                                          double ticks_per_second);

}  // namespace clprobe

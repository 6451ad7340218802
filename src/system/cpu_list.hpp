#pragma once
// The kernel's CPU list grammar ("0-3,8-11", "5", "" for none), written by sysfs (online,
// shared_cpu_list) and cgroups (cpuset.cpus, cpuset.cpus.effective). Pure, so unit tests can feed
// it synthetic text.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace clprobe {

// CPU numbers, ascending, without duplicates. A blank list is an empty set; nullopt when the
// text is malformed (or names CPUs beyond any kernel's limit).
std::optional<std::vector<int>> parse_cpu_list(std::string_view text);

// The same grammar back for an ascending list, ranges merged: {0,1,2,3,8} -> "0-3,8"; "" for an empty set.
std::string format_cpu_list(const std::vector<int>& cpus);

}  // namespace clprobe

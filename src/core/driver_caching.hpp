#pragma once
// Whether a driver keeps its own cache of built programs, judged from two builds of one new
// program, and the small file that remembers the verdict per driver in clprobe's cache folder.
//
// Why it matters: storing a program in clprobe's binary cache asks the driver for
// CL_PROGRAM_BINARIES, which PoCL answers by compiling every kernel of the program once more (a
// work-group function of dynamic size, ~50 s of a cold default run on a 2-core machine, more than
// all the source builds together), while its own on-disk cache already makes the next run's
// builds cheap. A driver that caches is left to its cache; one that does not gets clprobe's.
#include <optional>
#include <string>

namespace clprobe {

enum class DriverCaching { caches, does_not_cache };

// `first_ms` builds a program no cache has seen, `again_ms` the same source and options right
// after. A cache hit on PoCL costs 2-5% of a large program's build but 20-25% of a small one's
// (peak/compute.cl: 100-170 ms cold, 20-40 ms again, measured on the 2-vCPU VM); Intel's CPU
// runtime, without a cache, builds it again at ~70% (119 -> 83 ms). Below 45% is a hit: between
// the two, where a quarter (the first threshold) let PoCL read as uncached under load.
DriverCaching judge_driver_caching(double first_ms, double again_ms);

// The file's text and its reading back; nullopt for anything else (an older or foreign file).
std::string driver_caching_text(DriverCaching verdict, double first_ms, double again_ms);
std::optional<DriverCaching> parse_driver_caching(const std::string& text);

}  // namespace clprobe

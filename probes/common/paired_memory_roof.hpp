#pragma once
// The memory roof measured again beside a memory-bound workload, its samples interleaved with the
// workload's. kernel.peak.bandwidth is measured seconds before the workloads; on a machine whose
// memory bandwidth drifts (the VM this project is developed on read between 20 and 45 GB/s
// within one run, in phases of a fraction of a second to seconds) a workload could then read
// faster than the roof it is drawn against. Sampled round-robin with the workload's variants, the
// same read sees the same machine states, so the fraction of the roof says what the workload
// leaves on the table, not which phase each was measured in.
#include <cstdint>
#include <optional>
#include <vector>

#include "core/device_info.hpp"
#include "core/memory_roofs.hpp"
#include "core/report.hpp"
#include "runtime/sampler.hpp"

namespace clprobe {

class DeviceSession;

// One read of a buffer the size of the workload's working set, with the read kernel of
// kernel.bandwidth that reached the most (peak/bandwidth.cl; read_chunked_v4 when that probe did
// not run), added to the workload's sampler and checked like kernel.bandwidth's reads.
class PairedMemoryRoof {
  public:
    // Fills the buffer, adds the read to `sampler` (which warms it up and calibrates it) and
    // verifies its sum; throws VerificationError on a wrong sum.
    PairedMemoryRoof(DeviceSession& s, InterleavedSampler& sampler, std::uint64_t working_set_bytes,
                     const std::vector<ProbeResult>& earlier);
    std::size_t index() const { return index_; }  // its samples in sampler.run()'s result
    // Whether the device can hold a read of working_set_bytes beside a workload of about that size
    // (room for three such buffers); when it cannot, the workload keeps the placed roof alone.
    static bool fits(const DeviceInfo& info, std::uint64_t working_set_bytes);
    // Its samples as GB/s under `metric`, with a note naming the kernel.
    Measurement measurement(std::string metric, Labels labels, const SampleSet& set) const;

  private:
    std::size_t index_ = 0;
    double bytes_ = 0;
    std::string kernel_;
};

// The roof a workload point is held against: the placed one, raised to the fastest sample of the
// paired read when that is higher (the metric then names the paired measurement); the paired read
// alone when nothing was placed. The fastest sample, not the median, because a ceiling is the best
// the machine did (kernel.bandwidth's contenders are best-of samples too), and because with the
// samples interleaved the workload's median round never outran the read's fastest one: a quick
// run's decode read 46/44/41/33/34 GB/s beside reads of 51/54/37/36/31, a median of 41 against a
// median read of 37.
std::optional<PlacedRoof> raised_roof(const std::optional<PlacedRoof>& placed, const Measurement& paired);

}  // namespace clprobe

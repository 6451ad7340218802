#pragma once
// Recording helpers the attention probes share: ceilings measured earlier in the run, derived
// single-value measurements and device-memory footprints (roofline points: core/roofline_facts.hpp).
#include <optional>
#include <string>
#include <vector>

#include "attention/attention_memory.hpp"
#include "core/device_info.hpp"
#include "core/report.hpp"
#include "runtime/probe.hpp"

namespace clprobe::attention {

// Median of `metric` from a probe that ran earlier in this run (kernel.peak.fp32, ...), if any.
std::optional<double> earlier_median(const ProbeContext& ctx, const std::string& metric);

// A value computed from this run's inputs or measurements rather than timed (padding fraction,
// relative error, bytes): one sample, no timer.
Measurement derived(std::string metric, std::string unit, Labels labels, double value, bool higher_is_better);

// The device's global memory and largest allocation; nullopt when it reports either as 0.
std::optional<MemoryLimits> memory_limits(const DeviceInfo& info);

// attention.memory.device_bytes and attention.memory.largest_buffer of one variant.
void add_footprint(ProbeResult& out, const Labels& labels, const Footprint& f);

// Samples in seconds per iteration (the sampler's unit) as a measurement.
Measurement time_measurement(std::string metric, Labels labels, const SampleSet& set);

}  // namespace clprobe::attention

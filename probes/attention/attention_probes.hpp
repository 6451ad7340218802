#pragma once
// Factories for the attention workload's probes (kernel layer, workload "attention"); see
// probes/attention/README.md for what each measures. builtin_probes.cpp lists them in run order.
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

std::unique_ptr<Probe> make_attention_prefill_probe();
std::unique_ptr<Probe> make_attention_decode_probe();
// fp16 KV cache: Unsupported, with the reason, where a half8 kernel does not build.
std::unique_ptr<Probe> make_attention_decode_fp16_probe();
std::unique_ptr<Probe> make_attention_batching_probe();
std::unique_ptr<Probe> make_attention_host_blas_probe();
std::unique_ptr<Probe> make_attention_step_probe();

}  // namespace clprobe

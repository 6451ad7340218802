#pragma once
// Factories for the GLM workload's probes (kernel layer, workload "glm"); builtin_probes.cpp runs
// them after the device ceilings, whose kernel.peak.bandwidth the roofline fractions divide by.
#include <memory>

#include "runtime/probe.hpp"

namespace clprobe {

std::unique_ptr<Probe> make_glm_gradient_probe();   // glm.gradient: every gradient variant
std::unique_ptr<Probe> make_glm_fit_probe();        // glm.fit: IRLS / Newton fits, both families
std::unique_ptr<Probe> make_glm_host_blas_probe();  // glm.host_blas: the same gradient with OpenBLAS
std::unique_ptr<Probe> make_glm_pipeline_probe();   // glm.pipeline: the mini-batch training step

}  // namespace clprobe

#pragma once
// What the kernel layer's probes share with their callers: the precision make_compute_probe is
// made for (its factories, like every probe's, are declared from probes/probe_list.inc).
namespace clprobe {

enum class Precision { fp16, fp32, fp64 };

}  // namespace clprobe

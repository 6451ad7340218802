#pragma once
// The work one launch of a traced kernel does, counted by simulating its captured launch under
// Oclgrind with clprobe's instruction-counting plugin (docs/trace.md, "How work is counted"), or
// why it was not counted. Plain data in TraceFacts::work; the trace rules place each counted
// kernel against the roof that binds it (reports/rules/kernel_roofs).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace clprobe {

struct KernelWorkFacts {
    std::string kernel;
    bool counted = false;
    std::string reason;  // why not counted; empty when counted
    // How: "exact" (every work-group simulated) or "sampled" (groups_counted of groups_total
    // simulated, evenly over the first groups_covered, and extrapolated).
    std::string method;
    std::uint64_t groups_total = 0, groups_counted = 0, groups_covered = 0;
    double group_instructions_cv = 0;  // how unlike the simulated groups were (instructions per group)
    std::uint64_t global_items = 0;    // work-items of the counted launch
    std::string global_size;           // "512,512,1", as captured
    // Device time of the traced launches of this kernel with the counted launch's global size
    // (median, and how many): the time the counted work is set against, like for like.
    double launch_seconds = 0;
    std::uint64_t like_launches = 0;
    // The share of the kernel's traced device time in those launches: what the count stands for
    // (hashcat's small autotune launches beside its large ones: the count of one says little of the other).
    double like_share = 1;
    // Per launch: floating-point operations by precision (fp16, fp32, fp64; an FMA is 2),
    // transcendental and square-root builtins apart, integer operations on data (address and
    // loop-control arithmetic apart), bytes by address space and direction.
    double flops_fp16 = 0, flops_fp32 = 0, flops_fp64 = 0;
    double special_ops = 0;
    double int_ops = 0, int64_ops = 0, address_ops = 0;
    double global_load_bytes = 0, global_store_bytes = 0, constant_load_bytes = 0;
    double local_load_bytes = 0, local_store_bytes = 0;
    // Distinct bytes of global memory touched (64-byte lines): exact for an exact count; for a
    // sampled one, the sampled groups' lines times groups_total / groups_counted (an upper estimate:
    // groups that share data are counted once each).
    double footprint_bytes = 0;
    double atomics = 0, barriers = 0, instructions = 0;
    double simulate_seconds = 0;  // Oclgrind's time for it
    // Exact counts only: how the simulated launch's outputs compared with the captured ones
    // ("identical", "within_tolerance", "changed"); empty when not checked.
    std::string output_check;
    std::string note;  // how the count departs from the launch as captured ("built without optimisation ...")
    // Counted from an unoptimised build: operations and bytes the optimiser would have removed are in
    // it, so each count, and each fraction of a roof made from it, is an upper bound.
    bool upper_bound = false;

    double flops() const { return flops_fp16 + flops_fp32 + flops_fp64; }
    // Bytes loaded and stored in global memory (constant memory apart: small tables a cache keeps).
    double global_bytes() const { return global_load_bytes + global_store_bytes; }
};

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(KernelWorkFacts, kernel, counted, reason, method, groups_total,
                                                groups_counted, groups_covered, group_instructions_cv, global_items,
                                                global_size, launch_seconds, like_launches, like_share, flops_fp16,
                                                flops_fp32, flops_fp64, special_ops, int_ops, int64_ops, address_ops,
                                                global_load_bytes, global_store_bytes, constant_load_bytes,
                                                local_load_bytes, local_store_bytes, footprint_bytes, atomics, barriers,
                                                instructions, simulate_seconds, output_check, note, upper_bound)

// The counted work of `kernel` in `work`, or nullptr.
const KernelWorkFacts* find_work(const std::vector<KernelWorkFacts>& work, const std::string& kernel);

}  // namespace clprobe

#include "program_needs.hpp"

#include <algorithm>

#include "attention/attention_config.hpp"
#include "attention/attention_device.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_support.hpp"

namespace clprobe {

namespace {

// peak/compute.cl's precisions (kernel/compute_probe.cpp, traits_of; kernel.build and
// system.limits build the fp32 one).
const char* compute_options(const std::string& precision) {
    if (precision == "fp64") return "-D REAL=double -D REAL_IS_DOUBLE";
    if (precision == "fp16") return "-D REAL=half -D REAL_IS_HALF";
    return "-D REAL=float";
}

bool starts_with(const std::string& s, const char* prefix) {
    return s.rfind(prefix, 0) == 0;
}

void add_glm(std::vector<ProgramNeed>& out, const std::string& id, const DeviceInfo& device) {
    // glm/glm_device.cpp: the dense and CSR gradients in fp32, and fp64 where the device has it;
    // the fit's Newton step in the data's precision (fp32 by default); reduced storage of X below.
    for (const bool fp64 : {false, true}) {
        if (fp64 && !device.fp64) continue;
        const std::string opts = glm::real_options(fp64);
        if (id == "glm.gradient" || id == "glm.pipeline" || id == "glm.fit") {
            out.push_back({"glm/gradient.cl", opts});
            if (id == "glm.gradient") out.push_back({"glm/sparse.cl", opts});
        }
        if (id == "glm.fit" && !fp64) out.push_back({"glm/newton.cl", opts});
    }
    // X in reduced storage: the gradients of every storage in one program, and the fit's Newton
    // pass per storage.
    if (id == "glm.gradient") out.push_back({"glm/storage.cl", ""});
    if (id == "glm.fit")
        for (const glm::Storage storage : glm::reduced_storages)
            out.push_back({"glm/newton.cl", glm::newton_options(false, storage)});
}

}  // namespace

std::vector<ProgramNeed> programs_needed(const std::vector<std::string>& probe_ids, const RunOptions& options,
                                         const DeviceInfo& device) {
    std::vector<ProgramNeed> out;
    const std::uint32_t head_dim = attention::config_for(options).head_dim;
    for (const auto& id : probe_ids) {
        if (id == "kernel.build" || id == "system.limits") out.push_back({"peak/compute.cl", compute_options("fp32")});
        if (id == "kernel.launch") out.push_back({"peak/launch.cl", ""});
        if (id == "kernel.bandwidth") out.push_back({"peak/bandwidth.cl", ""});
        if (id == "kernel.memory_levels") out.push_back({"peak/memory_levels.cl", ""});
        if (id == "kernel.compute.int32") out.push_back({"peak/int32.cl", ""});
        if (starts_with(id, "kernel.compute.") && id != "kernel.compute.int32") {
            const std::string precision = id.substr(std::string("kernel.compute.").size());
            if ((precision == "fp64" && !device.fp64) || (precision == "fp16" && !device.fp16)) continue;
            out.push_back({"peak/compute.cl", compute_options(precision)});
        }
        if (id == "transfer.bandwidth") out.push_back({"transfer/copy.cl", ""});
        if (id == "transfer.overlap") out.push_back({"transfer/overlap.cl", ""});
        if (starts_with(id, "glm.")) add_glm(out, id, device);
        if (starts_with(id, "attention.") && id != "attention.host_blas" && head_dim % 8 == 0 && head_dim > 0) {
            // attention/attention_device.cpp: the fp32 program, its row-block variant, and the
            // fp16 decode program where the device advertises half precision.
            if (id == "attention.decode.fp16") {
                if (device.fp16)
                    out.push_back({"attention/attention.cl", attention::program_options(head_dim) + " -D ATTN_FP16"});
                continue;
            }
            out.push_back({"attention/attention.cl", attention::program_options(head_dim)});
            if (id == "attention.prefill" || id == "attention.step")
                out.push_back({"attention/attention.cl", attention::program_options(head_dim) + " -D ATTN_ROW_BLOCK"});
        }
        // The workloads hold their figures against the paired bandwidth read (common/paired_memory_roof).
        if (id == "glm.gradient" || id == "attention.decode") out.push_back({"peak/bandwidth.cl", ""});
    }
    return unique_programs(out);
}

RunOptions warm_up_options(RunOptions options) {
    constexpr std::uint64_t warm_up_rows = 8192;
    options.glm.rows = std::min(glm::shape_for(options).rows, warm_up_rows);
    return options;
}

std::vector<WarmUpGroup> warm_up_groups(const std::vector<std::string>& probe_ids, const RunOptions& options,
                                        const DeviceInfo& device) {
    const auto planned = [&probe_ids](const char* id) {
        return std::find(probe_ids.begin(), probe_ids.end(), id) != probe_ids.end();
    };
    std::vector<WarmUpGroup> groups;
    for (const std::vector<std::string>& members :
         {std::vector<std::string>{"glm.gradient"},
          std::vector<std::string>{"attention.prefill", "attention.decode"}}) {
        WarmUpGroup g;
        for (const auto& id : members)
            if (planned(id.c_str())) g.probe_ids.push_back(id);
        if (g.probe_ids.empty()) continue;
        g.programs = programs_needed(g.probe_ids, options, device);
        groups.push_back(std::move(g));
    }
    return groups;
}

}  // namespace clprobe

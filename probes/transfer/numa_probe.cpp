// transfer.numa: on hosts with more than one NUMA node, the host buffer placed on each node in
// turn (hwloc memory binding, the calling thread bound to the same node), giving one bandwidth row
// per node; the device's local node (from topology.device) should win.
#include <fmt/core.h>

#include <hwloc.h>

#include "cl/cl_error.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "probe_factories.hpp"
#include "topology/hwloc_topology.hpp"
#include "transfer/transfer_support.hpp"

namespace clprobe {

namespace {

using namespace transfer;

std::uint64_t numa_bytes(RunMode mode) {
    return mode == RunMode::quick ? (32ull << 20) : mode == RunMode::full ? (256ull << 20) : (64ull << 20);
}

// hwloc-allocated memory bound to one node, freed with hwloc_free.
class NodeMemory {
  public:
    NodeMemory(const Topology& topology, hwloc_obj_t node, std::size_t bytes) : topology_(topology), bytes_(bytes) {
        ptr_ = hwloc_alloc_membind(topology.get(), bytes, node->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET);
        if (!ptr_) throw ProbeUnsupported(fmt::format("hwloc_alloc_membind on NUMA node {} failed", node->os_index));
    }
    ~NodeMemory() { hwloc_free(topology_.get(), ptr_, bytes_); }
    NodeMemory(const NodeMemory&) = delete;
    NodeMemory& operator=(const NodeMemory&) = delete;
    std::uint32_t* words() { return static_cast<std::uint32_t*>(ptr_); }

  private:
    const Topology& topology_;
    std::size_t bytes_;
    void* ptr_ = nullptr;
};

// Restores the calling thread's CPU binding when the probe ends, however it ends.
class ThreadBinding {
  public:
    explicit ThreadBinding(const Topology& topology) : topology_(topology), saved_(hwloc_bitmap_alloc()) {
        saved_ok_ = hwloc_get_cpubind(topology.get(), saved_, HWLOC_CPUBIND_THREAD) == 0;
    }
    ~ThreadBinding() {
        if (saved_ok_) hwloc_set_cpubind(topology_.get(), saved_, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(saved_);
    }
    ThreadBinding(const ThreadBinding&) = delete;
    ThreadBinding& operator=(const ThreadBinding&) = delete;
    void bind(hwloc_obj_t node) const { hwloc_set_cpubind(topology_.get(), node->cpuset, HWLOC_CPUBIND_THREAD); }

  private:
    const Topology& topology_;
    hwloc_bitmap_t saved_;
    bool saved_ok_ = false;
};

std::optional<unsigned> device_node(const std::vector<ProbeResult>& earlier) {
    for (const auto& r : earlier)
        if (r.status == ProbeStatus::ok)
            if (const auto* m = find_measurement(r, "topology.device.numa_node"))
                return static_cast<unsigned>(m->summary.median);
    return std::nullopt;
}

class NumaProbe final : public Probe {
  public:
    std::string id() const override { return "transfer.numa"; }
    std::string layer() const override { return "transfer"; }
    std::string title() const override { return "Transfer bandwidth with the host buffer on each NUMA node"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const Topology topology = Topology::live();
        std::vector<hwloc_obj_t> nodes;
        for (hwloc_obj_t n = nullptr; (n = hwloc_get_next_obj_by_type(topology.get(), HWLOC_OBJ_NUMANODE, n));)
            if (n->cpuset && !hwloc_bitmap_iszero(n->cpuset)) nodes.push_back(n);
        if (nodes.size() < 2)
            throw ProbeUnsupported(fmt::format("{} NUMA node{} with CPUs: no placement to compare", nodes.size(),
                                               nodes.size() == 1 ? "" : "s"));

        DeviceSession& s = *ctx.device;
        cl::CommandQueue& q = s.queue();
        const std::uint64_t bytes =
            fit_buffer_bytes(s.info(), numa_bytes(ctx.options.mode), static_cast<int>(nodes.size()) + 1, granule);
        cl::Buffer device = make_buffer(s.context(), CL_MEM_READ_WRITE, bytes);
        const ThreadBinding binding(topology);
        const auto local = device_node(ctx.earlier);

        std::vector<std::unique_ptr<NodeMemory>> memory;
        const SamplerConfig config = sampler_for(ctx.options.mode);
        InterleavedSampler sampler(config);
        std::vector<Labels> labels;
        std::vector<std::string> metrics;
        for (hwloc_obj_t node : nodes) {
            binding.bind(node);
            memory.push_back(std::make_unique<NodeMemory>(topology, node, bytes));
            std::uint32_t* host = memory.back()->words();
            const std::uint32_t seed = 100 + node->os_index;
            fill_pattern(host, bytes / 4, seed);  // the pages are bound to the node: touching places them there
            const Labels node_labels{{"node", std::to_string(node->os_index)},
                                     {"local", !local                     ? "unknown"
                                               : *local == node->os_index ? "yes"
                                                                          : "no"}};
            for (bool h2d : {true, false}) {
                const std::string what =
                    fmt::format("{} with host memory on node {}", h2d ? "h2d" : "d2h", node->os_index);
                if (h2d)
                    poison_buffer(q, device, bytes);
                else
                    poison_windows(host, bytes);
                sampler.add(
                    [&q, &s, &device, &binding, node, host, bytes, h2d](std::int64_t n) {
                        binding.bind(node);
                        return time_commands(q, s.profiling(), n, [&] {
                            cl::Event e;
                            if (h2d)
                                q.enqueueWriteBuffer(device, CL_TRUE, 0, bytes, host, nullptr, &e);
                            else
                                q.enqueueReadBuffer(device, CL_TRUE, 0, bytes, host, nullptr, &e);
                            return e;
                        });
                    },
                    static_cast<double>(bytes));
                if (h2d)
                    verify_buffer(q, device, bytes, seed, what);
                else
                    verify_windows(host, bytes, seed, what);
                metrics.push_back(h2d ? "transfer.numa.h2d.bandwidth" : "transfer.numa.d2h.bandwidth");
                labels.push_back(node_labels);
            }
        }
        const std::vector<SampleSet> sets = sampler.run();
        for (std::size_t i = 0; i < sets.size(); ++i) {
            Measurement m = make_measurement(metrics[i], "GB/s", labels[i],
                                             to_rates(sets[i], static_cast<double>(bytes), 1e-9), sets[i].timer);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        out.attributes["bytes"] = bytes;
        out.attributes["device_numa_node"] = local ? nlohmann::json(*local) : nlohmann::json("unknown");
        out.attributes["placement"] =
            "hwloc_alloc_membind(BIND) on each node, first touched by the calling thread bound to that node's CPUs; "
            "pageable memory with blocking clEnqueueWrite/ReadBuffer";
        out.attributes["sampling"] = sampling_note(config);
    }
};

}  // namespace

std::unique_ptr<Probe> make_transfer_numa_probe() {
    return std::make_unique<NumaProbe>();
}

}  // namespace clprobe

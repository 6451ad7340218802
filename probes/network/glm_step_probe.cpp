// network.glm_step: one data-parallel training step of the GLM workload, the way a distributed
// fit runs it. Each rank holds its share of the rows on the device; a step computes the local
// gradient there (the fused row kernel of probes/glm), downloads it, all-reduces the p-vector
// (MPI_Allreduce, double sum), adds the ridge term and takes the gradient step on the host, and
// uploads the new beta. Stages are timed one by one on this rank's host clock, so the report's
// ranking can weigh each finding by its stage's share of the step (network.glm_step pipeline).
// The first step's all-reduced gradient is checked against the double reference over all rows.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "core/pipeline_stages.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_support.hpp"
#include "network/mpi_call.hpp"
#include "network/network_support.hpp"
#include "probe_factories.hpp"

namespace clprobe {

namespace {

using namespace glm;
using Clock = std::chrono::steady_clock;

constexpr const auto& stages = network_glm_step_stages;
using Stages = std::array<double, stages.size()>;  // seconds, in `stages` order
constexpr double learning_rate = 0.1;

int steps_per_sample(RunMode mode) {
    return mode == RunMode::quick ? 2 : mode == RunMode::full ? 8 : 4;
}

// Rows [first, first + rows) of `all` as a dataset of their own.
Dataset shard_of(const Dataset& all, std::uint64_t first, std::uint64_t rows) {
    Dataset d;
    d.n = rows;
    d.p = all.p;
    d.family = all.family;
    d.x.assign(all.x.begin() + static_cast<std::ptrdiff_t>(first * all.p),
               all.x.begin() + static_cast<std::ptrdiff_t>((first + rows) * all.p));
    d.y.assign(all.y.begin() + static_cast<std::ptrdiff_t>(first),
               all.y.begin() + static_cast<std::ptrdiff_t>(first + rows));
    d.beta_true = all.beta_true;
    return d;
}

class GlmStepProbe final : public net::MpiProbe {
  public:
    GlmStepProbe() : MpiProbe(network_glm_step_info) {}

    void run(ProbeContext& ctx, ProbeResult& out) override {
        const MpiWorld& w = net::require_world();
        const Shape shape = shape_for(ctx.options);
        const std::uint64_t n = std::max<std::uint64_t>(shape.rows, static_cast<std::uint64_t>(w.size));
        const std::uint64_t first = n * static_cast<std::uint64_t>(w.rank) / static_cast<std::uint64_t>(w.size);
        const std::uint64_t last = n * static_cast<std::uint64_t>(w.rank + 1) / static_cast<std::uint64_t>(w.size);
        std::vector<double> reference;
        DeviceSession& s = net::require_device(ctx);
        net::on_all_ranks([&] {
            fit_buffer_bytes(s.info(), (last - first) * shape.cols * 4, 1, shape.cols * 4);
            const auto all = shared_dataset(n, shape.cols, Family::logistic);
            beta_ = evaluation_beta(*all);
            reference = reference_gradient(*all, beta_, ridge_lambda);
            data_ = upload_dense(s, shard_of(*all, first, last - first), Layout::row, false, beta_,
                                 gradient_groups(s.info()));
            variant_.wg = std::min<std::size_t>(64, s.info().max_work_group_size);
            launches_ = gradient_launches(s, data_, variant_, Family::logistic, 1.0 / static_cast<double>(n), 0.0);
        });

        step(s);  // warm-up, and the step whose gradient is checked (beta is still the reference's)
        bool ok = true;
        try {
            verify_gradient("data-parallel gradient", gradient_, reference, false);
        } catch (const VerificationError&) {
            ok = false;
        }
        net::verify_on_all_ranks(ok, "the all-reduced gradient differs from the double reference");
        sample(s, ctx.options.mode, out);
        out.attributes["rows_total"] = n;
        out.attributes["rows_local"] = last - first;
        out.attributes["cols"] = shape.cols;
        out.attributes["ranks"] = w.size;
        out.attributes["kernel_variant"] = variant_.name();
        out.attributes["stages"] =
            "host clock, this rank: compute = gradient kernels to completion; download = the p-vector to host; "
            "allreduce = MPI_Allreduce of p doubles (includes waiting for slower ranks); update = ridge term and "
            "gradient step on the host; upload = the new beta to the device";
    }

  private:
    void sample(DeviceSession& s, RunMode mode, ProbeResult& out) {
        const int steps = steps_per_sample(mode);
        std::vector<Stages> log;
        std::vector<double> step_seconds;
        for (int k = 0; k < net::samples_for(mode); ++k) {
            mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
            Stages sum{};
            const auto t0 = Clock::now();
            for (int i = 0; i < steps; ++i) {
                const Stages st = step(s);
                for (std::size_t j = 0; j < sum.size(); ++j)
                    sum[j] += st[j] / steps;
            }
            step_seconds.push_back(seconds_since(t0) / steps);
            log.push_back(sum);
        }
        for (std::size_t j = 0; j < stages.size(); ++j) {
            std::vector<double> v;
            for (const auto& st : log)
                v.push_back(st[j]);
            out.measurements.push_back(make_measurement(fmt::format("{}.stage_time", pipeline_ids::network_glm_step),
                                                        "s", {{"stage", stage_name(stages[j])}}, v,
                                                        TimerKind::host_steady_clock, false));
        }
        Measurement m =
            make_measurement("network.glm_step.step_time", "s", {}, step_seconds, TimerKind::host_steady_clock, false);
        m.iterations_per_sample = steps;
        out.measurements.push_back(std::move(m));
    }

    // One step; leaves the all-reduced gradient (before the update) in gradient_.
    Stages step(DeviceSession& s) {
        Stages st{};
        cl::CommandQueue& q = s.queue();
        auto mark = Clock::now();
        enqueue_launches(q, launches_);
        q.finish();
        st[0] = seconds_since(mark);
        mark = Clock::now();
        const std::vector<double> local = read_gradient(q, data_);
        st[1] = seconds_since(mark);
        mark = Clock::now();
        gradient_.assign(local.size(), 0.0);
        mpi_check(MPI_Allreduce(local.data(), gradient_.data(), static_cast<int>(local.size()), MPI_DOUBLE, MPI_SUM,
                                MPI_COMM_WORLD),
                  "MPI_Allreduce");
        st[2] = seconds_since(mark);
        mark = Clock::now();
        std::vector<float> next(beta_.size());
        for (std::size_t j = 0; j < beta_.size(); ++j) {
            gradient_[j] += ridge_lambda * beta_[j];
            beta_[j] -= learning_rate * gradient_[j];
            next[j] = static_cast<float>(beta_[j]);
        }
        st[3] = seconds_since(mark);
        mark = Clock::now();
        q.enqueueWriteBuffer(data_.beta, CL_TRUE, 0, next.size() * sizeof(float), next.data());
        st[4] = seconds_since(mark);
        return st;
    }

    std::vector<double> beta_, gradient_;
    DeviceData data_;
    GradientVariant variant_;
    std::vector<Launch> launches_;
};

}  // namespace

std::unique_ptr<Probe> make_network_glm_step_probe() {
    return std::make_unique<GlmStepProbe>();
}

}  // namespace clprobe

// glm.pipeline: a mini-batch training step where X does not stay on the device. Each step
// uploads the batches of X and y, computes each batch's gradient (the fused row kernel),
// downloads it and adds it up on the host. Variants, baseline first (the way a user first writes
// it): serial_pageable, serial_pinned, double_buffered (uploads on a second queue overlap the
// previous batch's kernels) and resident (X uploaded once, kept on the device). Every step's
// gradient is checked against the double reference before its time counts.
#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <map>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "core/clock.hpp"
#include "core/stop_points.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_probes.hpp"
#include "glm/glm_support.hpp"

namespace clprobe {

namespace {

using namespace glm;
using Clock = std::chrono::steady_clock;

// Default mode keeps the step short enough to sample several times within the budget.
std::uint64_t pipeline_rows_cap(RunMode mode) {
    return mode == RunMode::quick ? (1u << 17) : mode == RunMode::full ? (1u << 22) : (1u << 18);
}

enum class Variant { serial_pageable, serial_pinned, double_buffered, resident };
constexpr std::array<Variant, 4> all_variants = {Variant::serial_pageable, Variant::serial_pinned,
                                                 Variant::double_buffered, Variant::resident};
const char* name_of(Variant v) {
    switch (v) {
        case Variant::serial_pageable:
            return "serial_pageable";
        case Variant::serial_pinned:
            return "serial_pinned";
        case Variant::double_buffered:
            return "double_buffered";
        case Variant::resident:
            break;
    }
    return "resident";
}

constexpr std::array<const char*, 5> stage_names = {"upload", "compute", "download", "host", "sync"};
using Stages = std::array<double, 5>;  // seconds, in stage_names order

// Host memory the device can copy from directly (pinned, via CL_MEM_ALLOC_HOST_PTR), mapped once.
struct PinnedHost {
    cl::Buffer buffer;
    void* ptr = nullptr;
    PinnedHost(DeviceSession& s, std::size_t bytes) {
        buffer = make_buffer(s.context(), CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes);
        ptr = s.queue().enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
    }
};

class PipelineProbe final : public Probe {
  public:
    std::string id() const override { return "glm.pipeline"; }
    std::string layer() const override { return "kernel"; }
    std::string title() const override { return "GLM mini-batch step: upload, compute, download"; }
    std::string workload() const override { return "glm"; }

    void run(ProbeContext& ctx, ProbeResult& out) override {
        DeviceSession& s = *ctx.device;
        const DeviceInfo& info = s.info();
        const Shape shape = shape_for(ctx.options);
        const std::uint32_t p = shape.cols;
        const std::uint64_t row_bytes = std::uint64_t{p} * 4;
        // Pinned X, the resident copy and two batch sets: cap rows so everything fits.
        const std::uint64_t cap = std::min(shape.rows, pipeline_rows_cap(ctx.options.mode));
        n_ = fit_buffer_bytes(info, cap * row_bytes, 3, row_bytes) / row_bytes;
        batch_ = std::max<std::uint64_t>(1, std::min(shape.batch, n_));
        batches_ = (n_ + batch_ - 1) / batch_;
        p_ = p;

        data_ = shared_dataset(n_, p, Family::logistic);
        beta_ = evaluation_beta(*data_);
        const std::vector<double> reference = reference_gradient(*data_, beta_, ridge_lambda);
        groups_ = gradient_groups(info);
        variant_.wg = std::min<std::size_t>(64, info.max_work_group_size);

        // Pageable source: the dataset's own vectors. Pinned source: a mapped host-pointer buffer.
        pinned_x_ = std::make_unique<PinnedHost>(s, data_->x.size() * 4);
        pinned_y_ = std::make_unique<PinnedHost>(s, data_->y.size() * 4);
        std::memcpy(pinned_x_->ptr, data_->x.data(), data_->x.size() * 4);
        std::memcpy(pinned_y_->ptr, data_->y.data(), data_->y.size() * 4);
        for (auto& set : sets_)
            set = allocate_row_batch(s, batch_, p, beta_, groups_);
        resident_ = upload_dense(s, *data_, Layout::row, false, beta_, groups_);
        upload_queue_ = s.make_queue();
        batch_g_.assign(batches_ * p, 0.0f);

        SamplerConfig config = sampler_for(ctx.options.mode);
        config.budget_seconds = ctx.options.mode == RunMode::quick ? 0.12 : ctx.options.mode == RunMode::full ? 3 : 0.8;
        InterleavedSampler sampler(config);
        std::array<std::vector<Stages>, all_variants.size()> stage_log;
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            const Variant v = all_variants[i];
            sampler.add([&, v, i](std::int64_t iters) {
                Stages total{};
                const auto t0 = Clock::now();
                for (std::int64_t k = 0; k < iters; ++k) {
                    const Stages st = step(s, v);
                    for (std::size_t j = 0; j < total.size(); ++j)
                        total[j] += st[j] / static_cast<double>(iters);
                }
                stage_log[i].push_back(total);
                return TimedBatch{seconds_since(t0), TimerKind::host_steady_clock};
            });
            verify_gradient(fmt::format("mini-batch step ({})", name_of(v)), gradient_, reference, false);
            check_stop();
        }
        const std::vector<SampleSet> sets = sampler.run();

        // Stages first (baseline variant first), then the whole-step times.
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            const std::size_t samples = sets[i].seconds_per_iteration.size();
            const auto& log = stage_log[i];
            for (std::size_t j = 0; j < stage_names.size(); ++j) {
                if (all_variants[i] == Variant::resident && std::string_view(stage_names[j]) == "upload") continue;
                std::vector<double> v;
                for (std::size_t k = log.size() - samples; k < log.size(); ++k)
                    v.push_back(log[k][j]);
                Measurement m = make_measurement("glm.pipeline.stage_time", "s",
                                                 {{"stage", stage_names[j]}, {"variant", name_of(all_variants[i])}}, v,
                                                 TimerKind::device_profiling, false);
                if (!s.profiling() || j >= 3) m.timer = TimerKind::host_steady_clock;
                out.measurements.push_back(std::move(m));
            }
        }
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            Measurement m = make_measurement("glm.pipeline.step_time", "s", {{"variant", name_of(all_variants[i])}},
                                             sets[i].seconds_per_iteration, sets[i].timer, false);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
        out.attributes["rows"] = n_;
        out.attributes["cols"] = p;
        out.attributes["batch_rows"] = batch_;
        out.attributes["batches"] = batches_;
        out.attributes["kernel_variant"] = variant_.name();
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["stages"] =
            "serial variants: upload, compute and download from event profiling, host = adding the batch gradients, "
            "sync = the rest of the step's wall time (waits, launches). double_buffered: compute, download and host "
            "as above; upload = the wall time they do not cover (the upload not hidden behind compute, waits "
            "included); sync 0. resident: no upload stage.";
        pinned_x_.reset();
        pinned_y_.reset();
    }

  private:
    // The gradient launches of one buffer set (0, 1; 2 = the resident copy) over `rows` rows, made
    // once: a step reuses them instead of creating kernels per batch.
    std::vector<Launch>& launches_for(DeviceSession& s, DeviceData& data, int set, std::uint64_t rows) {
        auto& l = launches_[{set, rows}];
        if (l.empty())
            l = gradient_launches(s, data, variant_, Family::logistic, 1.0 / static_cast<double>(n_), 0.0, rows);
        return l;
    }

    // One training step's gradient over all n rows, stage times in seconds.
    Stages step(DeviceSession& s, Variant v) {
        const bool profiling = s.profiling();
        const auto t0 = Clock::now();
        Stages st{};
        std::vector<cl::Event> ups, comps, downs;
        cl::CommandQueue& q = s.queue();
        if (v == Variant::resident) {
            auto& launches = launches_for(s, resident_, 2, n_);
            comps.push_back(enqueue_launches(q, launches));
            cl::Event d;
            q.enqueueReadBuffer(resident_.g, CL_FALSE, 0, p_ * 4, batch_g_.data(), nullptr, &d);
            downs.push_back(d);
            q.finish();
        } else if (v == Variant::double_buffered) {
            // Batch b's upload (upload queue) waits for the kernels that last read its buffer set
            // (batch b - 2); its kernels (main queue) wait for its upload.
            std::array<cl::Event, 2> last_compute;
            for (std::uint64_t b = 0; b < batches_; ++b) {
                DeviceData& set = sets_[b % 2];
                const std::uint64_t first = b * batch_, rows = std::min(batch_, n_ - first);
                std::vector<cl::Event> wait;
                if (b >= 2) wait.push_back(last_compute[b % 2]);
                cl::Event ux, uy;
                upload_queue_.enqueueWriteBuffer(set.x, CL_FALSE, 0, rows * p_ * 4,
                                                 static_cast<float*>(pinned_x_->ptr) + first * p_, &wait, &ux);
                upload_queue_.enqueueWriteBuffer(set.y, CL_FALSE, 0, rows * 4,
                                                 static_cast<float*>(pinned_y_->ptr) + first, nullptr, &uy);
                upload_queue_.flush();
                ups.push_back(ux);
                ups.push_back(uy);
                auto& launches = launches_for(s, set, b % 2, rows);
                std::vector<cl::Event> ready{ux, uy};
                cl::Event first_k;
                Launch& l0 = launches.front();
                q.enqueueNDRangeKernel(l0.kernel, cl::NullRange, cl::NDRange(l0.global),
                                       l0.local ? cl::NDRange(l0.local) : cl::NullRange, &ready, &first_k);
                comps.push_back(first_k);
                std::vector<Launch> rest(launches.begin() + 1, launches.end());
                cl::Event k_last = enqueue_launches(q, rest);
                comps.push_back(k_last);
                last_compute[b % 2] = k_last;
                cl::Event d;
                q.enqueueReadBuffer(set.g, CL_FALSE, 0, p_ * 4, batch_g_.data() + b * p_, nullptr, &d);
                downs.push_back(d);
                q.flush();
            }
            upload_queue_.finish();
            q.finish();
        } else {
            const bool pinned = v == Variant::serial_pinned;
            const float* xs = pinned ? static_cast<const float*>(pinned_x_->ptr) : data_->x.data();
            const float* ys = pinned ? static_cast<const float*>(pinned_y_->ptr) : data_->y.data();
            DeviceData& set = sets_[0];
            for (std::uint64_t b = 0; b < batches_; ++b) {
                const std::uint64_t first = b * batch_, rows = std::min(batch_, n_ - first);
                auto& launches = launches_for(s, set, 0, rows);
                cl::Event ux, uy, d;
                q.enqueueWriteBuffer(set.x, CL_FALSE, 0, rows * p_ * 4, xs + first * p_, nullptr, &ux);
                q.enqueueWriteBuffer(set.y, CL_FALSE, 0, rows * 4, ys + first, nullptr, &uy);
                ups.push_back(ux);
                ups.push_back(uy);
                for (auto& l : launches) {
                    cl::Event e;
                    q.enqueueNDRangeKernel(l.kernel, cl::NullRange, cl::NDRange(l.global),
                                           l.local ? cl::NDRange(l.local) : cl::NullRange, nullptr, &e);
                    comps.push_back(e);
                }
                q.enqueueReadBuffer(set.g, CL_FALSE, 0, p_ * 4, batch_g_.data() + b * p_, nullptr, &d);
                downs.push_back(d);
                // The serial step waits for each batch before the next, as a simple loop does.
                q.finish();
            }
        }
        const auto th = Clock::now();
        const std::uint64_t parts = v == Variant::resident ? 1 : batches_;
        gradient_.assign(p_, 0.0);
        for (std::uint64_t b = 0; b < parts; ++b)
            for (std::uint32_t j = 0; j < p_; ++j)
                gradient_[j] += batch_g_[b * p_ + j];
        for (std::uint32_t j = 0; j < p_; ++j)
            gradient_[j] += ridge_lambda * beta_[j];
        st[3] = seconds_since(th);
        const double wall = seconds_since(t0);

        const auto sum = [&](const std::vector<cl::Event>& events) {
            double t = 0;
            if (profiling)
                for (const auto& e : events)
                    t += command_seconds(e);
            return t;
        };
        // Double-buffered compute spans first kernel start to last kernel end per batch... sum
        // each kernel instead: events hold the first and last launch of each batch only.
        double compute = 0;
        if (v == Variant::double_buffered && profiling) {
            for (std::size_t k = 0; k + 1 < comps.size(); k += 2)
                compute += comps[k + 1].getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-9 -
                           comps[k].getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-9;
        } else {
            compute = sum(comps);
        }
        st[1] = compute;
        st[2] = sum(downs);
        if (v == Variant::double_buffered) {
            st[0] = std::max(0.0, wall - st[1] - st[2] - st[3]);
        } else {
            st[0] = sum(ups);
            st[4] = std::max(0.0, wall - st[0] - st[1] - st[2] - st[3]);
        }
        if (!profiling) {  // no device timestamps: the whole step is one opaque stage
            st = Stages{};
            st[4] = wall;
        }
        return st;
    }

    std::uint64_t n_ = 0, batch_ = 0, batches_ = 0;
    std::uint32_t p_ = 0;
    std::size_t groups_ = 0;
    std::shared_ptr<const Dataset> data_;
    std::vector<double> beta_, gradient_;
    GradientVariant variant_;
    std::unique_ptr<PinnedHost> pinned_x_, pinned_y_;
    std::array<DeviceData, 2> sets_;
    DeviceData resident_;
    cl::CommandQueue upload_queue_;
    std::vector<float> batch_g_;
    std::map<std::pair<int, std::uint64_t>, std::vector<Launch>> launches_;
};

}  // namespace

std::unique_ptr<Probe> make_glm_pipeline_probe() {
    return std::make_unique<PipelineProbe>();
}

}  // namespace clprobe

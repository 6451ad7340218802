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
#include <stdexcept>

#include "cl/command_trace.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "common/step_energy.hpp"
#include "core/clock.hpp"
#include "core/glm_facts.hpp"
#include "core/pipeline_stages.hpp"
#include "core/stop_points.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_support.hpp"
#include "probe_factories.hpp"

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
// The report's variant labels, in enum order.
constexpr std::array<const char*, 4> variant_names = {"serial_pageable", "serial_pinned", "double_buffered",
                                                      "resident"};
const char* name_of(Variant v) {
    return variant_names[static_cast<std::size_t>(v)];
}

// Seconds per stage of one step, indexed like glm_pipeline_stages (core/pipeline_stages.hpp).
struct Stages {
    std::array<double, glm_pipeline_stages.size()> seconds{};

    double& operator[](Stage stage) {
        for (std::size_t i = 0; i < glm_pipeline_stages.size(); ++i)
            if (glm_pipeline_stages[i] == stage) return seconds[i];
        throw std::logic_error("glm.pipeline has no such stage");
    }
};

// The commands of one step whose device times make up its stages.
struct StepEvents {
    std::vector<cl::Event> uploads, computes, downloads;
};

// Summed device time of a set of commands; 0 without profiling.
double device_seconds(const std::vector<cl::Event>& events, bool profiling) {
    double t = 0;
    if (profiling)
        for (const auto& e : events)
            t += command_seconds(e);
    return t;
}

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
        plan(s, shape_for(ctx), ctx.options.mode);
        allocate(s);
        SamplerConfig config = sampler_for(ctx.options.mode);
        config.budget_seconds = ctx.options.mode == RunMode::quick ? 0.12 : ctx.options.mode == RunMode::full ? 3 : 0.8;
        const std::vector<SampleSet> sets = sample(s, config);
        record_stages(out, sets, s.profiling());
        record_steps(out, sets);
        record_attributes(out, config);
        // Energy per step where the machine has sensors, after the timed samples so they are untouched.
        StepEnergy energy(ctx.options.mode);
        if (energy.available())
            for (const Variant v : all_variants)
                energy.measure(out, pipeline_ids::glm, {{"variant", name_of(v)}}, [&] { step(s, v); });
        energy.record_attributes(out);
        pinned_x_.reset();
        pinned_y_.reset();
    }

  private:
    // The rows, batches and dataset of the step.
    void plan(DeviceSession& s, const Shape& shape, RunMode mode) {
        const DeviceInfo& info = s.info();
        p_ = shape.cols;
        const std::uint64_t row_bytes = std::uint64_t{p_} * 4;
        // Pinned X, the resident copy and two batch sets: cap rows so everything fits.
        const std::uint64_t cap = std::min(shape.rows, pipeline_rows_cap(mode));
        n_ = fit_buffer_bytes(info, cap * row_bytes, 3, row_bytes) / row_bytes;
        batch_ = std::max<std::uint64_t>(1, std::min(shape.batch, n_));
        batches_ = (n_ + batch_ - 1) / batch_;
        data_ = shared_dataset(n_, p_, Family::logistic);
        beta_ = evaluation_beta(*data_);
        groups_ = gradient_groups(info);
        variant_.wg = std::min<std::size_t>(64, info.max_work_group_size);
    }

    // Pageable source: the dataset's own vectors. Pinned source: a mapped host-pointer buffer.
    void allocate(DeviceSession& s) {
        pinned_x_ = std::make_unique<PinnedHost>(s, data_->x.size() * 4);
        pinned_y_ = std::make_unique<PinnedHost>(s, data_->y.size() * 4);
        std::memcpy(pinned_x_->ptr, data_->x.data(), data_->x.size() * 4);
        std::memcpy(pinned_y_->ptr, data_->y.data(), data_->y.size() * 4);
        for (auto& set : sets_)
            set = allocate_row_batch(s, batch_, p_, beta_, groups_);
        resident_ = upload_dense(s, *data_, Layout::row, false, beta_, groups_);
        upload_queue_ = s.make_queue();
        batch_g_.assign(batches_ * p_, 0.0f);
    }

    // Every variant interleaved; each is checked against the double reference after calibration.
    std::vector<SampleSet> sample(DeviceSession& s, const SamplerConfig& config) {
        const std::vector<double> reference = reference_gradient(*data_, beta_, ridge_lambda);
        InterleavedSampler sampler(config);
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            const Variant v = all_variants[i];
            sampler.add([this, &s, v, i](std::int64_t iters) {
                Stages total{};
                const auto t0 = Clock::now();
                for (std::int64_t k = 0; k < iters; ++k) {
                    const Stages st = step(s, v);
                    for (std::size_t j = 0; j < total.seconds.size(); ++j)
                        total.seconds[j] += st.seconds[j] / static_cast<double>(iters);
                }
                stage_log_[i].push_back(total);
                return TimedBatch{seconds_since(t0), TimerKind::host_steady_clock};
            });
            verify_gradient(fmt::format("mini-batch step ({})", name_of(v)), gradient_, reference, false);
            check_stop();
        }
        return sampler.run();
    }

    // Stages first (baseline variant first): the stage times of the batches that became samples.
    void record_stages(ProbeResult& out, const std::vector<SampleSet>& sets, bool profiling) const {
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            const std::size_t samples = sets[i].seconds_per_iteration.size();
            const auto& log = stage_log_[i];
            for (std::size_t j = 0; j < glm_pipeline_stages.size(); ++j) {
                const Stage stage = glm_pipeline_stages[j];
                if (all_variants[i] == Variant::resident && stage == Stage::upload) continue;
                std::vector<double> v;
                for (std::size_t k = log.size() - samples; k < log.size(); ++k)
                    v.push_back(log[k].seconds[j]);
                Measurement m = make_measurement(fmt::format("{}.stage_time", pipeline_ids::glm), "s",
                                                 {{"stage", stage_name(stage)}, {"variant", name_of(all_variants[i])}},
                                                 v, TimerKind::device_profiling, false);
                // The host sum and the sync remainder are host-clock times.
                if (!profiling || stage == Stage::host || stage == Stage::sync) m.timer = TimerKind::host_steady_clock;
                out.measurements.push_back(std::move(m));
            }
        }
    }

    void record_steps(ProbeResult& out, const std::vector<SampleSet>& sets) const {
        for (std::size_t i = 0; i < all_variants.size(); ++i) {
            Measurement m = make_measurement(fmt::format("{}.step_time", pipeline_ids::glm), "s",
                                             {{"variant", name_of(all_variants[i])}}, sets[i].seconds_per_iteration,
                                             sets[i].timer, false);
            m.iterations_per_sample = sets[i].iterations;
            out.measurements.push_back(std::move(m));
        }
    }

    void record_attributes(ProbeResult& out, const SamplerConfig& config) const {
        write_glm_run_shape(out, GlmRunShape{n_, p_});
        out.attributes["batch_rows"] = batch_;
        out.attributes["batches"] = batches_;
        out.attributes["kernel_variant"] = variant_.name();
        out.attributes["sampling"] = sampling_note(config);
        out.attributes["stages"] =
            "serial variants: upload, compute and download from event profiling, host = adding the batch gradients, "
            "sync = the rest of the step's wall time (waits, launches). double_buffered: compute, download and host "
            "as above; upload = the wall time they do not cover (the upload not hidden behind compute, waits "
            "included); sync 0. resident: no upload stage.";
    }

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
        const auto t0 = Clock::now();
        StepEvents ev;
        if (v == Variant::resident)
            enqueue_resident(s, ev);
        else if (v == Variant::double_buffered)
            enqueue_double_buffered(s, ev);
        else
            enqueue_serial(s, v == Variant::serial_pinned, ev);
        const auto th = Clock::now();
        add_batches(v == Variant::resident ? 1 : batches_);
        const double host = seconds_since(th);
        return stage_times(ev, v, s.profiling(), host, seconds_since(t0));
    }

    void enqueue_resident(DeviceSession& s, StepEvents& ev) {
        cl::CommandQueue& q = s.queue();
        auto& launches = launches_for(s, resident_, 2, n_);
        ev.computes.push_back(enqueue_launches(q, launches));
        cl::Event d;
        q.enqueueReadBuffer(resident_.g, CL_FALSE, 0, p_ * 4, batch_g_.data(), nullptr, &d);
        ev.downloads.push_back(d);
        q.finish();
    }

    // Batch b's upload (upload queue) waits for the kernels that last read its buffer set (batch
    // b - 2); its kernels (main queue) wait for its upload. Compute events: each batch's first and
    // last launch.
    void enqueue_double_buffered(DeviceSession& s, StepEvents& ev) {
        cl::CommandQueue& q = s.queue();
        std::array<cl::Event, 2> last_compute;
        for (std::uint64_t b = 0; b < batches_; ++b) {
            DeviceData& set = sets_[b % 2];
            const std::uint64_t first = b * batch_, rows = std::min(batch_, n_ - first);
            std::vector<cl::Event> wait;
            if (b >= 2) wait.push_back(last_compute[b % 2]);
            cl::Event ux, uy;
            upload_queue_.enqueueWriteBuffer(set.x, CL_FALSE, 0, rows * p_ * 4,
                                             static_cast<float*>(pinned_x_->ptr) + first * p_, &wait, &ux);
            upload_queue_.enqueueWriteBuffer(set.y, CL_FALSE, 0, rows * 4, static_cast<float*>(pinned_y_->ptr) + first,
                                             nullptr, &uy);
            upload_queue_.flush();
            ev.uploads.push_back(ux);
            ev.uploads.push_back(uy);
            auto& launches = launches_for(s, set, b % 2, rows);
            std::vector<cl::Event> ready{ux, uy};
            cl::Event first_k;
            Launch& l0 = launches.front();
            q.enqueueNDRangeKernel(l0.kernel, cl::NullRange, cl::NDRange(l0.global),
                                   l0.local ? cl::NDRange(l0.local) : cl::NullRange, &ready, &first_k);
            ev.computes.push_back(first_k);
            std::vector<Launch> rest(launches.begin() + 1, launches.end());
            cl::Event k_last = enqueue_launches(q, rest);
            ev.computes.push_back(k_last);
            last_compute[b % 2] = k_last;
            cl::Event d;
            q.enqueueReadBuffer(set.g, CL_FALSE, 0, p_ * 4, batch_g_.data() + b * p_, nullptr, &d);
            ev.downloads.push_back(d);
            q.flush();
        }
        upload_queue_.finish();
        q.finish();
    }

    void enqueue_serial(DeviceSession& s, bool pinned, StepEvents& ev) {
        cl::CommandQueue& q = s.queue();
        const float* xs = pinned ? static_cast<const float*>(pinned_x_->ptr) : data_->x.data();
        const float* ys = pinned ? static_cast<const float*>(pinned_y_->ptr) : data_->y.data();
        DeviceData& set = sets_[0];
        for (std::uint64_t b = 0; b < batches_; ++b) {
            const std::uint64_t first = b * batch_, rows = std::min(batch_, n_ - first);
            auto& launches = launches_for(s, set, 0, rows);
            cl::Event ux, uy, d;
            q.enqueueWriteBuffer(set.x, CL_FALSE, 0, rows * p_ * 4, xs + first * p_, nullptr, &ux);
            q.enqueueWriteBuffer(set.y, CL_FALSE, 0, rows * 4, ys + first, nullptr, &uy);
            ev.uploads.push_back(ux);
            ev.uploads.push_back(uy);
            for (auto& l : launches) {
                cl::Event e;
                q.enqueueNDRangeKernel(l.kernel, cl::NullRange, cl::NDRange(l.global),
                                       l.local ? cl::NDRange(l.local) : cl::NullRange, nullptr, &e);
                ev.computes.push_back(e);
            }
            q.enqueueReadBuffer(set.g, CL_FALSE, 0, p_ * 4, batch_g_.data() + b * p_, nullptr, &d);
            ev.downloads.push_back(d);
            // The serial step waits for each batch before the next, as a simple loop does.
            q.finish();
        }
    }

    // The host part of the step: the batch gradients added up, plus the ridge term.
    void add_batches(std::uint64_t parts) {
        gradient_.assign(p_, 0.0);
        for (std::uint64_t b = 0; b < parts; ++b)
            for (std::uint32_t j = 0; j < p_; ++j)
                gradient_[j] += batch_g_[b * p_ + j];
        for (std::uint32_t j = 0; j < p_; ++j)
            gradient_[j] += ridge_lambda * beta_[j];
    }

    static Stages stage_times(const StepEvents& ev, Variant v, bool profiling, double host, double wall) {
        Stages st{};
        if (!profiling) {  // no device timestamps: the whole step is one opaque stage
            st[Stage::sync] = wall;
            return st;
        }
        st[Stage::host] = host;
        // Into diagnose --trace's timeline (a no-op when it is off): the stages' commands are timed
        // here, not by time_commands, which records the other probes' commands.
        auto& trace = CommandTrace::instance();
        for (const auto& [events, label] :
             {std::pair{&ev.uploads, "glm pipeline upload"}, std::pair{&ev.computes, "glm pipeline compute"},
              std::pair{&ev.downloads, "glm pipeline download"}})
            for (const auto& e : *events)
                trace.record(e, label);
        // Double-buffered events hold the first and last launch of each batch: each batch's
        // compute spans the first kernel's start to the last one's end.
        if (v == Variant::double_buffered) {
            for (std::size_t k = 0; k + 1 < ev.computes.size(); k += 2)
                st[Stage::compute] += ev.computes[k + 1].getProfilingInfo<CL_PROFILING_COMMAND_END>() * 1e-9 -
                                      ev.computes[k].getProfilingInfo<CL_PROFILING_COMMAND_START>() * 1e-9;
        } else {
            st[Stage::compute] = device_seconds(ev.computes, true);
        }
        st[Stage::download] = device_seconds(ev.downloads, true);
        const double covered = st[Stage::compute] + st[Stage::download] + host;
        if (v == Variant::double_buffered) {
            st[Stage::upload] = std::max(0.0, wall - covered);
        } else {
            st[Stage::upload] = device_seconds(ev.uploads, true);
            st[Stage::sync] = std::max(0.0, wall - st[Stage::upload] - covered);
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
    std::array<std::vector<Stages>, all_variants.size()> stage_log_;
};

}  // namespace

std::unique_ptr<Probe> make_glm_pipeline_probe() {
    return std::make_unique<PipelineProbe>();
}

}  // namespace clprobe

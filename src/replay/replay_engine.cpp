#include "replay/replay_engine.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>

#include "cl/cl_api.hpp"
#include "cl/cl_error.hpp"
#include "cl/command_timing.hpp"
#include "cl/device_catalog.hpp"
#include "core/atomic_file.hpp"
#include "layer/replay_format.hpp"
#include "replay/capture_reader.hpp"
#include "replay/launch_variants.hpp"
#include "replay/output_compare.hpp"
#include "rules/ranking.hpp"
#include "rules/replay_findings.hpp"
#include "rules/replay_verdict.hpp"

namespace clprobe::replay {

namespace fs = std::filesystem;

namespace {

// Thrown for a state of the capture the replay stops at: status and one-line reason.
struct Stop {
    ReplayStatus status;
    std::string reason;
};

std::vector<unsigned char> read_bytes(const fs::path& path, std::uint64_t size) {
    const std::string text = read_file(path, static_cast<std::size_t>(size) + 1);
    if (text.size() != size)
        throw Stop{ReplayStatus::invalid,
                   fmt::format("{} changed size since it was checked", path.filename().string())};
    return {text.begin(), text.end()};
}

// The memory objects of one launch, per argument (null where the argument has none), and the
// buffers that 1-D image buffers are made from (kept alive beside their images).
struct ArgMemory {
    std::vector<cl::Memory> mem;
    std::vector<cl::Buffer> image_buffers;
};

// One way to launch the kernel: its kernel object, the memory it runs on and its local size.
// Variants share the captured memory except those that place it differently.
struct Arm {
    cl::Kernel kernel;
    std::shared_ptr<const ArgMemory> memory;
    std::optional<Range> local;
};

cl::NDRange nd_range(const Range& r, unsigned dims) {
    if (dims == 1) return cl::NDRange(r[0]);
    if (dims == 2) return cl::NDRange(r[0], r[1]);
    return cl::NDRange(r[0], r[1], r[2]);
}

class Replayer {
  public:
    Replayer(const Capture& c, cl::Device device, const ReplayOptions& options)
        : c_(c), device_(std::move(device)), context_(device_), options_(options) {
        queue_ = cl::CommandQueue(context_, device_, CL_QUEUE_PROFILING_ENABLE);
        for (const auto& a : c_.args) {
            inputs_.push_back(a.has_data() ? read_bytes(a.input, a.size) : std::vector<unsigned char>{});
            if (a.has_data() && a.output.empty()) {
                // A capture for counting work alone: nothing to check a replay's outputs against.
                if (!options_.launch_only)
                    throw Stop{ReplayStatus::invalid,
                               "captured without its outputs (for `trace --work` alone): "
                               "trace again with --replay N to replay it"};
                outputs_without_capture_ = true;
            }
            outputs_.push_back(a.has_data() && !a.output.empty()
                                   ? read_bytes(a.output, a.size)
                                   : std::vector<unsigned char>(a.has_data() ? a.size : 0));
        }
        program_bytes_ = read_bytes(c_.program_file, fs::file_size(c_.program_file));
    }

    void run(ReplayResult& result) {
        // A launch run only to be counted may print: its output goes nowhere that matters.
        if (c_.origin == ProgramOrigin::source && !options_.launch_only) check_source();
        const auto t0 = std::chrono::steady_clock::now();
        std::string log;
        cl::Program program = build(
            options_.extra_build_options.empty() ? c_.options : c_.options + " " + options_.extra_build_options, log);
        result.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        cl::Kernel kernel = make_kernel(program);
        arg_types(kernel);
        result.tolerance = tolerance_of(ElementType::float32);

        std::vector<std::uint64_t> base_flags;
        for (const auto& a : c_.args)
            base_flags.push_back(a.kind == ArgKind::buffer ? replay_flags(a.flags) : 0);
        auto buffers = std::make_shared<const ArgMemory>(make_memory(base_flags));
        make_samplers();

        progress("as captured");
        std::vector<std::optional<Arm>> arms;  // per variant: how it launches, absent when it failed
        auto add = [&](Arm arm, VariantKind kind, const std::string& label, const std::string& options) {
            VariantResult r = check(arm, kind, label);
            r.options = options;
            arms.push_back(r.failure.empty() ? std::optional<Arm>(std::move(arm)) : std::nullopt);
            result.variants.push_back(std::move(r));
        };
        add(Arm{kernel, buffers, c_.local_size}, VariantKind::as_captured, "as captured", c_.options);
        const VariantResult& ref = result.variants[0];
        if (!ref.failure.empty()) throw Stop{ReplayStatus::failed, "the launch as captured failed: " + ref.failure};
        if (options_.launch_only) {
            result.status = ReplayStatus::replayed;
            return;
        }
        if (ref.check != OutputCheck::identical)
            throw Stop{ReplayStatus::not_reproducible,
                       fmt::format("the launch as captured does not give the captured outputs: {}",
                                   ref.errors ? ref.errors->where : std::string("they differ"))};
        result.status = ReplayStatus::replayed;

        for (const auto& v : local_size_variants_of(kernel)) {
            progress("local size " + v.label);
            add(Arm{kernel, buffers, v.local}, VariantKind::local_size, v.label, c_.options);
        }
        std::vector<bool> unchanged;
        for (std::size_t i = 0; i < c_.args.size(); ++i)
            unchanged.push_back(c_.args[i].has_data() && inputs_[i] == outputs_[i]);
        for (const auto& p : placement_variants(c_.args, unchanged)) {
            progress("placement " + p.label);
            try {
                add(Arm{kernel, std::make_shared<const ArgMemory>(make_memory(p.flags)), c_.local_size},
                    VariantKind::placement, p.label, c_.options);
            } catch (const cl::Error& e) {
                result.variants.push_back(failed(VariantKind::placement, p.label, to_cl_error(e).what()));
                arms.push_back(std::nullopt);
            }
        }
        // A binary keeps the options it was built with.
        if (c_.origin != ProgramOrigin::binary)
            for (const auto& option : build_option_variants(c_.options)) {
                progress("build " + option);
                const std::string options = c_.options.empty() ? option : c_.options + " " + option;
                try {
                    std::string variant_log;
                    add(Arm{make_kernel(build(options, variant_log)), buffers, c_.local_size},
                        VariantKind::build_options, option, options);
                } catch (const Stop& s) {
                    result.variants.push_back(failed(VariantKind::build_options, option, s.reason));
                    arms.push_back(std::nullopt);
                } catch (const cl::Error& e) {
                    result.variants.push_back(failed(VariantKind::build_options, option, to_cl_error(e).what()));
                    arms.push_back(std::nullopt);
                }
                result.variants.back().options = options;
            }
        timed_rounds(result, arms);
        result.bandwidth = bandwidth(*buffers, *result.variants[0].summary);
    }

  private:
    void progress(const std::string& what) const {
        if (options_.progress)
            options_.progress(fmt::format("replay {} `{}`: {}", c_.folder.filename().string(), c_.kernel, what));
    }

    // What the layer may not have caught: the replay cannot reproduce a kernel's printf output or
    // its device-side enqueues, and does not try.
    void check_source() const {
        const std::string_view src(reinterpret_cast<const char*>(program_bytes_.data()), program_bytes_.size());
        if (auto reason = layer::replay::source_skip_reason(src)) throw Stop{ReplayStatus::skipped, *reason};
    }

    cl::Program build(const std::string& options, std::string& log) {
        cl_int err = CL_SUCCESS;
        cl_program raw = nullptr;
        cl_device_id dev = device_();
        if (c_.origin == ProgramOrigin::source) {
            const char* text = reinterpret_cast<const char*>(program_bytes_.data());
            const std::size_t length = program_bytes_.size();
            raw = clCreateProgramWithSource(context_(), 1, &text, &length, &err);
        } else if (c_.origin == ProgramOrigin::il) {
            raw = clCreateProgramWithIL(context_(), program_bytes_.data(), program_bytes_.size(), &err);
        } else {
            const unsigned char* bin = program_bytes_.data();
            const std::size_t length = program_bytes_.size();
            cl_int status = CL_SUCCESS;
            raw = clCreateProgramWithBinary(context_(), 1, &dev, &length, &bin, &status, &err);
        }
        if (err != CL_SUCCESS || !raw)
            throw Stop{ReplayStatus::build_failed,
                       fmt::format("creating the program from {}: {} ({})", c_.program_file.filename().string(),
                                   cl_error_name(err), err)};
        cl::Program program(raw);  // takes ownership
        // -cl-kernel-arg-info: the argument type names tell which buffers hold floating point.
        const std::string all = options + " -cl-kernel-arg-info";
        err = clBuildProgram(program(), 1, &dev, all.c_str(), nullptr, nullptr);
        std::size_t n = 0;
        if (clGetProgramBuildInfo(program(), dev, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n) == CL_SUCCESS && n > 1) {
            log.assign(n, '\0');
            clGetProgramBuildInfo(program(), dev, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
            log.resize(std::strlen(log.c_str()));
        }
        if (err != CL_SUCCESS) {
            std::string first = log.substr(0, log.find('\n'));
            throw Stop{ReplayStatus::build_failed,
                       fmt::format("clBuildProgram with '{}': {} ({}){}", options, cl_error_name(err), err,
                                   first.empty() ? "" : ": " + first)};
        }
        return program;
    }

    cl::Kernel make_kernel(const cl::Program& program) {
        cl_int err = CL_SUCCESS;
        cl_kernel k = clCreateKernel(program(), c_.kernel.c_str(), &err);
        if (err != CL_SUCCESS)
            throw Stop{ReplayStatus::build_failed,
                       fmt::format("clCreateKernel '{}': {} ({})", c_.kernel, cl_error_name(err), err)};
        cl::Kernel kernel(k);
        cl_uint nargs = 0;
        clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, nullptr);
        if (nargs != c_.args.size())
            throw Stop{ReplayStatus::invalid,
                       fmt::format("the kernel takes {} arguments, the capture holds {}", nargs, c_.args.size())};
        return kernel;
    }

    // The element type each output is compared as (buffers: their argument type name; images:
    // their channel type), and the kernel's signature against the capture's argument kinds.
    void arg_types(const cl::Kernel& kernel) {
        types_.assign(c_.args.size(), ElementType::bytes);
        for (cl_uint i = 0; i < c_.args.size(); ++i) {
            char name[256] = {};
            if (clGetKernelArgInfo(kernel(), i, CL_KERNEL_ARG_TYPE_NAME, sizeof name - 1, name, nullptr) ==
                CL_SUCCESS) {
                if (auto problem = arg_kind_mismatch(c_.args[i], name)) throw Stop{ReplayStatus::invalid, *problem};
                types_[i] = element_type_of(name);
            }
            if (c_.args[i].kind == ArgKind::image) types_[i] = image_element_type(c_.args[i].image.channel_type);
        }
    }

    // An image of the captured format and extents. A 1-D image buffer gets a buffer of its own
    // (appended to `keep`), with the flags the image had; an image the program made from a buffer
    // in another way (a 2-D image from a buffer) becomes an image of its own.
    cl::Memory make_image(const CapturedArg& a, std::vector<cl::Buffer>& keep) {
        const ImageShape& s = a.image;
        const auto flags = static_cast<cl_mem_flags>(replay_flags(a.flags));
        const cl_image_format format{s.channel_order, s.channel_type};
        cl_image_desc desc{};
        desc.image_type = s.type;
        desc.image_width = s.width;
        // Extents a type does not have are 0, as clCreateImage expects.
        if (s.type == image2d_type || s.type == image2d_array_type || s.type == image3d_type)
            desc.image_height = s.height;
        if (s.type == image3d_type) desc.image_depth = s.depth;
        if (s.type == image1d_array_type || s.type == image2d_array_type) desc.image_array_size = s.array_size;
        cl_mem_flags image_flags = flags;
        if (s.type == image1d_buffer_type) {
            keep.emplace_back(context_, flags, static_cast<std::size_t>(a.size));
            desc.buffer = keep.back()();
            // The image takes its access from its buffer; host-pointer flags are the buffer's alone.
            image_flags = flags & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY);
        }
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateImage(context_(), image_flags, &format, &desc, nullptr, &err);
        if (err != CL_SUCCESS) throw cl::Error(err, "clCreateImage");
        cl::Memory image(m, false);  // takes ownership
        std::size_t element = 0;
        clGetImageInfo(m, CL_IMAGE_ELEMENT_SIZE, sizeof element, &element, nullptr);
        if (element != s.element_size)
            throw Stop{ReplayStatus::invalid, fmt::format("image argument {}: {} bytes per pixel here, {} captured",
                                                          a.index, element, s.element_size)};
        return image;
    }

    // Buffers with the given flags; images with their captured ones (no placement variant
    // changes an image).
    ArgMemory make_memory(const std::vector<std::uint64_t>& flags) {
        ArgMemory out;
        out.mem.resize(c_.args.size());
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const auto& a = c_.args[i];
            if (a.kind == ArgKind::buffer)
                out.mem[i] = cl::Buffer(context_, static_cast<cl_mem_flags>(flags[i]), a.size);
            else if (a.kind == ArgKind::image)
                out.mem[i] = make_image(a, out.image_buffers);
        }
        return out;
    }

    void make_samplers() {
        samplers_.resize(c_.args.size());
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const SamplerShape& s = c_.args[i].sampler;
            if (c_.args[i].kind == ArgKind::sampler)
                samplers_[i] = cl::Sampler(context_, s.normalized_coords ? CL_TRUE : CL_FALSE,
                                           static_cast<cl_addressing_mode>(s.addressing_mode),
                                           static_cast<cl_filter_mode>(s.filter_mode));
        }
    }

    void set_args(cl::Kernel& kernel, const ArgMemory& memory) {
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const auto& a = c_.args[i];
            const auto index = static_cast<cl_uint>(i);
            if (a.has_data()) {
                cl_mem m = memory.mem[i]();
                cl_check(clSetKernelArg(kernel(), index, sizeof m, &m), "clSetKernelArg");
            } else if (a.kind == ArgKind::sampler) {
                cl_sampler s = samplers_[i]();
                cl_check(clSetKernelArg(kernel(), index, sizeof s, &s), "clSetKernelArg");
            } else if (a.kind == ArgKind::scalar) {
                cl_check(clSetKernelArg(kernel(), index, a.scalar_bytes.size(), a.scalar_bytes.data()),
                         "clSetKernelArg");
            } else {
                cl_check(clSetKernelArg(kernel(), index, static_cast<std::size_t>(a.size), nullptr), "clSetKernelArg");
            }
        }
    }

    // Re-uploads every input (kernels may update buffers and images in place), so each launch sees
    // the captured state; a blocking write's data is in place before the in-order kernel runs.
    void upload(const ArgMemory& memory) {
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const auto& a = c_.args[i];
            if (a.kind == ArgKind::buffer) {
                cl_check(clEnqueueWriteBuffer(queue_(), memory.mem[i](), CL_TRUE, 0, inputs_[i].size(),
                                              inputs_[i].data(), 0, nullptr, nullptr),
                         "clEnqueueWriteBuffer");
            } else if (a.kind == ArgKind::image) {
                const Range r = image_region(a.image);
                const std::size_t origin[3] = {0, 0, 0}, region[3] = {r[0], r[1], r[2]};
                cl_check(clEnqueueWriteImage(queue_(), memory.mem[i](), CL_TRUE, origin, region, 0, 0,
                                             inputs_[i].data(), 0, nullptr, nullptr),
                         "clEnqueueWriteImage");
            }
        }
    }

    // An argument's contents after a launch: a buffer's bytes, an image's pixels tightly packed.
    std::vector<unsigned char> download(const ArgMemory& memory, std::size_t i) {
        std::vector<unsigned char> got(outputs_[i].size());
        if (c_.args[i].kind == ArgKind::image) {
            const Range r = image_region(c_.args[i].image);
            const std::size_t origin[3] = {0, 0, 0}, region[3] = {r[0], r[1], r[2]};
            cl_check(clEnqueueReadImage(queue_(), memory.mem[i](), CL_TRUE, origin, region, 0, 0, got.data(), 0,
                                        nullptr, nullptr),
                     "clEnqueueReadImage");
        } else {
            cl_check(
                clEnqueueReadBuffer(queue_(), memory.mem[i](), CL_TRUE, 0, got.size(), got.data(), 0, nullptr, nullptr),
                "clEnqueueReadBuffer");
        }
        return got;
    }

    static VariantResult failed(VariantKind kind, const std::string& label, std::string why) {
        VariantResult r;
        r.kind = kind;
        r.label = label;
        r.failure = std::move(why);
        return r;
    }

    // The local sizes to try: none where a __local argument is sized for the program's own
    // work-group (another size would read or write past it: a replay of darktable's nlmeans_vert
    // at local size NULL crashed PoCL inside the kernel), or where the limits cannot be read.
    std::vector<LocalSizeVariant> local_size_variants_of(const cl::Kernel& kernel) {
        const bool sized_for_group =
            std::any_of(c_.args.begin(), c_.args.end(), [](const CapturedArg& a) { return a.kind == ArgKind::local; });
        if (sized_for_group) {
            progress("no local-size variants: its __local arguments are sized for its own work-group");
            return {};
        }
        try {
            GroupLimits limits;
            limits.max_group = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device_);
            limits.preferred_multiple = kernel.getWorkGroupInfo<CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE>(device_);
            const auto items = device_.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
            for (std::size_t d = 0; d < 3 && d < items.size(); ++d)
                limits.max_item_sizes[d] = items[d];
            return local_size_variants(c_.work_dim, c_.global_size, c_.local_size, limits);
        } catch (const cl::Error& e) {
            // Without the limits no local size can be chosen safely; the other what-ifs still run.
            progress(std::string("no local-size variants: ") + to_cl_error(e).what());
            return {};
        }
    }

    // One launch of `arm` on the captured inputs; returns its completed event.
    cl::Event launch_once(Arm& arm) {
        set_args(arm.kernel, *arm.memory);
        upload(*arm.memory);
        const cl::NDRange offset = c_.global_offset ? nd_range(*c_.global_offset, c_.work_dim) : cl::NullRange;
        const cl::NDRange global = nd_range(c_.global_size, c_.work_dim);
        const cl::NDRange group = arm.local ? nd_range(*arm.local, c_.work_dim) : cl::NullRange;
        cl::Event done;
        queue_.enqueueNDRangeKernel(arm.kernel, offset, global, group, nullptr, &done);
        done.wait();
        return done;
    }

    double time_once(Arm& arm) { return command_seconds(launch_once(arm)) * 1e9; }

    // One untimed launch whose outputs are checked (it also pays any compile-on-first-use of the
    // driver before anything is timed).
    VariantResult check(Arm& arm, VariantKind kind, const std::string& label) {
        VariantResult r;
        r.kind = kind;
        r.label = label;
        r.local_size = range_text(arm.local, c_.work_dim);
        try {
            launch_once(arm);
            if (outputs_without_capture_) return r;  // nothing captured to compare with: not_checked
            r.check = OutputCheck::identical;
            for (std::size_t i = 0; i < c_.args.size(); ++i)
                if (c_.args[i].has_data())
                    fold(r, compare_buffer(download(*arm.memory, i), outputs_[i], types_[i]), static_cast<unsigned>(i),
                         types_[i]);
        } catch (const cl::Error& e) {
            return failed(kind, label, to_cl_error(e).what());
        } catch (const ClError& e) {
            return failed(kind, label, e.what());
        }
        return r;
    }

    // options_.samples pairs of `v` beside the launch as captured: captured, v, captured, ..., v,
    // captured. Each sample of v is paired with the mean of the two captured launches around it;
    // every captured launch joins the pool of the launch as captured (variants[0]).
    void pair_round(std::vector<VariantResult>& variants, std::vector<std::optional<Arm>>& arms, std::size_t i) {
        VariantResult& ref = variants[0];
        VariantResult& v = variants[i];
        double before = time_once(*arms[0]);
        ref.samples_ns.push_back(before);
        for (int s = 0; s < options_.samples; ++s) {
            const double t = time_once(*arms[i]);
            const double after = time_once(*arms[0]);
            ref.samples_ns.push_back(after);
            v.samples_ns.push_back(t);
            v.reference_ns.push_back((before + after) / 2);
            before = after;
        }
    }

    // The timing (docs/replay.md, "Side by side"): a first round of pairs for every variant that
    // ran, then, apart from it, a confirmation round for each whose first round gained
    // (worth_confirming). Without variants, the launch as captured alone, options_.samples times.
    void timed_rounds(ReplayResult& result, std::vector<std::optional<Arm>>& arms) {
        auto& variants = result.variants;
        auto run_round = [&](std::size_t i, const char* round) {
            progress(fmt::format("{}: {} beside the launch as captured", round, variants[i].label));
            try {
                pair_round(variants, arms, i);
            } catch (const cl::Error& e) {
                variants[i].failure = to_cl_error(e).what();
            } catch (const ClError& e) {
                variants[i].failure = e.what();
            } catch (const std::invalid_argument& e) {
                variants[i].failure = e.what();  // a sample the driver gave as non-finite
            }
        };
        bool any = false;
        for (std::size_t i = 1; i < variants.size(); ++i)
            if (arms[i]) {
                run_round(i, "round 1");
                variants[i].first_round = variants[i].samples_ns.size();
                any = true;
            }
        summarize_all(variants);  // worth_confirming reads a variant's summary (rankable)
        for (std::size_t i = 1; i < variants.size(); ++i)
            if (arms[i] && variants[i].failure.empty() && worth_confirming(variants[i])) run_round(i, "confirmation");
        if (!any)
            for (int s = 0; s < options_.samples; ++s)
                variants[0].samples_ns.push_back(time_once(*arms[0]));
        summarize_all(variants);
        if (!variants[0].summary) throw Stop{ReplayStatus::failed, "the launch as captured was not timed"};
    }

    // Each variant's summary of its samples; a variant that failed keeps none.
    static void summarize_all(std::vector<VariantResult>& variants) {
        for (auto& v : variants) {
            if (!v.failure.empty()) {
                v.samples_ns.clear();
                v.reference_ns.clear();
                v.first_round = 0;
            }
            v.summary.reset();
            if (!v.samples_ns.empty()) v.summary = summarize(v.samples_ns);
        }
    }

    // What moving these bytes costs on this device, measured two ways; the faster is the roof the
    // kernel's bandwidth is held against. (1) The API's copies (clEnqueueCopyBuffer,
    // clEnqueueCopyImage) into scratch objects of the same shape: 2 x the sizes moved. (2) Kernels
    // on every core with the kernel's own footprint: each buffer read where it lies, and those the
    // launch changed written back in place, so the bytes are the kernel's and so is the cache
    // level they fit in. Neither alone is a roof: PoCL runs clEnqueueCopyBuffer as one thread's
    // memcpy (an in-place kernel read 146% of it), and a copy into scratch doubles the working set
    // of an in-place kernel (157% of a copy kernel, the copy spilling out of L2); a GPU's copy
    // engine can beat a kernel. Each is the fastest of its samples, as a ceiling is (the kernel's
    // own figure is its median): a roof is what the device can do, and a slow sample is the
    // machine's moment, not the device's limit.
    std::optional<BandwidthCheck> bandwidth(const ArgMemory& memory, const Summary& kernel) {
        BandwidthCheck b;
        double total = 0;
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            if (!c_.args[i].has_data()) continue;
            const double size = static_cast<double>(c_.args[i].size);
            total += size;
            b.bytes += size + (inputs_[i] != outputs_[i] ? size : 0);
        }
        if (total <= 0 || kernel.median <= 0) return std::nullopt;
        b.kernel_gbps = b.bytes / kernel.median;
        try {
            const ArgMemory scratch = make_memory(std::vector<std::uint64_t>(c_.args.size(), CL_MEM_READ_WRITE));
            std::vector<double> api, api_ns, by_kernel;
            for (int s = 0; s <= options_.samples; ++s) {
                const double ns = api_copy_ns(memory, scratch);
                if (s == 0 || ns <= 0) continue;  // the first copy is a warm-up
                api_ns.push_back(ns);
                api.push_back(2 * total / ns);
            }
            if (api.empty()) return std::nullopt;
            b.api_copy_gbps = *std::max_element(api.begin(), api.end());
            b.copy_samples_ns = api_ns;
            if (auto traffic = traffic_kernels()) {
                for (int s = 0; s <= options_.samples; ++s) {
                    const auto [bytes, ns] = same_traffic(*traffic, memory, scratch);
                    if (s == 0 || ns <= 0) continue;  // the first pass is a warm-up
                    by_kernel.push_back(bytes / ns);
                }
            }
            if (!by_kernel.empty()) b.kernel_copy_gbps = *std::max_element(by_kernel.begin(), by_kernel.end());
            b.copy_gbps = std::max(b.api_copy_gbps, b.kernel_copy_gbps);
            b.copy_method = b.kernel_copy_gbps > b.api_copy_gbps ? "same-traffic kernel" : "clEnqueueCopyBuffer/Image";
            return b;
        } catch (const cl::Error&) {
            return std::nullopt;  // a check that cannot run leaves the replay as it is
        } catch (const ClError&) {
            return std::nullopt;
        } catch (const Stop&) {
            return std::nullopt;
        }
    }

    // One sample of the API's copies of every argument with data: the sum of their device times.
    double api_copy_ns(const ArgMemory& memory, const ArgMemory& scratch) {
        double ns = 0;
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const auto& a = c_.args[i];
            if (!a.has_data()) continue;
            if (a.kind == ArgKind::image) {
                ns += api_copy_one_image(i, memory, scratch);
                continue;
            }
            cl_event e = nullptr;
            cl_check(clEnqueueCopyBuffer(queue_(), memory.mem[i](), scratch.mem[i](), 0, 0,
                                         static_cast<std::size_t>(a.size), 0, nullptr, &e),
                     "clEnqueueCopyBuffer");
            ns += command_seconds(cl::Event(e)) * 1e9;  // the event is owned, waited for, released
        }
        return ns;
    }

    struct TrafficKernels {
        cl::Kernel read, rewrite;
        cl::Buffer sink;
    };

    // Reading 4-byte words (a store only where a word holds a mark, so the loads stay; a racing
    // store of 1 to scratch is harmless), and rewriting them in place XORed with a zero the
    // compiler cannot see (so the store of an unchanged value stays). One word per work-item: the
    // shape a CPU driver's implicit vectoriser packs into full vectors (uint4 work-items ran at
    // half the speed on PoCL) and a GPU's loads coalesce. nullopt where the device will
    // not build them: the API's copies are then the only roof.
    std::optional<TrafficKernels> traffic_kernels() {
        static const char* source =
            "__kernel void clprobe_read_words(__global const uint* restrict s, __global uint* restrict sink,\n"
            "                                 uint mark) {\n"
            "    if (s[get_global_id(0)] == mark) sink[0] = 1u;\n"
            "}\n"
            "__kernel void clprobe_rewrite_words(__global uint* restrict a, uint zero) {\n"
            "    a[get_global_id(0)] ^= zero;\n"
            "}\n";
        try {
            cl::Program p(context_, std::string(source));
            p.build({device_});
            TrafficKernels k{cl::Kernel(p, "clprobe_read_words"), cl::Kernel(p, "clprobe_rewrite_words"),
                             cl::Buffer(context_, CL_MEM_READ_WRITE, sizeof(cl_uint))};
            k.read.setArg(1, k.sink);
            k.read.setArg(2, cl_uint{0x9e3779b9u});
            k.rewrite.setArg(1, cl_uint{0});
            return k;
        } catch (const cl::Error&) {
            return std::nullopt;
        }
    }

    // One pass of the kernel's footprint: every buffer with data read, those the launch changed
    // read and written in place (their contents unchanged), images copied by the API into
    // scratch. The bytes
    // it moved (whole 4-byte words; a buffer's tail under 4 bytes is left out) and the device
    // time it took.
    std::pair<double, double> same_traffic(TrafficKernels& k, const ArgMemory& memory, const ArgMemory& scratch) {
        double bytes = 0, ns = 0;
        for (std::size_t i = 0; i < c_.args.size(); ++i) {
            const auto& a = c_.args[i];
            if (!a.has_data()) continue;
            if (a.kind == ArgKind::image) {
                ns += api_copy_one_image(i, memory, scratch);
                bytes += 2 * static_cast<double>(a.size);
                continue;
            }
            const std::uint64_t words = a.size / 4;
            if (!words) continue;
            const bool changed = inputs_[i] != outputs_[i];
            cl::Kernel& kernel = changed ? k.rewrite : k.read;
            kernel.setArg(0, memory.mem[i]);
            cl::Event e;
            queue_.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(words), cl::NullRange, nullptr, &e);
            ns += command_seconds(e) * 1e9;
            bytes += static_cast<double>(words * 4) * (changed ? 2 : 1);
        }
        return {bytes, ns};
    }

    double api_copy_one_image(std::size_t i, const ArgMemory& memory, const ArgMemory& scratch) {
        const Range r = image_region(c_.args[i].image);
        const std::size_t origin[3] = {0, 0, 0}, region[3] = {r[0], r[1], r[2]};
        cl_event e = nullptr;
        cl_check(
            clEnqueueCopyImage(queue_(), memory.mem[i](), scratch.mem[i](), origin, origin, region, 0, nullptr, &e),
            "clEnqueueCopyImage");
        return command_seconds(cl::Event(e)) * 1e9;
    }

    const Capture& c_;
    cl::Device device_;
    cl::Context context_;
    cl::CommandQueue queue_;
    const ReplayOptions& options_;
    std::vector<std::vector<unsigned char>> inputs_, outputs_;
    std::vector<unsigned char> program_bytes_;
    std::vector<ElementType> types_;
    std::vector<cl::Sampler> samplers_;     // per argument: the sampler of a sampler argument
    bool outputs_without_capture_ = false;  // a capture without outputs (trace --work alone)
};

// Names as drivers spell them, less trailing NULs and spaces (some drivers pad CL_DEVICE_NAME).
std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\0' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::optional<cl::Device> find_device(const CapturedDevice& want, const DeviceCatalog& catalog,
                                      const std::string& platform) {
    if (!platform.empty()) {
        for (std::size_t i = 0; i < catalog.listings.size() && i < catalog.devices.size(); ++i)
            for (const auto& p : catalog.platforms)
                if (p.index == catalog.listings[i].platform_index && trimmed(p.name) == platform)
                    return catalog.devices[i];
        return std::nullopt;
    }
    for (std::size_t i = 0; i < catalog.listings.size() && i < catalog.devices.size(); ++i) {
        const auto& l = catalog.listings[i];
        for (const auto& p : catalog.platforms)
            if (p.index == l.platform_index && trimmed(p.name) == trimmed(want.platform) &&
                trimmed(l.device_name) == trimmed(want.name))
                return catalog.devices[i];
    }
    return std::nullopt;
}

ReplayResult replay_with(const CaptureLoad& load, const DeviceCatalog& catalog, const ReplayOptions& options) {
    ReplayResult result;
    result.folder = load.folder.filename().string();
    if (!load.capture) {
        result.status = ReplayStatus::invalid;
        result.reason = load.problem;
        return result;
    }
    const Capture& c = *load.capture;
    result.kernel = c.kernel;
    result.pid = c.pid;
    result.traced_ns = c.traced_ns;
    result.launch_ordinal = c.launch_ordinal;
    result.device = c.device.platform + " / " + c.device.name;
    if (c.skipped) {
        result.status = ReplayStatus::skipped;
        result.reason = *c.skipped;
        return result;
    }
    const auto device = find_device(c.device, catalog, options.platform);
    if (!device) {
        result.status = ReplayStatus::device_not_available;
        result.reason = catalog.error ? "no OpenCL platform: " + *catalog.error
                        : !options.platform.empty()
                            ? fmt::format("no platform '{}' here", options.platform)
                            : fmt::format("no device '{}' on a platform '{}' here", c.device.name, c.device.platform);
        return result;
    }
    try {
        Replayer replayer(c, *device, options);
        replayer.run(result);
    } catch (const Stop& s) {
        result.status = s.status;
        result.reason = s.reason;
    } catch (const cl::Error& e) {
        result.status = ReplayStatus::failed;
        result.reason = to_cl_error(e).what();
    } catch (const std::exception& e) {
        result.status = ReplayStatus::failed;
        result.reason = e.what();
    }
    return result;
}

}  // namespace

ReplayResult replay_capture(const CaptureLoad& load, const ReplayOptions& options) {
    return replay_with(load, enumerate_devices(), options);
}

ReplayRun run_replay(const fs::path& records_dir, const ReplayContext& context, const ReplayOptions& options) {
    auto loads = read_captures(records_dir / "replay");
    // The longest first: by the kernel's traced total where the trace gave one, else the launch.
    auto weight = [&](const CaptureLoad& l) -> double {
        if (!l.capture) return -1;
        const auto t = context.kernels.find(l.capture->kernel);
        if (t != context.kernels.end()) return t->second.device_ns;
        return l.capture->traced_ns ? static_cast<double>(*l.capture->traced_ns) : 0.0;
    };
    std::stable_sort(loads.begin(), loads.end(),
                     [&](const CaptureLoad& a, const CaptureLoad& b) { return weight(a) > weight(b); });
    if (options.max_kernels > 0 && loads.size() > options.max_kernels) loads.resize(options.max_kernels);
    ReplayRun run;
    const DeviceCatalog catalog = enumerate_devices();
    for (const auto& load : loads) {
        ReplayResult r = replay_with(load, catalog, options);
        find_like_launches(r, context);
        judge_reliability(r);
        run.results.push_back(std::move(r));
    }
    run.findings = replay_findings(run.results, context);
    classify_findings(run.findings);
    rank_findings(run.findings);
    return run;
}

}  // namespace clprobe::replay

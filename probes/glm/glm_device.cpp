#include "glm/glm_device.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>

#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "runtime/probe.hpp"

namespace clprobe::glm {

namespace {

constexpr const char* gradient_file = "glm/gradient.cl";
constexpr const char* sparse_file = "glm/sparse.cl";
constexpr const char* newton_file = "glm/newton.cl";

constexpr std::size_t max_partial_wg = 256;

std::uint64_t round_up(std::uint64_t v, std::uint64_t m) {
    return (v + m - 1) / m * m;
}

// Host data in the variant's precision.
std::vector<unsigned char> as_reals(const float* v, std::size_t count, bool fp64) {
    std::vector<unsigned char> out(count * real_bytes(fp64));
    if (fp64) {
        auto* d = reinterpret_cast<double*>(out.data());
        for (std::size_t i = 0; i < count; ++i)
            d[i] = v[i];
    } else {
        std::copy(v, v + count, reinterpret_cast<float*>(out.data()));
    }
    return out;
}

std::vector<unsigned char> as_reals(const std::vector<double>& v, bool fp64) {
    std::vector<float> f(v.begin(), v.end());
    if (!fp64) return as_reals(f.data(), f.size(), false);
    std::vector<unsigned char> out(v.size() * 8);
    std::copy(v.begin(), v.end(), reinterpret_cast<double*>(out.data()));
    return out;
}

cl::Buffer filled(DeviceSession& s, const std::vector<unsigned char>& bytes) {
    cl::Buffer b = make_buffer(s.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes.size(), 1));
    if (!bytes.empty()) s.queue().enqueueWriteBuffer(b, CL_TRUE, 0, bytes.size(), bytes.data());
    return b;
}

void set_real(cl::Kernel& k, cl_uint index, bool fp64, double v) {
    if (fp64)
        k.setArg(index, v);
    else
        k.setArg(index, static_cast<float>(v));
}

cl_uint u32(std::uint64_t v) {
    return static_cast<cl_uint>(v);
}

bool has_extension(const DeviceInfo& info, const std::string& name) {
    return std::find(info.extensions.begin(), info.extensions.end(), name) != info.extensions.end();
}

void work_buffers(DeviceSession& s, DeviceData& d, const std::vector<double>& beta, std::size_t max_groups) {
    const std::size_t e = real_bytes(d.fp64);
    d.beta = filled(s, as_reals(beta, d.fp64));
    d.r = make_buffer(s.context(), CL_MEM_READ_WRITE, std::max(d.n, d.ld) * e);
    // Room for one partial gradient per work-item of the row kernels (work-groups up to 256).
    d.partial_groups = max_groups * max_partial_wg;
    d.partial = make_buffer(s.context(), CL_MEM_READ_WRITE, d.partial_groups * d.p * e);
    d.g = make_buffer(s.context(), CL_MEM_READ_WRITE, d.p * e);
}

}  // namespace

std::string real_options(bool fp64) {
    return fp64 ? "-D REAL=double -D REAL_IS_DOUBLE" : "-D REAL=float";
}

Labels GradientVariant::labels() const {
    return {{"layout", layout == Layout::row ? "row" : "col"},
            {"reduction", reduction == Reduction::local ? "local" : "atomic"},
            {"passes", std::to_string(passes)},
            {"vector", std::to_string(vector)},
            {"wg", std::to_string(wg)},
            {"precision", fp64 ? "fp64" : "fp32"},
            {"format", format == Format::dense ? "dense" : "csr"}};
}

std::string GradientVariant::name() const {
    if (format == Format::csr) return fmt::format("csr/wg{}/{}", wg, fp64 ? "fp64" : "fp32");
    return fmt::format("{}/{}/{}pass/v{}/wg{}/{}", layout == Layout::row ? "row" : "col",
                       reduction == Reduction::local ? "local" : "atomic", passes, vector, wg, fp64 ? "fp64" : "fp32");
}

std::size_t gradient_groups(const DeviceInfo& info) {
    // Eight groups per compute unit balance CPU cores; GPUs get at least 64 groups.
    return std::max<std::size_t>(64, std::size_t{info.compute_units} * 8);
}

DeviceData upload_dense(DeviceSession& s, const Dataset& d, Layout layout, bool fp64, const std::vector<double>& beta,
                        std::size_t max_groups) {
    DeviceData out;
    out.layout = layout;
    out.fp64 = fp64;
    out.n = d.n;
    out.p = d.p;
    out.ld = round_up(d.n, 16);
    if (layout == Layout::row) {
        out.x = filled(s, as_reals(d.x.data(), d.x.size(), fp64));
        out.y = filled(s, as_reals(d.y.data(), d.y.size(), fp64));
    } else {
        const std::vector<float> cm = to_column_major(d, out.ld);
        out.x = filled(s, as_reals(cm.data(), cm.size(), fp64));
        std::vector<float> y(out.ld, 0.0f);
        std::copy(d.y.begin(), d.y.end(), y.begin());
        out.y = filled(s, as_reals(y.data(), y.size(), fp64));
    }
    work_buffers(s, out, beta, max_groups);
    return out;
}

DeviceData upload_csr(DeviceSession& s, const CsrMatrix& m, const std::vector<float>& y, bool fp64,
                      const std::vector<double>& beta, std::size_t max_groups) {
    DeviceData out;
    out.format = Format::csr;
    out.fp64 = fp64;
    out.n = m.n;
    out.ld = m.n;
    out.p = m.p;
    out.nnz = m.nnz();
    out.x = filled(s, as_reals(m.vals.data(), m.vals.size(), fp64));
    out.y = filled(s, as_reals(y.data(), y.size(), fp64));
    const auto* rp = reinterpret_cast<const unsigned char*>(m.row_ptr.data());
    out.row_ptr = filled(s, {rp, rp + m.row_ptr.size() * 4});
    const auto* c = reinterpret_cast<const unsigned char*>(m.cols.data());
    out.cols = filled(s, {c, c + m.cols.size() * 4});
    work_buffers(s, out, beta, max_groups);
    return out;
}

DeviceData allocate_row_batch(DeviceSession& s, std::uint64_t rows, std::uint32_t p, const std::vector<double>& beta,
                              std::size_t max_groups) {
    DeviceData out;
    out.n = rows;
    out.ld = rows;
    out.p = p;
    out.x = make_buffer(s.context(), CL_MEM_READ_ONLY, rows * p * sizeof(float));
    out.y = make_buffer(s.context(), CL_MEM_READ_ONLY, rows * sizeof(float));
    work_buffers(s, out, beta, max_groups);
    return out;
}

std::vector<Launch> gradient_launches(DeviceSession& s, DeviceData& data, const GradientVariant& v, Family family,
                                      double inv_n, double lambda, std::uint64_t rows) {
    const DeviceInfo& info = s.info();
    const std::uint64_t n = rows == 0 ? data.n : std::min(rows, data.n);
    const std::size_t e = real_bytes(v.fp64);
    const std::size_t wg = v.wg;
    const cl_uint p = data.p, fam = family == Family::logistic ? 0u : 1u;
    if (wg == 0 || wg > info.max_work_group_size)
        throw ProbeUnsupported(fmt::format("work-group size {} exceeds the device's {}", wg, info.max_work_group_size));
    if (v.fp64 && !info.fp64) throw ProbeUnsupported("the device has no double precision (cl_khr_fp64)");
    if (v.fp64 && v.reduction == Reduction::atomic && !has_extension(info, "cl_khr_int64_base_atomics"))
        throw ProbeUnsupported("fp64 atomics need cl_khr_int64_base_atomics");
    const auto need_local = [&](std::uint64_t bytes) {
        if (bytes > info.local_mem_bytes)
            throw ProbeUnsupported(fmt::format("{} needs {} bytes of local memory; the device has {}", v.name(), bytes,
                                               info.local_mem_bytes));
    };
    const std::string opts = real_options(v.fp64);
    const auto kernel = [&](const std::string& file, const std::string& name) {
        return s.kernels().kernel(file, name.c_str(), opts);
    };
    const std::size_t max_groups = std::min(gradient_groups(info), data.partial_groups / max_partial_wg);
    std::vector<Launch> out;

    const auto reduce = [&](std::size_t groups) {
        cl::Kernel k = kernel(gradient_file, "reduce_partials");
        k.setArg(0, data.partial);
        k.setArg(1, data.beta);
        k.setArg(2, data.g);
        k.setArg(3, u32(groups));
        k.setArg(4, p);
        set_real(k, 5, v.fp64, inv_n);
        set_real(k, 6, v.fp64, lambda);
        out.push_back({k, p, 0});
    };
    const auto zero_and_finalize = [&](Launch main) {
        cl::Kernel z = kernel(gradient_file, "zero_vector");
        z.setArg(0, data.g);
        z.setArg(1, p);
        out.push_back({z, p, 0});
        out.push_back(std::move(main));
        cl::Kernel f = kernel(gradient_file, "finalize_atomic");
        f.setArg(0, data.g);
        f.setArg(1, data.beta);
        f.setArg(2, p);
        set_real(f, 3, v.fp64, inv_n);
        set_real(f, 4, v.fp64, lambda);
        out.push_back({f, p, 0});
    };

    if (v.format == Format::csr) {
        if (wg > max_partial_wg)
            throw ProbeUnsupported(fmt::format("{}: work-groups above {}", v.name(), max_partial_wg));
        const std::size_t items = max_groups * wg;
        cl::Kernel k = kernel(sparse_file, "grad_csr_part");
        k.setArg(0, data.row_ptr);
        k.setArg(1, data.cols);
        k.setArg(2, data.x);
        k.setArg(3, data.y);
        k.setArg(4, data.beta);
        k.setArg(5, data.partial);
        k.setArg(6, u32(n));
        k.setArg(7, p);
        k.setArg(8, u32((n + items - 1) / items));
        k.setArg(9, fam);
        out.push_back({k, items, wg});
        reduce(items);
        return out;
    }

    const int w = v.vector;
    if (v.layout == Layout::row) {
        // At least 32 rows per work-item where n allows: the kernel takes rows eight at a time
        // (one vector link function per block), and a work-item with a row or two spends its
        // time zeroing and reducing its partial slice instead.
        constexpr std::uint64_t min_rows_per_item = 32;
        const std::size_t wanted_groups = (n + min_rows_per_item * wg - 1) / (min_rows_per_item * wg);
        const std::size_t items = std::clamp<std::size_t>(wanted_groups, 1, max_groups) * wg;
        const cl_uint rows_per_item = u32((n + items - 1) / items);
        if (v.reduction == Reduction::atomic) {
            cl::Kernel k = kernel(gradient_file, fmt::format("grad_row_atomic_v{}", w));
            k.setArg(0, data.x);
            k.setArg(1, data.y);
            k.setArg(2, data.beta);
            k.setArg(3, data.g);
            k.setArg(4, u32(n));
            k.setArg(5, p);
            k.setArg(6, rows_per_item);
            k.setArg(7, fam);
            zero_and_finalize({k, items, wg});
            return out;
        }
        if (wg > max_partial_wg)
            throw ProbeUnsupported(fmt::format("{}: work-groups above {}", v.name(), max_partial_wg));
        if (v.passes == 2) {
            cl::Kernel k = kernel(gradient_file, fmt::format("residual_row_v{}", w));
            k.setArg(0, data.x);
            k.setArg(1, data.y);
            k.setArg(2, data.beta);
            k.setArg(3, data.r);
            k.setArg(4, u32(n));
            k.setArg(5, p);
            k.setArg(6, rows_per_item);
            k.setArg(7, fam);
            out.push_back({k, items, wg});
        }
        // Each work-item sums its rows into its own partial slice (no barrier, no atomics: CPU
        // devices keep the slice in L1); the second pass adds the work-items' partials.
        cl::Kernel k = kernel(gradient_file, fmt::format("grad_row_part_v{}", w));
        k.setArg(0, data.x);
        k.setArg(1, data.y);
        k.setArg(2, data.beta);
        k.setArg(3, data.r);
        k.setArg(4, data.partial);
        k.setArg(5, u32(n));
        k.setArg(6, p);
        k.setArg(7, rows_per_item);
        k.setArg(8, fam);
        k.setArg(9, cl_uint{v.passes == 1});
        out.push_back({k, items, wg});
        reduce(items);
        return out;
    }

    // Column-major: every row of the padded matrix takes part (rows n..ld-1 are zero).
    if (n != data.n) throw std::invalid_argument("column-major gradients run over all rows");
    const std::uint64_t ld = data.ld;
    const std::size_t per_item_global = round_up((ld + w - 1) / w, wg);
    if (v.reduction == Reduction::atomic) {
        cl::Kernel k = kernel(gradient_file, fmt::format("grad_col_atomic_v{}", w));
        k.setArg(0, data.x);
        k.setArg(1, data.y);
        k.setArg(2, data.beta);
        k.setArg(3, data.g);
        k.setArg(4, u32(ld));
        k.setArg(5, p);
        k.setArg(6, fam);
        zero_and_finalize({k, per_item_global, wg});
        return out;
    }
    need_local((wg * w + p) * e);
    if (v.passes == 2) {
        cl::Kernel k = kernel(gradient_file, fmt::format("residual_col_v{}", w));
        k.setArg(0, data.x);
        k.setArg(1, data.y);
        k.setArg(2, data.beta);
        k.setArg(3, data.r);
        k.setArg(4, u32(ld));
        k.setArg(5, p);
        k.setArg(6, fam);
        out.push_back({k, per_item_global, wg});
    }
    const std::uint64_t tile_rows = wg * static_cast<std::uint64_t>(w);
    const std::uint64_t tiles = (ld + tile_rows - 1) / tile_rows;
    const std::uint64_t tiles_per_group = (tiles + max_groups - 1) / max_groups;
    const std::size_t groups = static_cast<std::size_t>((tiles + tiles_per_group - 1) / tiles_per_group);
    cl::Kernel k = kernel(gradient_file, fmt::format("grad_col_local_v{}", w));
    k.setArg(0, data.x);
    k.setArg(1, data.y);
    k.setArg(2, data.beta);
    k.setArg(3, data.r);
    k.setArg(4, data.partial);
    k.setArg(5, cl::Local(wg * w * e));
    k.setArg(6, cl::Local(std::size_t{p} * e));
    k.setArg(7, u32(ld));
    k.setArg(8, p);
    k.setArg(9, u32(tiles_per_group));
    k.setArg(10, fam);
    k.setArg(11, cl_uint{v.passes == 1});
    out.push_back({k, groups * wg, wg});
    reduce(groups);
    return out;
}

cl::Event enqueue_launches(cl::CommandQueue& queue, std::vector<Launch>& launches) {
    cl::Event e;
    for (auto& l : launches)
        queue.enqueueNDRangeKernel(l.kernel, cl::NullRange, cl::NDRange(l.global),
                                   l.local ? cl::NDRange(l.local) : cl::NullRange, nullptr, &e);
    return e;
}

TimedBatch time_launches(DeviceSession& s, std::vector<Launch>& launches, std::int64_t iterations,
                         const std::string& label) {
    std::size_t next = 0;
    const auto count = static_cast<std::int64_t>(launches.size()) * iterations;
    return time_commands(
        s.queue(), s.profiling(), count,
        [&] {
            Launch& l = launches[next++ % launches.size()];
            cl::Event e;
            s.queue().enqueueNDRangeKernel(l.kernel, cl::NullRange, cl::NDRange(l.global),
                                           l.local ? cl::NDRange(l.local) : cl::NullRange, nullptr, &e);
            return e;
        },
        label);
}

std::vector<double> read_gradient(cl::CommandQueue& queue, DeviceData& data) {
    std::vector<double> g(data.p);
    if (data.fp64) {
        queue.enqueueReadBuffer(data.g, CL_TRUE, 0, data.p * sizeof(double), g.data());
    } else {
        std::vector<float> f(data.p);
        queue.enqueueReadBuffer(data.g, CL_TRUE, 0, data.p * sizeof(float), f.data());
        std::copy(f.begin(), f.end(), g.begin());
    }
    return g;
}

double gradient_bytes(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz) {
    const double e = static_cast<double>(real_bytes(v.fp64)), n = static_cast<double>(rows);
    if (v.format == Format::csr)  // values and column indices, row pointers, y
        return static_cast<double>(nnz) * (e + 4) + (n + 1) * 4 + n * e;
    const double x = n * p * e, y = n * e;
    // Two passes read X twice and write then read the residuals.
    return v.passes == 2 ? 2 * x + y + 2 * n * e : x + y;
}

double gradient_flops(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz) {
    // A multiply-add for x_i . beta and one for r_i x_i per stored element.
    const double elements = v.format == Format::csr ? static_cast<double>(nnz) : static_cast<double>(rows) * p;
    return 4 * elements;
}

NewtonPass::NewtonPass(DeviceSession& s, DeviceData& data, Family family) : s_(s), data_(data) {
    const DeviceInfo& info = s.info();
    pp_ = static_cast<std::uint32_t>(round_up(data.p, 8));
    local_ = 1;
    while (local_ * 2 <= std::min<std::uint64_t>(64, info.max_work_group_size))
        local_ *= 2;
    groups_ = gradient_groups(info);
    const std::size_t e = real_bytes(data.fp64);
    constexpr cl_uint tile_rows = 32;
    const std::size_t local_bytes = (tile_rows * pp_ + 2 * tile_rows) * e;
    if (local_bytes > info.local_mem_bytes)
        throw ProbeUnsupported(fmt::format("the Newton pass needs {} bytes of local memory; the device has {}",
                                           local_bytes, info.local_mem_bytes));
    hpartial_ = make_buffer(s.context(), CL_MEM_READ_WRITE, groups_ * data.p * pp_ * e);
    gpartial_ = make_buffer(s.context(), CL_MEM_READ_WRITE, groups_ * data.p * e);
    kernel_ = s.kernels().kernel(newton_file, "newton_row", real_options(data.fp64));
    kernel_.setArg(0, data.x);
    kernel_.setArg(1, data.y);
    kernel_.setArg(2, data.beta);
    kernel_.setArg(3, hpartial_);
    kernel_.setArg(4, gpartial_);
    kernel_.setArg(5, cl::Local(tile_rows * pp_ * e));
    kernel_.setArg(6, cl::Local(2 * tile_rows * e));
    kernel_.setArg(7, u32(data.n));
    kernel_.setArg(8, data.p);
    kernel_.setArg(9, pp_);
    kernel_.setArg(10, u32((data.n + groups_ - 1) / groups_));
    kernel_.setArg(11, tile_rows);
    kernel_.setArg(12, family == Family::logistic ? 0u : 1u);
}

void NewtonPass::set_beta(const std::vector<double>& beta) {
    const auto bytes = as_reals(beta, data_.fp64);
    s_.queue().enqueueWriteBuffer(data_.beta, CL_TRUE, 0, bytes.size(), bytes.data());
}

cl::Event NewtonPass::enqueue() {
    cl::Event e;
    s_.queue().enqueueNDRangeKernel(kernel_, cl::NullRange, cl::NDRange(groups_ * local_), cl::NDRange(local_), nullptr,
                                    &e);
    return e;
}

NewtonSums NewtonPass::read_sums() {
    const std::uint32_t p = data_.p;
    const std::size_t hcount = groups_ * p * pp_, gcount = groups_ * p;
    std::vector<double> h(hcount), g(gcount);
    if (data_.fp64) {
        s_.queue().enqueueReadBuffer(hpartial_, CL_TRUE, 0, hcount * 8, h.data());
        s_.queue().enqueueReadBuffer(gpartial_, CL_TRUE, 0, gcount * 8, g.data());
    } else {
        std::vector<float> hf(hcount), gf(gcount);
        s_.queue().enqueueReadBuffer(hpartial_, CL_TRUE, 0, hcount * 4, hf.data());
        s_.queue().enqueueReadBuffer(gpartial_, CL_TRUE, 0, gcount * 4, gf.data());
        std::copy(hf.begin(), hf.end(), h.begin());
        std::copy(gf.begin(), gf.end(), g.begin());
    }
    NewtonSums out{std::vector<double>(std::size_t{p} * p, 0.0), std::vector<double>(p, 0.0)};
    for (std::size_t grp = 0; grp < groups_; ++grp)
        for (std::uint32_t j = 0; j < p; ++j) {
            out.g[j] += g[grp * p + j];
            for (std::uint32_t k = j; k < p; ++k)  // the kernel's upper triangle
                out.h[std::size_t{j} * p + k] += h[(grp * p + j) * pp_ + k];
        }
    for (std::uint32_t j = 0; j < p; ++j)
        for (std::uint32_t k = 0; k < j; ++k)
            out.h[std::size_t{j} * p + k] = out.h[std::size_t{k} * p + j];
    return out;
}

}  // namespace clprobe::glm

#include "glm/glm_device.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "cl/device_query.hpp"
#include "cl/device_session.hpp"
#include "common/probe_support.hpp"
#include "runtime/probe.hpp"

namespace clprobe::glm {

namespace {

constexpr const char* gradient_file = "glm/gradient.cl";
constexpr const char* sparse_file = "glm/sparse.cl";
constexpr const char* newton_file = "glm/newton.cl";
constexpr const char* storage_file = "glm/storage.cl";

std::uint64_t round_up(std::uint64_t v, std::uint64_t m) {
    return (v + m - 1) / m * m;
}

// Host data (float X and y, double beta) in the variant's precision.
template <class T>
std::vector<unsigned char> as_reals(const std::vector<T>& v, bool fp64) {
    std::vector<unsigned char> out(v.size() * real_bytes(fp64));
    if (fp64)
        std::copy(v.begin(), v.end(), reinterpret_cast<double*>(out.data()));
    else
        std::copy(v.begin(), v.end(), reinterpret_cast<float*>(out.data()));
    return out;
}

template <class T>
std::vector<unsigned char> raw_bytes(const std::vector<T>& v) {
    const auto* b = reinterpret_cast<const unsigned char*>(v.data());
    return {b, b + v.size() * sizeof(T)};
}

cl::Buffer filled(DeviceSession& s, const std::vector<unsigned char>& bytes) {
    cl::Buffer b = make_buffer(s.context(), CL_MEM_READ_WRITE, std::max<std::size_t>(bytes.size(), 1));
    if (!bytes.empty()) s.queue().enqueueWriteBuffer(b, CL_TRUE, 0, bytes.size(), bytes.data());
    return b;
}

// A REAL kernel parameter is float or double by the program's options, so the host value carries
// the precision it must be passed in.
struct RealArg {
    double value;
    bool fp64;
};

template <class T>
void set_arg(cl::Kernel& k, cl_uint index, const T& value) {
    if constexpr (std::is_same_v<T, RealArg>) {
        if (value.fp64)
            k.setArg(index, value.value);
        else
            k.setArg(index, static_cast<float>(value.value));
    } else {
        k.setArg(index, value);
    }
}

// Arguments listed in the kernel's parameter order, so no launch can skip or repeat an index.
template <class... Args>
cl::Kernel with_args(cl::Kernel k, const Args&... args) {
    cl_uint index = 0;
    (set_arg(k, index++, args), ...);
    return k;
}

cl_uint u32(std::uint64_t v) {
    return static_cast<cl_uint>(v);
}

// The kernels' family switch.
cl_uint family_arg(Family family) {
    return family == Family::logistic ? 0u : 1u;
}

// A local size of 0 leaves the work-group size to the implementation.
cl::Event enqueue_kernel(cl::CommandQueue& queue, const cl::Kernel& k, std::size_t global, std::size_t local) {
    cl::Event e;
    queue.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), local ? cl::NDRange(local) : cl::NullRange,
                               nullptr, &e);
    return e;
}

// `count` reals of the given precision, widened to double.
std::vector<double> read_reals(cl::CommandQueue& queue, const cl::Buffer& b, std::size_t count, bool fp64) {
    std::vector<double> out(count);
    if (fp64) {
        queue.enqueueReadBuffer(b, CL_TRUE, 0, count * sizeof(double), out.data());
    } else {
        std::vector<float> f(count);
        queue.enqueueReadBuffer(b, CL_TRUE, 0, count * sizeof(float), f.data());
        std::copy(f.begin(), f.end(), out.begin());
    }
    return out;
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

std::string newton_options(bool fp64, Storage storage) {
    switch (storage) {
        case Storage::fp16:
            return "-D REAL=float -D X_FP16";
        case Storage::bf16:
            return "-D REAL=float -D X_BF16";
        case Storage::int8:
            return "-D REAL=float -D X_INT8";
        case Storage::real:
            break;
    }
    return real_options(fp64);
}

namespace {

// The precision label: X's storage when reduced, else the REAL of the variant.
std::string precision_of(const GradientVariant& v) {
    if (v.storage != Storage::real) return to_string(v.storage);
    return v.fp64 ? "fp64" : "fp32";
}

}  // namespace

Labels GradientVariant::labels() const {
    Labels out{{"layout", layout == Layout::row ? "row" : "col"},
               {"reduction", reduction == Reduction::local ? "local" : "atomic"},
               {"passes", std::to_string(passes)},
               {"vector", std::to_string(vector)},
               {"wg", std::to_string(wg)},
               {"precision", precision_of(*this)},
               {"format", format == Format::dense ? "dense" : "csr"}};
    // Only reduced storage carries the label, so the variants measured before it keep their label
    // sets (and match older reports in a comparison).
    if (storage != Storage::real) out["storage"] = to_string(storage);
    return out;
}

std::string GradientVariant::name() const {
    if (format == Format::csr) return fmt::format("csr/wg{}/{}", wg, precision_of(*this));
    return fmt::format("{}/{}/{}pass/v{}/wg{}/{}", layout == Layout::row ? "row" : "col",
                       reduction == Reduction::local ? "local" : "atomic", passes, vector, wg, precision_of(*this));
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
    out.ld = leading_dimension(d.n);
    if (layout == Layout::row) {
        out.x = filled(s, as_reals(d.x, fp64));
        out.y = filled(s, as_reals(d.y, fp64));
    } else {
        out.x = filled(s, as_reals(to_column_major(d, out.ld), fp64));
        std::vector<float> y(out.ld, 0.0f);
        std::copy(d.y.begin(), d.y.end(), y.begin());
        out.y = filled(s, as_reals(y, fp64));
    }
    work_buffers(s, out, beta, max_groups);
    return out;
}

DeviceData upload_stored(DeviceSession& s, const Dataset& d, const StoredMatrix& x, const std::vector<double>& beta,
                         std::size_t max_groups) {
    if (x.n != d.n || x.p != d.p) throw std::invalid_argument("stored X and dataset differ in shape");
    DeviceData out;
    out.storage = x.storage;
    out.n = d.n;
    out.p = d.p;
    out.ld = d.n;
    out.x = filled(s, x.storage == Storage::int8 ? raw_bytes(x.bytes) : raw_bytes(x.halves));
    out.y = filled(s, as_reals(d.y, false));
    out.scales = x.scales;
    out.scale = filled(s, raw_bytes(x.storage == Storage::int8 ? x.scales : std::vector<float>(d.p, 1.0f)));
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
    out.x = filled(s, as_reals(m.vals, fp64));
    out.y = filled(s, as_reals(y, fp64));
    out.row_ptr = filled(s, raw_bytes(m.row_ptr));
    out.cols = filled(s, raw_bytes(m.cols));
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

namespace {

// Builds the launch sequence of one gradient variant: one method per kernel family (CSR, row-major,
// column-major), sharing the reduction and the atomic variants' zero/finalize steps.
class GradientLaunchBuilder {
  public:
    GradientLaunchBuilder(DeviceSession& s, DeviceData& data, const GradientVariant& v, Family family, double inv_n,
                          double lambda, std::uint64_t n)
        : s_(s),
          info_(s.info()),
          data_(data),
          v_(v),
          n_(n),
          p_(data.p),
          fam_(family_arg(family)),
          fused_(v.passes == 1),
          inv_n_(inv_n),
          lambda_(lambda),
          opts_(real_options(v.fp64)) {}

    // Throws ProbeUnsupported when the device cannot run the variant at all.
    void check_supported() const {
        if (v_.wg == 0 || v_.wg > info_.max_work_group_size)
            throw ProbeUnsupported(
                fmt::format("work-group size {} exceeds the device's {}", v_.wg, info_.max_work_group_size));
        if (v_.fp64 && !info_.fp64) throw ProbeUnsupported("the device has no double precision (cl_khr_fp64)");
        if (v_.fp64 && v_.reduction == Reduction::atomic && !has_extension(info_, "cl_khr_int64_base_atomics"))
            throw ProbeUnsupported("fp64 atomics need cl_khr_int64_base_atomics");
        if (v_.storage != data_.storage)
            throw std::invalid_argument(fmt::format("{}: the device data holds X in another storage", v_.name()));
        if (v_.storage != Storage::real && (v_.layout != Layout::row || v_.reduction != Reduction::local ||
                                            v_.passes != 1 || v_.format != Format::dense || v_.fp64 ||
                                            (v_.vector != 1 && v_.vector != 4 && v_.vector != 8 && v_.vector != 16)))
            throw std::invalid_argument(fmt::format(
                "{}: reduced storage of X runs row-major, fused, local reduction, fp32, vector 1, 4, 8 or 16 only",
                v_.name()));
    }

    std::vector<Launch> build() {
        check_supported();
        if (v_.format == Format::csr)
            csr();
        else if (v_.storage != Storage::real)
            stored();
        else if (v_.layout == Layout::row)
            row();
        else
            col();
        return std::move(out_);
    }

  private:
    cl::Kernel kernel(const char* file, const std::string& name) const {
        return s_.kernels().kernel(file, name.c_str(), opts_);
    }
    RealArg real(double value) const { return RealArg{value, v_.fp64}; }
    std::size_t max_groups() const { return std::min(gradient_groups(info_), data_.partial_groups / max_partial_wg); }
    // Every dense kernel comes in vector widths and takes the model (x, y, beta) first.
    template <class... Rest>
    cl::Kernel dense(const char* stem, const Rest&... rest) const {
        return with_args(kernel(gradient_file, fmt::format("{}_v{}", stem, v_.vector)), data_.x, data_.y, data_.beta,
                         rest...);
    }

    void need_local(std::uint64_t bytes) const {
        if (bytes > info_.local_mem_bytes)
            throw ProbeUnsupported(fmt::format("{} needs {} bytes of local memory; the device has {}", v_.name(), bytes,
                                               info_.local_mem_bytes));
    }
    // work_buffers() sized the partial buffer for work-groups up to max_partial_wg.
    void need_partial_room() const {
        if (v_.wg > max_partial_wg)
            throw ProbeUnsupported(fmt::format("{}: work-groups above {}", v_.name(), max_partial_wg));
    }

    // The reduction and the atomic variants' zero and finalize steps take one work-item per coefficient.
    void per_coefficient(cl::Kernel k) { out_.push_back({std::move(k), p_, 0}); }
    void reduce(std::size_t groups) {
        per_coefficient(with_args(kernel(gradient_file, "reduce_partials"), data_.partial, data_.beta, data_.g,
                                  u32(groups), p_, real(inv_n_), real(lambda_)));
    }
    void zero_and_finalize(Launch main) {
        per_coefficient(with_args(kernel(gradient_file, "zero_vector"), data_.g, p_));
        out_.push_back(std::move(main));
        per_coefficient(
            with_args(kernel(gradient_file, "finalize_atomic"), data_.g, data_.beta, p_, real(inv_n_), real(lambda_)));
    }

    void csr() {
        need_partial_room();
        const std::size_t items = max_groups() * v_.wg;
        out_.push_back({with_args(kernel(sparse_file, "grad_csr_part"), data_.row_ptr, data_.cols, data_.x, data_.y,
                                  data_.beta, data_.partial, u32(n_), p_, u32((n_ + items - 1) / items), fam_),
                        items, v_.wg});
        reduce(items);
    }

    // Work-items of the row kernels: at least 32 rows each where n allows (the kernel takes rows
    // eight at a time, one vector link function per block, and a work-item with a row or two spends
    // its time zeroing and reducing its partial slice instead).
    std::size_t row_items() const {
        const std::size_t wg = v_.wg;
        constexpr std::uint64_t min_rows_per_item = 32;
        const std::size_t wanted_groups = (n_ + min_rows_per_item * wg - 1) / (min_rows_per_item * wg);
        return std::clamp<std::size_t>(wanted_groups, 1, max_groups()) * wg;
    }

    // X in reduced storage (storage.cl): the row kernel's partial sums, then reduce_stored, which
    // applies int8's per-column scales.
    void stored() {
        need_partial_room();
        const std::size_t items = row_items();
        const std::string name = fmt::format("grad_stored_{}_v{}", to_string(v_.storage), v_.vector);
        out_.push_back({with_args(s_.kernels().kernel(storage_file, name.c_str(), ""), data_.x, data_.y, data_.beta,
                                  data_.scale, data_.partial, u32(n_), p_, u32((n_ + items - 1) / items), fam_),
                        items, v_.wg});
        per_coefficient(with_args(s_.kernels().kernel(storage_file, "reduce_stored", ""), data_.partial, data_.beta,
                                  data_.scale, data_.g, u32(items), p_, static_cast<float>(inv_n_),
                                  static_cast<float>(lambda_)));
    }

    void row() {
        const std::size_t wg = v_.wg;
        const std::size_t items = row_items();
        const cl_uint rows_per_item = u32((n_ + items - 1) / items);
        if (v_.reduction == Reduction::atomic) {
            zero_and_finalize({dense("grad_row_atomic", data_.g, u32(n_), p_, rows_per_item, fam_), items, wg});
            return;
        }
        need_partial_room();
        if (v_.passes == 2)
            out_.push_back({dense("residual_row", data_.r, u32(n_), p_, rows_per_item, fam_), items, wg});
        // Each work-item sums its rows into its own partial slice (no barrier, no atomics: CPU
        // devices keep the slice in L1); the second pass adds the work-items' partials.
        out_.push_back(
            {dense("grad_row_part", data_.r, data_.partial, u32(n_), p_, rows_per_item, fam_, fused_), items, wg});
        reduce(items);
    }

    // Column-major: every row of the padded matrix takes part (rows n..ld-1 are zero).
    void col() {
        if (n_ != data_.n) throw std::invalid_argument("column-major gradients run over all rows");
        const std::size_t wg = v_.wg, e = real_bytes(v_.fp64);
        const int w = v_.vector;
        const std::uint64_t ld = data_.ld;
        const std::size_t per_item_global = round_up((ld + w - 1) / w, wg);
        if (v_.reduction == Reduction::atomic) {
            zero_and_finalize({dense("grad_col_atomic", data_.g, u32(ld), p_, fam_), per_item_global, wg});
            return;
        }
        need_local((wg * w + p_) * e);
        if (v_.passes == 2) out_.push_back({dense("residual_col", data_.r, u32(ld), p_, fam_), per_item_global, wg});
        const std::uint64_t tile_rows = wg * static_cast<std::uint64_t>(w);
        const std::uint64_t tiles = (ld + tile_rows - 1) / tile_rows;
        const std::uint64_t tiles_per_group = (tiles + max_groups() - 1) / max_groups();
        const std::size_t groups = static_cast<std::size_t>((tiles + tiles_per_group - 1) / tiles_per_group);
        out_.push_back({dense("grad_col_local", data_.r, data_.partial, cl::Local(wg * w * e),
                              cl::Local(std::size_t{p_} * e), u32(ld), p_, u32(tiles_per_group), fam_, fused_),
                        groups * wg, wg});
        reduce(groups);
    }

    DeviceSession& s_;
    const DeviceInfo& info_;
    DeviceData& data_;
    const GradientVariant& v_;
    std::uint64_t n_;
    cl_uint p_, fam_, fused_;
    double inv_n_, lambda_;
    std::string opts_;
    std::vector<Launch> out_;
};

}  // namespace

std::vector<Launch> gradient_launches(DeviceSession& s, DeviceData& data, const GradientVariant& v, Family family,
                                      double inv_n, double lambda, std::uint64_t rows) {
    const std::uint64_t n = rows == 0 ? data.n : std::min(rows, data.n);
    return GradientLaunchBuilder(s, data, v, family, inv_n, lambda, n).build();
}

cl::Event enqueue_launches(cl::CommandQueue& queue, std::vector<Launch>& launches) {
    cl::Event e;
    for (auto& l : launches)
        e = enqueue_kernel(queue, l.kernel, l.global, l.local);
    return e;
}

TimedBatch time_launches(DeviceSession& s, std::vector<Launch>& launches, std::int64_t iterations,
                         const std::string& label) {
    std::size_t next = 0;
    const auto count = static_cast<std::int64_t>(launches.size()) * iterations;
    return time_commands(
        s.queue(), s.profiling(), count,
        [&] {
            const Launch& l = launches[next++ % launches.size()];
            return enqueue_kernel(s.queue(), l.kernel, l.global, l.local);
        },
        label);
}

std::vector<double> read_gradient(cl::CommandQueue& queue, DeviceData& data) {
    return read_reals(queue, data.g, data.p, data.fp64);
}

double gradient_bytes(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz) {
    const double e = static_cast<double>(real_bytes(v.fp64)), n = static_cast<double>(rows);
    if (v.format == Format::csr)  // values and column indices, row pointers, y
        return static_cast<double>(nnz) * (e + 4) + (n + 1) * 4 + n * e;
    if (v.storage != Storage::real)  // X at its stored size, fp32 y, the per-column scales once
        return n * p * static_cast<double>(storage_bytes(v.storage)) + n * 4 + p * 4.0;
    const double x = n * p * e, y = n * e;
    // Two passes read X twice and write then read the residuals.
    return v.passes == 2 ? 2 * x + y + 2 * n * e : x + y;
}

double gradient_working_set(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz) {
    // What one gradient touches, each byte once: a second pass re-reads X (traffic, not footprint)
    // and adds the residual vector.
    const double residuals = v.format == Format::dense && v.passes == 2
                                 ? static_cast<double>(rows) * static_cast<double>(real_bytes(v.fp64))
                                 : 0.0;
    GradientVariant one_pass = v;
    one_pass.passes = 1;
    return gradient_bytes(one_pass, rows, p, nnz) + residuals;
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
    kernel_ =
        with_args(s.kernels().kernel(newton_file, "newton_row", newton_options(data.fp64, data.storage)), data.x,
                  data.y, data.beta, hpartial_, gpartial_, cl::Local(tile_rows * pp_ * e), cl::Local(2 * tile_rows * e),
                  u32(data.n), data.p, pp_, u32((data.n + groups_ - 1) / groups_), tile_rows, family_arg(family));
}

void NewtonPass::set_beta(const std::vector<double>& beta) {
    // int8: eta = q_i . (s beta), so the kernel is given s beta.
    std::vector<double> b = beta;
    if (data_.storage == Storage::int8)
        for (std::size_t j = 0; j < b.size(); ++j)
            b[j] *= data_.scales.at(j);
    const auto bytes = as_reals(b, data_.fp64);
    s_.queue().enqueueWriteBuffer(data_.beta, CL_TRUE, 0, bytes.size(), bytes.data());
}

cl::Event NewtonPass::enqueue() {
    return enqueue_kernel(s_.queue(), kernel_, groups_ * local_, local_);
}

NewtonSums NewtonPass::read_sums() {
    const std::uint32_t p = data_.p;
    const std::vector<double> h = read_reals(s_.queue(), hpartial_, groups_ * p * pp_, data_.fp64);
    const std::vector<double> g = read_reals(s_.queue(), gpartial_, groups_ * p, data_.fp64);
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
    if (data_.storage == Storage::int8)  // sums over q: H = S (Q^T W Q) S, g = S Q^T r
        for (std::uint32_t j = 0; j < p; ++j) {
            out.g[j] *= data_.scales[j];
            for (std::uint32_t k = 0; k < p; ++k)
                out.h[std::size_t{j} * p + k] *= static_cast<double>(data_.scales[j]) * data_.scales[k];
        }
    return out;
}

}  // namespace clprobe::glm

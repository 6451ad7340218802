#pragma once
// The GLM kernels as the probes and tests launch them: device copies of a dataset, the launch
// sequence of each gradient variant (kernels/glm/gradient.cl, sparse.cl) and of one Newton pass
// (kernels/glm/newton.cl), and reading results back in double. One place knows each kernel's host
// contract, so probes, tests and the hygiene run cannot drift apart.
#include <cstdint>
#include <string>
#include <vector>

#include "cl/cl_api.hpp"
#include "cl/command_timing.hpp"
#include "core/report.hpp"
#include "glm/glm_memory.hpp"
#include "glm/glm_model.hpp"
#include "glm/glm_storage.hpp"

namespace clprobe {
class DeviceSession;
}

namespace clprobe::glm {

enum class Reduction { local, atomic };

struct GradientVariant {
    Layout layout = Layout::row;
    Reduction reduction = Reduction::local;
    int passes = 1;  // 1: fused (X read once); 2: residual pass, then gradient pass
    int vector = 8;
    std::size_t wg = 64;  // work-group size
    bool fp64 = false;
    Format format = Format::dense;
    // X in fp16, bf16 or int8 (kernels/glm/storage.cl; fp32 arithmetic): dense, row-major, fused,
    // local reduction, fp32 only, vector 1, 4, 8 or 16. Storage::real: X in the precision above.
    Storage storage = Storage::real;

    // Reduced storage adds the label storage=fp16|bf16|int8 and sets precision to the same name
    // (so every precision=fp32 or fp64 lookup keeps meaning "X and arithmetic in that precision").
    Labels labels() const;
    std::string name() const;  // "row/local/1pass/v8/wg64/fp32/dense"; reduced: ".../wg64/fp16"
};

// Device copies of X (one layout, one precision), y, beta and the work buffers of a gradient.
struct DeviceData {
    Layout layout = Layout::row;
    Format format = Format::dense;
    bool fp64 = false;
    Storage storage = Storage::real;  // upload_stored(): X in reduced storage, the rest fp32
    std::uint64_t n = 0;              // rows
    std::uint64_t ld = 0;             // column-major leading dimension (leading_dimension(n))
    std::uint32_t p = 0;
    std::uint64_t nnz = 0;
    cl::Buffer x, y, beta, r, partial, g;
    cl::Buffer row_ptr, cols;        // CSR only
    cl::Buffer scale;                // reduced storage: p floats (int8 scales, else ones)
    std::vector<float> scales;       // int8: the host's copy of the scales (the Newton pass uses them)
    std::size_t partial_groups = 0;  // partial gradients the partial buffer has room for
};

// Element size of a variant's reals.
inline std::size_t real_bytes(bool fp64) {
    return fp64 ? 8 : 4;
}
// The program options of a precision.
std::string real_options(bool fp64);
// newton.cl's options for data in that precision or reduced storage (-D X_FP16, X_BF16, X_INT8).
std::string newton_options(bool fp64, Storage storage);

// Uploads `d` (rows [0, d.n)) in the given layout and precision; beta holds `beta`.
DeviceData upload_dense(DeviceSession& s, const Dataset& d, Layout layout, bool fp64, const std::vector<double>& beta,
                        std::size_t max_groups);
// Uploads X encoded in reduced storage (row-major), y, beta and the fp32 work buffers.
DeviceData upload_stored(DeviceSession& s, const Dataset& d, const StoredMatrix& x, const std::vector<double>& beta,
                         std::size_t max_groups);
DeviceData upload_csr(DeviceSession& s, const CsrMatrix& m, const std::vector<float>& y, bool fp64,
                      const std::vector<double>& beta, std::size_t max_groups);
// Work buffers for `rows` rows whose X and y the caller writes itself (the mini-batch pipeline).
DeviceData allocate_row_batch(DeviceSession& s, std::uint64_t rows, std::uint32_t p, const std::vector<double>& beta,
                              std::size_t max_groups);

struct Launch {
    cl::Kernel kernel;
    std::size_t global = 0;
    std::size_t local = 0;
};

// The launches of one gradient evaluation over the first `rows` rows of `data` (0: all), ending with
// g = X^T (mu - y) * inv_n + lambda beta in data.g. Throws ProbeUnsupported when the device cannot
// run the variant (work-group or local memory limits, no 64-bit atomics for fp64).
std::vector<Launch> gradient_launches(DeviceSession& s, DeviceData& data, const GradientVariant& v, Family family,
                                      double inv_n, double lambda, std::uint64_t rows = 0);

// The number of work-groups the row and CSR kernels use: enough to balance every compute unit.
std::size_t gradient_groups(const DeviceInfo& info);

// Enqueues the launches in order on `queue`; returns the last event.
cl::Event enqueue_launches(cl::CommandQueue& queue, std::vector<Launch>& launches);
// `iterations` evaluations, timed (device time summed over every launch when profiling).
TimedBatch time_launches(DeviceSession& s, std::vector<Launch>& launches, std::int64_t iterations,
                         const std::string& label);

// data.g (p reals) read back as double.
std::vector<double> read_gradient(cl::CommandQueue& queue, DeviceData& data);

// Bytes of X and vectors a variant reads and writes, and its floating-point operations.
double gradient_bytes(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz);
// Bytes one gradient's data occupies (X, y, and the residuals of a two-pass variant): the working
// set that decides which memory level's roof bounds it.
double gradient_working_set(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz);
double gradient_flops(const GradientVariant& v, std::uint64_t rows, std::uint32_t p, std::uint64_t nnz);

// One Newton pass on row-major data (fp32, fp64, or X in reduced storage): the unnormalised sums H = X^T W X and
// g = X^T (mu - y) at data.beta, added over the work-groups in double on the host.
class NewtonPass {
  public:
    NewtonPass(DeviceSession& s, DeviceData& data, Family family);
    void set_beta(const std::vector<double>& beta);
    // Enqueues the pass and returns its event (for timing).
    cl::Event enqueue();
    NewtonSums read_sums();

  private:
    DeviceSession& s_;
    DeviceData& data_;
    std::uint32_t pp_ = 0;
    std::size_t groups_ = 0, local_ = 0;
    cl::Buffer hpartial_, gpartial_;
    cl::Kernel kernel_;
};

}  // namespace clprobe::glm

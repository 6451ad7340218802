#include "glm/glm_support.hpp"

#include <fmt/core.h>

#include <mutex>

#include "cl/device_session.hpp"
#include "core/memory_roofs.hpp"

namespace clprobe::glm {

Mode mode_of(RunMode mode) {
    return mode == RunMode::quick ? Mode::quick : mode == RunMode::full ? Mode::full : Mode::standard;
}

Shape shape_for(const RunOptions& options) {
    Shape s = default_shape(mode_of(options.mode));
    if (options.glm.rows) s.rows = options.glm.rows;
    if (options.glm.cols) s.cols = static_cast<std::uint32_t>(options.glm.cols);
    if (options.glm.density > 0) s.density = options.glm.density;
    if (options.glm.batch) s.batch = options.glm.batch;
    return s;
}

Shape shape_for(const RunOptions& options, std::uint64_t last_cache_bytes) {
    Shape s = shape_for(options);
    if (options.glm.rows || options.mode == RunMode::quick || !last_cache_bytes) return s;
    s.rows = memory_level_rows(s.rows, s.cols, last_cache_bytes);
    return s;
}

Shape shape_for(const ProbeContext& ctx) {
    std::uint64_t last_cache = ctx.device ? ctx.device->info().global_mem_cache_bytes : 0;
    if (const auto facts = memory_roof_facts_of(ctx.earlier); facts && !facts->caches.empty())
        last_cache = last_cache_bytes(facts->caches);
    return shape_for(ctx.options, last_cache);
}

std::shared_ptr<const Dataset> shared_dataset(std::uint64_t n, std::uint32_t p, Family family) {
    static std::mutex mutex;
    static std::shared_ptr<const Dataset> last;
    std::lock_guard<std::mutex> lock(mutex);
    if (last && last->n == n && last->p == p && last->family == family) return last;
    last.reset();  // free the old one before building the next
    last = std::make_shared<const Dataset>(make_dataset(n, p, family, data_seed));
    return last;
}

double tolerance(bool fp64) {
    return fp64 ? 1e-9 : 1e-4;
}

double verify_gradient(const std::string& what, const std::vector<double>& got, const std::vector<double>& want,
                       bool fp64) {
    const double err = relative_error(got, want);
    if (!(err <= tolerance(fp64)))
        throw VerificationError(
            fmt::format("{}: gradient differs from the double-precision reference by {:.3g} "
                        "(relative; allowed {:.0e})",
                        what, err, tolerance(fp64)));
    return err;
}

double verify_storage_accuracy(const std::string& what, const std::vector<double>& got, const std::vector<double>& full,
                               double bound) {
    const double err = relative_error(got, full), allowed = bound + tolerance(false);
    if (!(err <= allowed))
        throw VerificationError(
            fmt::format("{}: gradient differs from the gradient over fp32 X by {:.3g} (relative), beyond the {:.3g} "
                        "the rounding of X allows",
                        what, err, allowed));
    return err;
}

}  // namespace clprobe::glm

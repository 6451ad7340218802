// The GLM workload on the test device (PoCL's CPU device in CI): every gradient variant against
// the host double reference on random small shapes (n not a multiple of the work-group size,
// p = 1), the device fit against the host fit, the probes end to end on tiny shapes, and a
// deliberately wrong kernel failing verification.
#include <catch2/catch.hpp>

#include <filesystem>
#include <random>

#include "cl/device_session.hpp"
#include "glm/glm_device.hpp"
#include "glm/glm_memory.hpp"
#include "glm/glm_storage.hpp"
#include "glm/glm_support.hpp"
#include "probe_factories.hpp"
#include "runtime/runner.hpp"
#include "session_fixture.hpp"

using namespace clprobe;
using namespace clprobe::glm;

namespace {

ProbeResult run_tiny(Probe& probe, DeviceSession& session, std::uint64_t rows, std::uint64_t cols,
                     std::uint64_t batch = 0, std::vector<ProbeResult> earlier = {}) {
    RunOptions options;
    options.mode = RunMode::quick;
    options.glm.rows = rows;
    options.glm.cols = cols;
    options.glm.batch = batch;
    ProbeContext ctx{&session, options, earlier, nullptr};
    return run_probe(probe, ctx);
}

// Bytes of every buffer of one set of device data (CL_MEM_SIZE; CSR's index buffers too).
std::uint64_t device_bytes(const DeviceData& d) {
    std::uint64_t sum = 0;
    for (const cl::Buffer* b : {&d.x, &d.y, &d.beta, &d.r, &d.partial, &d.g, &d.row_ptr, &d.cols, &d.scale})
        if ((*b)()) sum += b->getInfo<CL_MEM_SIZE>();
    return sum;
}

std::vector<GradientVariant> every_variant(const DeviceInfo& info) {
    std::vector<GradientVariant> out;
    for (Layout layout : {Layout::row, Layout::col})
        for (int w : {1, 4, 16}) {
            GradientVariant v;
            v.layout = layout;
            v.vector = w;
            v.wg = 16;
            out.push_back(v);  // fused, local reduction
            v.passes = 2;
            out.push_back(v);
            v.passes = 1;
            v.reduction = Reduction::atomic;
            out.push_back(v);
        }
    GradientVariant wide;  // the probes' default geometry
    wide.wg = 64;
    out.push_back(wide);
    GradientVariant csr;
    csr.format = Format::csr;
    csr.wg = 16;
    out.push_back(csr);
    if (info.fp64) {
        GradientVariant d;
        d.fp64 = true;
        d.wg = 16;
        out.push_back(d);
        d.layout = Layout::col;
        d.vector = 4;
        out.push_back(d);
    }
    return out;
}

}  // namespace

TEST_CASE("every GLM gradient variant matches the host double reference", "[glm]") {
    DeviceSession& s = test::shared_session();
    std::mt19937 rng(1234);
    struct Case {
        std::uint64_t n;
        std::uint32_t p;
    };
    // p = 1, p below and above the vector widths, n never a multiple of a work-group size.
    std::vector<Case> cases{{257, 1}, {1000 + rng() % 97, 13}, {531 + rng() % 31, 64}};
    for (const auto& c : cases)
        for (Family family : {Family::logistic, Family::poisson}) {
            const Dataset d = make_dataset(c.n, c.p, family, rng());
            const auto beta = evaluation_beta(d);
            const auto reference = reference_gradient(d, beta, ridge_lambda);
            const CsrMatrix m = make_csr(c.n, c.p, 0.3, 99);
            const auto csr_reference = reference_gradient(m, d.y, family, beta, ridge_lambda);
            const std::size_t groups = gradient_groups(s.info());
            DeviceData row = upload_dense(s, d, Layout::row, false, beta, groups);
            DeviceData col = upload_dense(s, d, Layout::col, false, beta, groups);
            DeviceData sparse = upload_csr(s, m, d.y, false, beta, groups);
            // The footprint model counts exactly the buffers the uploads created.
            for (const DeviceData* data : {&row, &col, &sparse})
                CHECK(device_bytes(*data) ==
                      data_footprint({data->n, data->p, data->layout, data->format, data->fp64, 0.3, groups}).total);
            DeviceData row64, col64;
            if (s.info().fp64) {
                row64 = upload_dense(s, d, Layout::row, true, beta, groups);
                col64 = upload_dense(s, d, Layout::col, true, beta, groups);
            }
            for (const auto& v : every_variant(s.info())) {
                INFO("n=" << c.n << " p=" << c.p << " " << to_string(family) << " " << v.name());
                DeviceData& data = v.format == Format::csr   ? sparse
                                   : v.fp64                  ? (v.layout == Layout::row ? row64 : col64)
                                   : v.layout == Layout::row ? row
                                                             : col;
                auto launches = gradient_launches(s, data, v, family, 1.0 / static_cast<double>(c.n), ridge_lambda);
                enqueue_launches(s.queue(), launches);
                const auto got = read_gradient(s.queue(), data);
                const double err = relative_error(got, v.format == Format::csr ? csr_reference : reference);
                CHECK(err <= tolerance(v.fp64));
            }
        }
}

TEST_CASE("X in fp16, bf16 and int8 gives the gradient over its decoded values, within the rounding bound of fp32 X",
          "[glm][storage]") {
    DeviceSession& s = test::shared_session();
    std::mt19937 rng(4321);
    struct Case {
        std::uint64_t n;
        std::uint32_t p;
    };
    std::vector<Case> cases{{257, 1}, {1000 + rng() % 97, 13}, {531 + rng() % 31, 64}};
    const std::size_t groups = gradient_groups(s.info());
    for (const auto& c : cases)
        for (Family family : {Family::logistic, Family::poisson}) {
            const Dataset d = make_dataset(c.n, c.p, family, rng());
            const auto beta = evaluation_beta(d);
            const auto full = reference_gradient(d, beta, ridge_lambda);
            for (const Storage storage : reduced_storages) {
                const StoredMatrix x = encode(d, storage);
                const StoredReference ref = stored_reference(d, x, beta, ridge_lambda);
                DeviceData data = upload_stored(s, d, x, beta, groups);
                DataShape shape{d.n, d.p, Layout::row, Format::dense, false, 0, groups, storage};
                CHECK(device_bytes(data) == data_footprint(shape).total);
                for (int w : {1, 4, 8, 16})
                    for (std::size_t wg : {16, 64}) {
                        GradientVariant v;
                        v.storage = storage;
                        v.vector = w;
                        v.wg = wg;
                        INFO("n=" << c.n << " p=" << c.p << " " << to_string(family) << " " << v.name());
                        auto launches =
                            gradient_launches(s, data, v, family, 1.0 / static_cast<double>(c.n), ridge_lambda);
                        enqueue_launches(s.queue(), launches);
                        const auto got = read_gradient(s.queue(), data);
                        CHECK(relative_error(got, ref.gradient) <= tolerance(false));
                        CHECK_NOTHROW(verify_storage_accuracy(v.name(), got, full, ref.bound));
                    }
            }
        }
    // Reduced storage runs the row-major fused kernel only.
    const Dataset d = make_dataset(100, 8, Family::logistic, 1);
    DeviceData data = upload_stored(s, d, encode(d, Storage::fp16), evaluation_beta(d), groups);
    GradientVariant col;
    col.storage = Storage::fp16;
    col.layout = Layout::col;
    CHECK_THROWS_AS(gradient_launches(s, data, col, Family::logistic, 0.01, ridge_lambda), std::invalid_argument);
    GradientVariant fp32;  // data in another storage than the variant's
    CHECK_THROWS_AS(gradient_launches(s, data, fp32, Family::logistic, 0.01, ridge_lambda), std::invalid_argument);
    // Bytes counted per step: X at its stored size.
    GradientVariant half;
    half.storage = Storage::fp16;
    GradientVariant int8 = half;
    int8.storage = Storage::int8;
    CHECK(gradient_bytes(half, 1000, 64, 0) == 1000.0 * 64 * 2 + 1000 * 4 + 64 * 4);
    CHECK(gradient_bytes(int8, 1000, 64, 0) == 1000.0 * 64 + 1000 * 4 + 64 * 4);
    CHECK(gradient_bytes(GradientVariant{}, 1000, 64, 0) == 1000.0 * 64 * 4 + 1000 * 4);
}

TEST_CASE("the Newton pass over stored X matches the sums over its decoded values", "[glm][storage]") {
    DeviceSession& s = test::shared_session();
    for (Family family : {Family::logistic, Family::poisson}) {
        const Dataset d = make_dataset(2003, 11, family, 9);
        const auto beta = evaluation_beta(d);
        for (const Storage storage : reduced_storages) {
            INFO(to_string(family) << " " << to_string(storage));
            const StoredMatrix x = encode(d, storage);
            DeviceData data = upload_stored(s, d, x, std::vector<double>(11, 0.0), 1);
            NewtonPass pass(s, data, family);
            pass.set_beta(beta);
            pass.enqueue();
            const NewtonSums got = pass.read_sums(), want = reference_newton_sums(decoded(d, x), beta);
            CHECK(relative_error(got.h, want.h) < 1e-4);
            CHECK(relative_error(got.g, want.g) < 1e-4);
        }
    }
}

TEST_CASE("the device Newton pass matches the double sums and the fit matches the host fit", "[glm]") {
    DeviceSession& s = test::shared_session();
    const Dataset d = make_dataset(3001, 6, Family::logistic, 5);
    DeviceData data = upload_dense(s, d, Layout::row, false, std::vector<double>(6, 0.0), 1);
    NewtonPass pass(s, data, Family::logistic);
    const auto beta = evaluation_beta(d);
    pass.set_beta(beta);
    pass.enqueue();
    const NewtonSums got = pass.read_sums(), want = reference_newton_sums(d, beta);
    CHECK(relative_error(got.h, want.h) < 1e-4);
    CHECK(relative_error(got.g, want.g) < 1e-4);

    auto probe = make_glm_fit_probe();
    const ProbeResult r = run_tiny(*probe, s, 3001, 6);
    INFO(r.reason);
    REQUIRE(r.status == ProbeStatus::ok);
    for (const char* family : {"logistic", "poisson"}) {
        const auto* err = find_measurement(r, "glm.fit.error", {{"family", family}});
        REQUIRE(err != nullptr);
        CHECK(err->summary.median <= 1e-3);
        const auto* it = find_measurement(r, "glm.fit.iterations", {{"family", family}});
        REQUIRE(it != nullptr);
        CHECK(it->summary.median >= 1);
        CHECK(find_measurement(r, "glm.newton.time", {{"family", family}}) != nullptr);
        // One fit per reduced storage of X, within its tolerance of the host fit on fp32 X.
        for (const Storage storage : reduced_storages) {
            const auto* stored =
                find_measurement(r, "glm.fit.error", {{"family", family}, {"storage", to_string(storage)}});
            REQUIRE(stored != nullptr);
            CHECK(stored->labels.at("precision") == to_string(storage));
            CHECK(stored->summary.median <= fit_tolerance(storage));
        }
    }
    // The fp32 fit's figures keep their labels (no storage label).
    CHECK(find_measurement(r, "glm.fit.error", {{"family", "logistic"}, {"precision", "fp32"}})
              ->labels.count("storage") == 0);
}

TEST_CASE("the GLM probes measure verified variants on a tiny shape", "[glm][probes]") {
    DeviceSession& s = test::shared_session();
    auto gradient = make_glm_gradient_probe();
    // No kernel.peak.bandwidth earlier: the fractions are left out and the report says why.
    const ProbeResult g = run_tiny(*gradient, s, 3001, 7);
    INFO(g.reason);
    REQUIRE(g.status == ProbeStatus::ok);
    CHECK(gradient->workload() == "glm");
    CHECK(find_measurement(g, "glm.gradient.time", {{"layout", "col"}}) != nullptr);
    CHECK(find_measurement(g, "glm.gradient.bandwidth", {{"reduction", "atomic"}}) != nullptr);
    CHECK(find_measurement(g, "glm.gradient.time", {{"passes", "2"}}) != nullptr);
    CHECK(find_measurement(g, "glm.gradient.time", {{"format", "csr"}}) != nullptr);
    CHECK(find_measurement(g, "glm.gradient.best.bandwidth") != nullptr);
    CHECK(find_measurement(g, "glm.gradient.roofline_fraction") == nullptr);
    CHECK(g.attributes.contains("roofline_note"));
    CHECK(g.attributes.at("roofline_points").size() >= 8);
    // Device memory of each set of data at the rows it ran, and the most rows one fp32 copy fits.
    const auto* row_bytes =
        find_measurement(g, "glm.memory.device_bytes", {{"format", "dense"}, {"layout", "row"}, {"precision", "fp32"}});
    REQUIRE(row_bytes != nullptr);
    CHECK(row_bytes->labels.at("rows") == "3001");
    CHECK(row_bytes->summary.median > 3001.0 * 7 * 4);
    CHECK(find_measurement(g, "glm.memory.largest_buffer", {{"format", "csr"}}) != nullptr);
    const auto* dense_fit = find_measurement(g, "glm.memory.max_rows", {{"format", "dense"}});
    const auto* csr_fit = find_measurement(g, "glm.memory.max_rows", {{"format", "csr"}});
    REQUIRE(dense_fit != nullptr);
    REQUIRE(csr_fit != nullptr);
    CHECK(dense_fit->summary.median > 3001);
    CHECK(csr_fit->summary.median > dense_fit->summary.median);  // one non-zero of 7 a row
    CHECK(g.attributes.at("rows_requested") == 3001);
    // X in fp16, bf16 and int8: timed, and the accuracy each kept (below its bound).
    for (const Storage storage : reduced_storages) {
        const Labels labels{{"storage", to_string(storage)}};
        const auto* t = find_measurement(g, "glm.gradient.time", labels);
        REQUIRE(t != nullptr);
        CHECK(t->labels.at("precision") == to_string(storage));
        const auto* err = find_measurement(g, "glm.gradient.storage_error", t->labels);
        REQUIRE(err != nullptr);
        CHECK(err->summary.median < 0.05);
        CHECK(find_measurement(g, "glm.memory.device_bytes", labels) != nullptr);
    }
    // The headline stays the fastest fp32 variant's.
    CHECK_THAT(find_measurement(g, "glm.gradient.best.bandwidth")->note, Catch::Contains("precision=fp32"));
    for (const auto& m : g.measurements)
        for (double v : m.samples)
            CHECK(v > 0);

    // With a peak in the earlier results, every variant gets a fraction of it.
    ProbeResult peak;
    peak.id = "kernel.bandwidth";
    peak.measurements.push_back(
        make_measurement("kernel.peak.bandwidth", "GB/s", {}, {10, 10, 10}, TimerKind::device_profiling));
    const ProbeResult g2 = run_tiny(*gradient, s, 3001, 7, 0, {peak});
    REQUIRE(g2.status == ProbeStatus::ok);
    CHECK(find_measurement(g2, "glm.gradient.best.roofline_fraction") != nullptr);
    // Without a level sweep every working set is "memory": the memory roof is read again beside
    // the variants, and a read faster than the 10 GB/s peak becomes their roof, named.
    const auto* paired = find_measurement(g2, "glm.gradient.memory_roof");
    REQUIRE(paired != nullptr);
    CHECK(paired->unit == "GB/s");
    CHECK(find_measurement(g, "glm.gradient.memory_roof") == nullptr);
    const auto* fraction = find_measurement(g2, "glm.gradient.roofline_fraction", {{"layout", "row"}});
    REQUIRE(fraction != nullptr);
    CHECK_THAT(fraction->note,
               Catch::Contains(paired->summary.max > 10 ? "glm.gradient.memory_roof" : "kernel.peak.bandwidth"));

    auto blas = make_glm_host_blas_probe();
    const ProbeResult b = run_tiny(*blas, s, 3001, 7);
    INFO(b.reason);
#ifdef CLPROBE_HAVE_OPENBLAS
    REQUIRE(b.status == ProbeStatus::ok);
    CHECK(find_measurement(b, "glm.host_blas.gradient.time") != nullptr);
#else
    CHECK(b.status == ProbeStatus::unsupported);
    CHECK(b.reason == "built without OpenBLAS");
#endif

    auto pipeline = make_glm_pipeline_probe();
    const ProbeResult p = run_tiny(*pipeline, s, 3001, 7, 700);  // 5 batches, the last one short
    INFO(p.reason);
    REQUIRE(p.status == ProbeStatus::ok);
    REQUIRE_FALSE(p.measurements.empty());
    CHECK(p.measurements.front().metric == "glm.pipeline.stage_time");
    CHECK(p.measurements.front().labels.at("variant") == "serial_pageable");  // the baseline first
    for (const char* v : {"serial_pageable", "serial_pinned", "double_buffered", "resident"})
        CHECK(find_measurement(p, "glm.pipeline.step_time", {{"variant", v}}) != nullptr);
    CHECK(p.attributes.at("batches") == 5);
}

TEST_CASE("a bf16 decode shifted by one bit fails verification", "[glm][verification][storage]") {
    const auto dir = test::patched_kernel_dir("glm/storage.cl", "convert_uint8(vload8(i, ptr)) << 16",
                                              "convert_uint8(vload8(i, ptr)) << 15");
    auto session = test::session_with_kernels(dir);
    auto probe = make_glm_gradient_probe();
    const ProbeResult r = run_tiny(*probe, *session, 1001, 16);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK_THAT(r.reason, Catch::Contains("bf16"));
    CHECK(find_measurement(r, "glm.gradient.time") == nullptr);
    std::filesystem::remove_all(dir);
}

TEST_CASE("a GLM kernel that forgets the response fails verification", "[glm][verification]") {
    // r = mu - y becomes r = mu: a plausible bug, and fast.
    const auto dir =
        test::patched_kernel_dir("glm/gradient.cl", "family) - LOAD_8(0, y + i), 0, r);", "family), 0, r);");
    auto session = test::session_with_kernels(dir);
    auto probe = make_glm_gradient_probe();
    const ProbeResult r = run_tiny(*probe, *session, 1001, 5);
    CHECK(r.status == ProbeStatus::error);
    CHECK_THAT(r.reason, Catch::StartsWith("verification failed"));
    CHECK(find_measurement(r, "glm.gradient.time") == nullptr);
    std::filesystem::remove_all(dir);
}

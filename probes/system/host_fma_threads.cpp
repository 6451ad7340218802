#include "system/host_fma_threads.hpp"

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace clprobe {

namespace {

// Four 4-wide vectors make one 16-lane chain: 32 independent vector FMAs in flight, enough to
// keep any x86 or Arm core's FMA pipes full whatever the compiler's target (a 64-byte vector type
// would change the calling convention between targets, and GCC warns of that).
using Quad = float __attribute__((vector_size(16)));
constexpr std::size_t quads_per_chain = host_fma_lanes / 4;

void run_chains(const float* starts, std::uint32_t trips, float b, float c, float* out) {
    Quad a[host_fma_chains][quads_per_chain];
    for (std::size_t j = 0; j < host_fma_chains; ++j)
        for (std::size_t q = 0; q < quads_per_chain; ++q)
            a[j][q] = Quad{starts[j], starts[j], starts[j], starts[j]};
    const Quad vb = {b, b, b, b}, vc = {c, c, c, c};
    for (std::uint32_t t = 0; t < trips; ++t)
        for (std::size_t j = 0; j < host_fma_chains; ++j)
            for (std::size_t q = 0; q < quads_per_chain; ++q)
                a[j][q] = a[j][q] * vb + vc;
    for (std::size_t j = 0; j < host_fma_chains; ++j)
        for (std::size_t q = 0; q < quads_per_chain; ++q)
            for (std::size_t l = 0; l < 4; ++l)
                out[j * host_fma_lanes + q * 4 + l] = a[j][q][l];
}

}  // namespace

double run_host_fma(const std::vector<float>& chains, std::uint32_t trips, float b, float c,
                    std::vector<float>& lanes) {
    const std::size_t threads = chains.size() / host_fma_chains;
    if (threads == 0 || chains.size() % host_fma_chains != 0)
        throw std::invalid_argument("run_host_fma: the start values are not whole threads' chains");
    lanes.assign(chains.size() * host_fma_lanes, 0.0f);
    std::atomic<bool> go{false};
    std::vector<std::thread> workers;
    workers.reserve(threads);
    try {
        for (std::size_t t = 0; t < threads; ++t)
            workers.emplace_back([&, t] {
                // Every thread waits for one signal, so the clock starts after they all exist.
                while (!go.load(std::memory_order_acquire))
                    std::this_thread::yield();
                run_chains(chains.data() + t * host_fma_chains, trips, b, c,
                           lanes.data() + t * host_fma_chains * host_fma_lanes);
            });
    } catch (...) {
        // A thread that could not start: let the started ones finish before the error leaves.
        go.store(true, std::memory_order_release);
        for (auto& w : workers)
            w.join();
        throw;
    }
    const auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    for (auto& w : workers)
        w.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace clprobe

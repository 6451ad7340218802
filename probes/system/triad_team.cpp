#include "system/triad_team.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <new>

namespace clprobe {

namespace {

// Small integers: b + 3c is exact in double, so verification can demand equality.
double input_b(std::size_t i) {
    return static_cast<double>(i & 15);
}
double input_c(std::size_t i) {
    return static_cast<double>((i >> 4) & 7) + 1.0;
}

void triad_slice(double* __restrict a, const double* __restrict b, const double* __restrict c, std::size_t n) {
    std::size_t i = 0;
    // Blocks of one cache line with a fixed trip count, which GCC vectorises even at -O2.
    for (; i + 8 <= n; i += 8)
        for (std::size_t j = 0; j < 8; ++j)
            a[i + j] = b[i + j] + TriadTeam::scalar * c[i + j];
    for (; i < n; ++i)
        a[i] = b[i] + TriadTeam::scalar * c[i];
}

// Page-aligned and untouched: the pages appear when the owning thread first writes them.
double* allocate(std::size_t elements) {
    constexpr std::size_t page = 4096;
    const std::size_t bytes = (elements * sizeof(double) + page - 1) / page * page;
    void* p = std::aligned_alloc(page, bytes);
    if (!p) throw std::bad_alloc();
    return static_cast<double*>(p);
}

}  // namespace

void TriadTeam::FreeDeleter::operator()(double* p) const {
    std::free(p);
}

TriadTeam::TriadTeam(const std::vector<int>& cpus, std::size_t elements)
    : elements_(elements), a_(allocate(elements)), b_(allocate(elements)), c_(allocate(elements)) {
    const std::size_t n = std::max<std::size_t>(1, cpus.size());
    // Slices start on cache-line boundaries (8 doubles) so no two threads write one line.
    const std::size_t chunk = elements / n / 8 * 8;
    for (std::size_t i = 0; i < n; ++i)
        slices_.push_back({i * chunk, i + 1 == n ? elements : (i + 1) * chunk});
    try {
        for (std::size_t i = 0; i < n; ++i)
            workers_.emplace_back(&TriadTeam::work, this, i, cpus.empty() ? -1 : cpus[i]);
    } catch (...) {
        stop_workers();
        throw;
    }
}

TriadTeam::~TriadTeam() {
    stop_workers();
}

void TriadTeam::stop_workers() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        job_ = Job::quit;
        ++generation_;
    }
    start_.notify_all();
    for (auto& w : workers_)
        if (w.joinable()) w.join();
}

void TriadTeam::initialise() {
    dispatch(Job::init, 0, {});
}

double TriadTeam::run(std::int64_t iterations, const std::function<void()>& while_running) {
    const auto t0 = std::chrono::steady_clock::now();
    dispatch(Job::triad, iterations, while_running);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::uint64_t TriadTeam::count_wrong() {
    dispatch(Job::verify, 0, {});
    const std::lock_guard<std::mutex> lock(mutex_);
    return wrong_;
}

bool TriadTeam::pinned() const {
    // Complete once every worker finished its first job (pinning comes before it).
    return pinned_.load() == workers_.size();
}

void TriadTeam::dispatch(Job job, std::int64_t iterations, const std::function<void()>& while_running) {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        job_ = job;
        iterations_ = iterations;
        pending_ = workers_.size();
        wrong_ = 0;
        ++generation_;
    }
    start_.notify_all();
    if (while_running) while_running();
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_ == 0; });
}

void TriadTeam::work(std::size_t index, int cpu) {
    if (cpu >= 0 && cpu < CPU_SETSIZE) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (::pthread_setaffinity_np(::pthread_self(), sizeof set, &set) == 0) ++pinned_;
    }
    const Slice s = slices_[index];
    double* a = a_.get();
    const double* b = b_.get();
    const double* c = c_.get();
    std::uint64_t seen = 0;
    while (true) {
        Job job;
        std::int64_t iterations;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            start_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            job = job_;
            iterations = iterations_;
        }
        if (job == Job::quit) return;
        std::uint64_t wrong = 0;
        if (job == Job::init) {
            for (std::size_t i = s.begin; i < s.end; ++i) {
                a_[i] = -1.0;
                b_[i] = input_b(i);
                c_[i] = input_c(i);
            }
        } else if (job == Job::triad) {
            for (std::int64_t it = 0; it < iterations; ++it) {
                triad_slice(a + s.begin, b + s.begin, c + s.begin, s.end - s.begin);
                // Each repetition must really stream the arrays again: no merging of iterations.
                asm volatile("" ::: "memory");
            }
        } else {
            for (std::size_t i = s.begin; i < s.end; ++i)
                wrong += a[i] != input_b(i) + scalar * input_c(i);
        }
        const std::lock_guard<std::mutex> lock(mutex_);
        wrong_ += wrong;
        if (--pending_ == 0) done_.notify_one();
    }
}

}  // namespace clprobe

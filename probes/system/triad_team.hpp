#pragma once
// STREAM's triad, a[i] = b[i] + s*c[i] over doubles, run by a fixed team of threads: one per CPU
// the process may use, each pinned to its CPU and owning one contiguous slice of the three arrays.
// The threads start once and serve every batch (spawning threads per sample would time thread
// creation), and each initialises its own slice, so on NUMA hosts every page lives on the node of
// the thread that streams it (first touch).
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace clprobe {

class TriadTeam {
  public:
    static constexpr double scalar = 3.0;
    // Bytes STREAM counts per element and triad: read b and c, write a (the cache's read of a
    // before writing it is not counted).
    static constexpr double bytes_per_element = 24.0;

    // Allocates three arrays of `elements` doubles (untouched) and starts one thread per CPU.
    TriadTeam(const std::vector<int>& cpus, std::size_t elements);
    ~TriadTeam();
    TriadTeam(const TriadTeam&) = delete;
    TriadTeam& operator=(const TriadTeam&) = delete;

    // Every thread writes its slices: b and c get the input pattern, a a value no triad produces.
    void initialise();
    // `iterations` triads over the whole arrays; seconds on the host's steady clock.
    // `while_running` (optional) runs on the calling thread while the team works.
    double run(std::int64_t iterations, const std::function<void()>& while_running = {});
    // How many elements of a differ from b + scalar*c (exactly: the inputs are small integers).
    std::uint64_t count_wrong();

    std::size_t threads() const { return workers_.size(); }
    std::size_t elements() const { return elements_; }
    bool pinned() const;  // every thread runs on its own CPU

  private:
    enum class Job { init, triad, verify, quit };
    struct Slice {
        std::size_t begin = 0, end = 0;
    };
    void dispatch(Job job, std::int64_t iterations, const std::function<void()>& while_running);
    void work(std::size_t index, int cpu);
    void stop_workers();

    struct FreeDeleter {
        void operator()(double* p) const;
    };
    std::size_t elements_;
    std::unique_ptr<double[], FreeDeleter> a_, b_, c_;
    std::vector<Slice> slices_;
    std::vector<std::thread> workers_;

    std::mutex mutex_;
    std::condition_variable start_, done_;
    std::uint64_t generation_ = 0;  // bumped for every job
    Job job_ = Job::init;
    std::int64_t iterations_ = 0;
    std::size_t pending_ = 0;
    std::uint64_t wrong_ = 0;
    std::atomic<std::size_t> pinned_{0};  // workers running on their own CPU
};

}  // namespace clprobe

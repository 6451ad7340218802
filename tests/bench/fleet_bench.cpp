// How long `clprobe fleet` takes over N nodes' reports and how much memory it needs: writes N
// reports made from one real report (each headline and variant scaled by a node factor within
// +-2%; one node with transfers at half speed, one with another driver and kernels at half speed),
// then analyses them as `clprobe fleet` does in a child process, and prints the wall time and
// the child's peak RSS. Asserts nothing about time (speed is shown, not tested).
//   clprobe_fleet_bench [N] [REPORT.json]     default 1,000 from tests/fixtures/reports/pocl_kernel_quick.json
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "core/atomic_file.hpp"
#include "fleet/fleet_files.hpp"
#include "json/report_json.hpp"

using namespace clprobe;

namespace {

void scale(Measurement& m, double factor) {
    for (auto& s : m.samples)
        s *= factor;
    for (double* v : {&m.summary.min, &m.summary.max, &m.summary.median, &m.summary.mean, &m.summary.stddev,
                      &m.summary.ci95_low, &m.summary.ci95_high})
        *v *= factor;
}

// A deterministic factor in [1 - spread, 1 + spread] for node i.
double jitter(std::size_t i, double spread) {
    const auto h = (i * 2654435761u) % 1000;
    return 1 + spread * (static_cast<double>(h) / 500.0 - 1);
}

RunReport node_report(const RunReport& base, std::size_t i) {
    RunReport r = base;
    r.host.hostname = "node" + std::to_string(i);
    const double f = jitter(i, 0.02);
    for (auto& p : r.results)
        for (auto& m : p.measurements) {
            if (m.timer == TimerKind::none) continue;
            double factor = f;
            const bool rate = m.higher_is_better;
            if (i == 7 && p.layer == "transfer") factor *= rate ? 0.5 : 2;  // a degraded link
            if (i == 13 && p.layer == "kernel") factor *= rate ? 0.5 : 2;   // another driver, slower
            scale(m, factor);
        }
    if (i == 13 && r.device) r.device->driver_version += "-other";
    return r;
}

std::vector<std::string> write_reports(const RunReport& base, std::size_t n, const std::filesystem::path& dir) {
    std::vector<std::string> paths;
    for (std::size_t i = 0; i < n; ++i) {
        paths.push_back((dir / ("node" + std::to_string(i) + ".json")).string());
        write_file_atomically(paths.back(), report_to_json_text(node_report(base, i)));
    }
    return paths;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// In a child, so that its peak RSS is the analysis's alone, not the generator's.
int analyse_in_child(const std::vector<std::string>& paths) {
    const pid_t pid = ::fork();
    if (pid < 0) return 1;
    if (pid == 0) {
        const auto t = std::chrono::steady_clock::now();
        const FleetAnalysis f = analyze_fleet_files(paths);
        const double s = seconds_since(t);
        std::printf(
            "analysed %zu reports in %.2f s (%.2f ms each): %zu metrics, %zu outliers (%zu worse), %zu "
            "findings on some nodes, %zu not paired\n",
            paths.size(), s, 1000 * s / static_cast<double>(paths.size()), f.metrics.size(), f.outliers.size(),
            f.worse_outliers(), f.partial_findings.size(), f.unpaired.size());
        std::fflush(stdout);
        ::_exit(f.nodes == paths.size() ? 0 : 2);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    // CPU time too: on a shared machine the wall time depends on what else runs.
    const double cpu = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                       static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
    std::printf("analysis: CPU time %.2f s on up to %u threads, peak RSS %ld MiB\n", cpu,
                std::min(8u, std::max(1u, std::thread::hardware_concurrency())), usage.ru_maxrss / 1024);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

}  // namespace

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000;
    const std::string fixture = argc > 2 ? argv[2] : CLPROBE_FIXTURES "/reports/pocl_kernel_quick.json";
    const RunReport base = report_from_json_text(read_file(fixture, max_report_bytes));
    const char* tmp = std::getenv("TMPDIR");
    const auto dir =
        std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("clprobe-fleet-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    auto t = std::chrono::steady_clock::now();
    const auto paths = write_reports(base, n, dir);
    std::printf("wrote %zu reports of %.0f KiB each from %s in %.2f s\n", n,
                static_cast<double>(std::filesystem::file_size(paths.front())) / 1024, fixture.c_str(),
                seconds_since(t));
    std::fflush(stdout);
    const int rc = analyse_in_child(paths);
    std::filesystem::remove_all(dir);
    return rc;
}

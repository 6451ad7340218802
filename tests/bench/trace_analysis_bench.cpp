// How long clprobe takes to read and analyse a large trace, and how much memory it needs: writes a
// synthetic record file of N commands (kernels with waits, transfers, allocations, as a busy
// program would leave), then reads, analyses and ranks it as `clprobe trace` does, timing each
// step. Prints figures; asserts nothing about time (CLAUDE: speed is shown, not tested).
//   clprobe_trace_bench [COMMANDS] [FILE]      default 1,000,000 commands in $TMPDIR
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "rules/analysis.hpp"
#include "rules/trace_rules.hpp"
#include "trace/trace_analysis.hpp"
#include "trace/trace_reader.hpp"

using namespace clprobe;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// A program of `n` commands: four kernels of different names, a write every 4th command, a wait
// every 8th, a buffer created and released every 64th; device times 5 us apart.
void write_records(const std::string& path, std::uint64_t n) {
    std::ofstream out(path, std::ios::binary);
    const std::uint64_t t0 = 1'000'000'000;
    out << "H\t1\t1\t" << t0 << "\nD\td1\tcpu\tSynthetic\tSynthetic device\nQ\t" << t0 << "\tq1\td1\t0\t1\n";
    out << "P\t" << t0 << "\tp1\tsource\tabc\t100\nB\t" << t0 << '\t' << t0 + 1000 << "\tp1\tbuild\t0\t1\n";
    for (int k = 0; k < 4; ++k)
        out << "K\tk" << k << "\tp1\tkernel_" << k << '\n';
    for (std::uint64_t i = 1; i <= n; ++i) {
        const std::uint64_t t = t0 + 10'000 + i * 5'000;
        if (i % 64 == 0) out << "M\t" << t << '\t' << t + 50 << "\tm" << i << "\t1048576\t1\tbuffer\t0\n";
        if (i % 4 == 0)
            out << "E\t" << i << '\t' << t << '\t' << t + 800 << "\t1\tq1\twrite\t0\t4096\t0\tpageable\t-\t-\t0\t0\tm"
                << (i / 64) * 64 << '\n';
        else
            out << "E\t" << i << '\t' << t << '\t' << t + 800 << "\t1\tq1\tkernel\tk" << i % 4
                << "\t1048576\t0\tnone\t1024,1,1\t64,1,1\t1\t0\t0\n";
        out << "T\t" << i << '\t' << t + 400 << '\t' << t + 900 << '\t' << t + 1000 << '\t' << t + 4000 << "\t0\n";
        if (i % 8 == 0) out << "W\t" << t + 900 << '\t' << t + 4100 << "\t1\tfinish\tq1\n";
        if (i % 64 == 32) out << "R\t" << t << '\t' << t + 20 << "\tm" << (i / 64) * 64 << '\n';
    }
    out << "X\t" << t0 + 20'000 + (n + 1) * 5'000 << '\n';
}

long peak_rss_mib() {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_maxrss / 1024;
}

}  // namespace

int main(int argc, char** argv) {
    const std::uint64_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
    const char* tmp = std::getenv("TMPDIR");
    const std::string path = argc > 2 ? argv[2] : std::string(tmp && *tmp ? tmp : "/tmp") + "/clprobe-bench.trace";
    write_records(path, n);
    const auto bytes = std::filesystem::file_size(path);

    auto t = std::chrono::steady_clock::now();
    const auto trace = read_program_trace_file(path);
    const double read_s = seconds_since(t);
    if (!trace || trace->commands.size() != n) {
        std::fprintf(stderr, "clprobe_trace_bench: read %zu commands of %llu\n", trace ? trace->commands.size() : 0,
                     static_cast<unsigned long long>(n));
        return 1;
    }
    ChildRun run;
    run.start_ns = 1'000'000'000;
    run.end_ns = run.start_ns + 30'000 + (n + 2) * 5'000;
    run.exit_code = 0;
    t = std::chrono::steady_clock::now();
    TraceAnalysis analysis = analyse_trace(*trace, run, BandwidthRoofs{std::nullopt, 20.0});
    const double analyse_s = seconds_since(t);
    RunReport report;
    report.results.push_back(program_probe_result(std::move(analysis)));
    t = std::chrono::steady_clock::now();
    analyze(report);
    const double rules_s = seconds_since(t);
    std::printf("commands %llu, records file %.1f MiB\n", static_cast<unsigned long long>(n),
                double(bytes) / (1 << 20));
    std::printf("read %.2f s, analyse %.2f s, rules %.3f s, total %.2f s, peak RSS %ld MiB, findings %zu\n", read_s,
                analyse_s, rules_s, read_s + analyse_s + rules_s, peak_rss_mib(), report.findings.size());
    if (argc <= 2) std::filesystem::remove(path);
    return 0;
}

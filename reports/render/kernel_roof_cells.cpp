#include "render/kernel_roof_cells.hpp"

#include <fmt/core.h>

#include <iterator>

#include "core/kernel_roofs.hpp"
#include "core/memory_roofs.hpp"
#include "render/value_format.hpp"

namespace clprobe {

namespace {

// Above this a fraction of a roof cannot be a rate the kernel reached (app_measurements' bound).
constexpr double impossible = 1.05;

// 268435456 FLOP -> "268 MFLOP": three significant digits and an SI prefix.
std::string count_text(double amount, const char* unit) {
    constexpr const char* prefixes[] = {"", "k", "M", "G", "T", "P"};
    std::size_t p = 0;
    while (amount >= 999.5 && p + 1 < std::size(prefixes)) {
        amount /= 1000;
        ++p;
    }
    return units::sig3(amount) + " " + prefixes[p] + unit;
}

std::string work_text(const KernelWorkFacts& w) {
    std::string out;
    const auto add = [&](double amount, const char* unit, const char* what) {
        if (amount <= 0) return;
        out += (out.empty() ? "" : ", ") + count_text(amount, unit) + (what[0] ? std::string(" ") + what : "");
    };
    add(w.flops_fp16, "FLOP", "fp16");
    add(w.flops_fp32, "FLOP", "fp32");
    add(w.flops_fp64, "FLOP", "fp64");
    add(w.int_ops, "op", "int");
    add(w.global_bytes(), "B", "moved");
    std::string how;
    if (w.method == "sampled") how = fmt::format("sampled {} of {} groups", w.groups_counted, w.groups_total);
    if (w.like_share < 0.9)
        how += fmt::format("{}a launch of {} work-items, {:.0f}% of its device time", how.empty() ? "" : "; ",
                           w.global_items, 100 * w.like_share);
    return (out.empty() ? std::string("no counted work") : out) + " per launch" + (how.empty() ? "" : " (" + how + ")");
}

std::string estimate_text(const KernelFacts& k, const RunReport& report) {
    if (k.bytes <= 0 || k.seconds <= 0 || k.launches == 0) return {};
    const double gbs = k.bytes / k.seconds * 1e-9;
    const auto roof = bandwidth_roofs_of(report.results)
                          .for_working_set(static_cast<std::uint64_t>(k.bytes / static_cast<double>(k.launches)));
    std::string out = fmt::format("~{} by its arguments' sizes", units::format(gbs, "GB/s"));
    if (roof && roof->gb_per_s > 0) {
        const double fraction = gbs / roof->gb_per_s;
        out += fraction > impossible
                   ? fmt::format(" (above the {} roof: not bytes it moved)", roof->level)
                   : fmt::format(", {:.1f}% of the {} roof if it moved them once", 100 * fraction, roof->level);
    }
    return out;
}

}  // namespace

KernelRoofCells kernel_roof_cells(const TraceFacts& f, const RunReport& report, const KernelFacts& k) {
    KernelRoofCells cells;
    const KernelWorkFacts* w = find_work(f.work, k.name);
    if (!w || !w->counted) {
        cells.work = w ? "work not counted: " + w->reason : "";
        cells.roofs = estimate_text(k, report);
        return cells;
    }
    cells.counted = true;
    cells.work = work_text(*w);
    const auto placement =
        place_kernel(*w, compute_roofs_of(report.results), bandwidth_roofs_of(report.results, RoofSample::fastest),
                     k.launches ? k.bytes / static_cast<double>(k.launches) : 0);
    if (!placement) {
        cells.roofs = "no roof measured for its work";
        return cells;
    }
    for (std::size_t i = 0; i < placement->parts.size(); ++i) {
        const RoofPart& p = placement->parts[i];
        cells.roofs +=
            fmt::format("{}{} {}{:.3g}%{}", cells.roofs.empty() ? "" : ", ", to_string(p.kind),
                        w->upper_bound ? "at most " : "", 100 * p.fraction, i == placement->binding ? " (binds)" : "");
    }
    if (w->upper_bound) cells.roofs += " (counted from an unoptimised build: upper bounds)";
    return cells;
}

}  // namespace clprobe

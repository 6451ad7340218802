#pragma once
// One traced kernel's work and roofs as the reports print them (text and HTML kernel tables): its
// counted work per launch, the fraction of each roof it meets with the binding one marked, or —
// for a kernel whose work was not counted — its arguments' bytes over its time, labelled as the
// estimate it is, and never as a fraction of a roof above 1.
#include <string>

#include "core/report.hpp"
#include "core/trace_facts.hpp"

namespace clprobe {

struct KernelRoofCells {
    std::string work;   // "268 MFLOP fp32, 2.10 MB loaded and stored per launch", or "not counted: ..."
    std::string roofs;  // "fp32 6.7% (binds), memory 0.4%, cache 12%", or the estimate
    bool counted = false;
};

KernelRoofCells kernel_roof_cells(const TraceFacts& facts, const RunReport& report, const KernelFacts& kernel);

}  // namespace clprobe

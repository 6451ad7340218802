#pragma once
// How far to trust a report's numbers: the conditions that make them less reliable (a busy
// machine, stolen time, clocks below their maximum, noisy or few samples, the host clock instead of
// device timestamps, an interrupted run). Pure. The analysis stores them in RunReport::trust_notes
// (rules/analysis.cpp); renderers show the stored notes first and never compute them.
#include <string>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

// The notes in a fixed order, each with a stable id (docs/report-schema.md, "Trust notes").
std::vector<TrustNote> assess_trust(const RunReport& report);

}  // namespace clprobe

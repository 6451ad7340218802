#pragma once
// The report's two lists: ranked findings, whose gain is a share of a step measured in this run,
// and notes (device and machine traits, hypothetical gains, triggers inside the noise), which keep
// their factor and no gain. Pure; analyze() runs both steps after the pipeline shares are applied.
#include <vector>

#include "core/report.hpp"

namespace clprobe {

// Gains closer than this (absolute, 0..1) are a tie: on a shared 2-core machine the measured
// shares of one finding moved by up to 5 points between back-to-back runs, so a band of twice that
// keeps an order that noise decided from flipping from run to run.
inline constexpr double gain_tie = 0.10;
// A tie group chains gains each within gain_tie of the one before, up to this far below its first.
inline constexpr double gain_tie_span = 0.20;

// Sets each finding's kind. Ranked: measured_share, a gain, and a trigger outside the noise.
// Everything else is a note: a hypothetical gain becomes a factor (1 / (1 - gain)) when the rule
// gave none, and the gain is dropped; gain_basis says why the finding is not ranked.
void classify_findings(std::vector<Finding>& findings);

// Orders in place: ranked findings first, by gain, with each tie group (gains each within gain_tie
// of the one before, all within gain_tie_span of the first) ordered by severity, then factor
// (larger first), then gain, then id; ranks 1..n. Then the notes by severity, factor and id, rank
// 0. Deterministic for any input order.
void rank_findings(std::vector<Finding>& findings);

}  // namespace clprobe

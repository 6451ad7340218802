#pragma once
// Between-run noise: how far the figures of one machine and build move from one run to the next,
// measured from repeated runs of the baseline (compare --baseline-repeat). Within one run a probe's
// samples are taken within seconds, in one state of a shared machine; the next run catches another
// state, so a figure's own spread (cv) understates how far it moves between runs. On the 2-vCPU VM
// two back-to-back runs of one build moved memory-level figures by up to 2.4x while each run's
// spread was a few percent. Repeats measure that movement instead of guessing it.
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/report.hpp"

namespace clprobe {

// A metric's family: its first two dotted parts ("glm.gradient" for glm.gradient.time), the
// figures one probe measures. A family pools its metrics' ratios, so one repeat gives as many
// ratios as the family has figures.
std::string noise_family(std::string_view metric);

struct FamilyNoise {
    double sigma_log = 0;  // root mean square of ln(ratio) over the family's figures and run pairs
    int ratios = 0;        // how many ratios it pools
};

struct BetweenRunNoise {
    int runs = 0;  // runs of A's machine and build, A included
    // A change is called only beyond z sigma of its family's movement: for normally distributed
    // log ratios, 1.2% of same-machine figures lie beyond 2.5 sigma.
    double z = 2.5;
    std::map<std::string, FamilyNoise> families;
    // expm1(z * sigma) of the metric's family: the relative change the movement between runs
    // reaches; nullopt when the repeats measured no figure of that family.
    std::optional<double> band_for(std::string_view metric) const;
};

// Pure: pools (metric id, ln(ratio)) pairs into families.
BetweenRunNoise noise_from_log_ratios(const std::vector<std::pair<std::string, double>>& log_ratios, int runs);

// Compares every pair of the given runs (A first, then its repeats) as compare does, without
// between-run noise, and pools the ratios of the timed figures that each pair judged (disturbed
// figures and facts left out).
BetweenRunNoise measure_between_runs(const std::vector<const RunReport*>& runs, double threshold);

}  // namespace clprobe

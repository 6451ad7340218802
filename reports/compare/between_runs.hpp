#pragma once
// Between-run noise: how far the figures of one machine and build move from one run to the next,
// measured from repeated runs of the baseline (compare --baseline-repeat). Within one run a probe's
// samples are taken within seconds, in one state of a shared machine; the next run catches another
// state, so a figure's own spread (cv) understates how far it moves between runs. On the 2-vCPU VM
// two back-to-back runs of one build moved memory-level figures by up to 2.4x while each run's
// spread was a few percent. Repeats measure that movement instead of guessing it.
#include <map>
#include <memory>
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

// One figure: a metric id with its labels ("glm.gradient.time{layout=row,vector=8}").
std::string figure_key(std::string_view metric, const Labels& labels);

struct FamilyNoise {
    double sigma_log = 0;  // root mean square of ln(ratio) over the family's figures and run pairs
    int ratios = 0;        // how many ratios it pools
};

// One ln(B/A) of a pair of A's runs.
struct LogRatio {
    std::string metric;
    std::string figure;  // figure_key; the metric id alone where labels are not known
    double value = 0;
};

struct BetweenRunNoise {
    int runs = 0;  // runs of A's machine and build, A included
    // A change is called only beyond z sigma of its movement. For normally distributed log ratios
    // 0.27% of same-machine figures lie beyond 3 sigma, but this VM's ratios have heavy tails (2x
    // compute phases): on 12 same-machine comparisons with two repeats, 2.5 sigma called 1.9% of
    // the timed figures and tripped the gate once (an FMA ceiling measured in a slow phase), and
    // called a decode figure beside a planted GLM kernel; 3 sigma called 1.5%, never tripped the
    // gate and still caught the planted kernel and the lost compute unit every time.
    double z = 3.0;
    // How many ratios the family's sigma counts for in a figure's own: a prior worth two pairs of
    // runs. One figure's few ratios (three from two repeats) are a noisy estimate on their own;
    // the family's alone lets its noisiest members (a near-zero fraction, a cache-sized variant
    // moving 3x) set the band of its steady headline figures.
    double family_weight = 2;
    std::map<std::string, FamilyNoise> families;
    std::map<std::string, FamilyNoise> figures;  // by figure_key
    // Each run's median of a timed figure (by figure_key), A's first: the baseline's value is the
    // median of these (baseline_median), so one run of A caught in a slow or fast state of the
    // machine does not set what B is held against.
    std::map<std::string, std::vector<double>> medians;
    std::map<std::string, std::vector<double>> bests;  // each run's faster-half median (best_and_gap)
    // The movement between earlier separate runs of A's host, device and options (compare's
    // movement cache), and where it was measured ("5 earlier runs of this device and options (...)");
    // null and empty when none is known. Every sigma is at least its: passes of one run meet one
    // state of the machine and can read narrower than separate runs move (a planted GLM kernel's run
    // called a steady attention workload slower as a whole against two passes of one baseline).
    std::shared_ptr<const BetweenRunNoise> known_floor;
    std::string known_from;
    // The median of the runs' medians of a figure, when every run measured it; nullopt otherwise.
    std::optional<double> baseline_median(std::string_view metric, const Labels& labels) const;
    // The same over the runs' best values, what a ceiling compares.
    std::optional<double> baseline_best(std::string_view metric, const Labels& labels) const;
    // The sigma of one figure: its own mean square of ln ratios and its family's, weighted by
    // their counts (own ratios, family_weight); the family's alone where the figure has none.
    std::optional<double> sigma_for(std::string_view metric, const Labels& labels) const;
    // expm1(z * sigma_for): the relative change the movement between runs reaches; nullopt when
    // the repeats measured no figure of that family.
    std::optional<double> band_for(std::string_view metric, const Labels& labels = {}) const;
    // Each family's sigma, the larger of the measured and the known one where both exist.
    std::map<std::string, double> family_sigmas() const;

  private:
    // The sigma measured in A's own runs alone (the weighing above), without the known floor.
    std::optional<double> measured_sigma(std::string_view metric, const Labels& labels) const;
};

// `measured` (A's own runs: passes and repeats; nullopt when A is a single run) with every sigma at
// least the known movement's, which says where it came from. A single run gets the known movement
// alone (runs 1: A is its own baseline).
BetweenRunNoise with_known_movement(std::optional<BetweenRunNoise> measured, BetweenRunNoise known,
                                    std::string known_from);

// Pure: pools ln(ratio)s into figures and families.
BetweenRunNoise noise_from_log_ratios(const std::vector<LogRatio>& log_ratios, int runs);
// The same, each ratio its own metric's figure (no labels).
BetweenRunNoise noise_from_log_ratios(const std::vector<std::pair<std::string, double>>& log_ratios, int runs);

// Compares every pair of the given runs (A first, then its repeats) as compare does, without
// between-run noise, and pools the ratios of the timed figures that each pair judged (disturbed
// figures and facts left out).
BetweenRunNoise measure_between_runs(const std::vector<const RunReport*>& runs, double threshold);

}  // namespace clprobe

#include "compare/between_runs.hpp"

#include <algorithm>
#include <cmath>

#include "compare/comparison.hpp"

namespace clprobe {

std::string noise_family(std::string_view metric) {
    const size_t first = metric.find('.');
    if (first == std::string_view::npos) return std::string(metric);
    const size_t second = metric.find('.', first + 1);
    return std::string(metric.substr(0, second));
}

std::string figure_key(std::string_view metric, const Labels& labels) {
    std::string key(metric);
    if (labels.empty()) return key;
    char sep = '{';
    for (const auto& [k, v] : labels) {
        key += sep;
        key += k;
        key += '=';
        key += v;
        sep = ',';
    }
    return key + '}';
}

std::optional<double> BetweenRunNoise::sigma_for(std::string_view metric, const Labels& labels) const {
    const std::optional<double> known = known_floor ? known_floor->sigma_for(metric, labels) : std::nullopt;
    const std::optional<double> measured = measured_sigma(metric, labels);
    if (known && measured) return std::max(*known, *measured);
    return measured ? measured : known;
}

std::map<std::string, double> BetweenRunNoise::family_sigmas() const {
    std::map<std::string, double> out;
    if (known_floor) out = known_floor->family_sigmas();
    for (const auto& [family, f] : families)
        if (f.ratios > 0) out[family] = std::max(out[family], f.sigma_log);
    return out;
}

BetweenRunNoise with_known_movement(std::optional<BetweenRunNoise> measured, BetweenRunNoise known,
                                    std::string known_from) {
    BetweenRunNoise out = measured ? std::move(*measured) : BetweenRunNoise{};
    if (!measured) out.runs = 1;
    known.medians.clear();  // A's own runs are its baseline, never the earlier runs
    known.bests.clear();
    out.known_floor = std::make_shared<const BetweenRunNoise>(std::move(known));
    out.known_from = std::move(known_from);
    return out;
}

std::optional<double> BetweenRunNoise::measured_sigma(std::string_view metric, const Labels& labels) const {
    const auto fam = families.find(noise_family(metric));
    if (fam == families.end() || fam->second.ratios == 0) return std::nullopt;
    const double family_square = fam->second.sigma_log * fam->second.sigma_log;
    const auto own = figures.find(figure_key(metric, labels));
    if (own == figures.end() || own->second.ratios == 0) return fam->second.sigma_log;
    const double n = own->second.ratios;
    const double own_square = own->second.sigma_log * own->second.sigma_log;
    return std::sqrt((n * own_square + family_weight * family_square) / (n + family_weight));
}

namespace {

// The median of one figure's values over the runs, when every run has one.
std::optional<double> median_over_runs(const std::map<std::string, std::vector<double>>& values, int runs,
                                       std::string_view metric, const Labels& labels) {
    const auto it = values.find(figure_key(metric, labels));
    if (it == values.end() || runs < 2 || static_cast<int>(it->second.size()) != runs) return std::nullopt;
    std::vector<double> v = it->second;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

std::optional<double> BetweenRunNoise::baseline_median(std::string_view metric, const Labels& labels) const {
    return median_over_runs(medians, runs, metric, labels);
}

std::optional<double> BetweenRunNoise::baseline_best(std::string_view metric, const Labels& labels) const {
    return median_over_runs(bests, runs, metric, labels);
}

std::optional<double> BetweenRunNoise::band_for(std::string_view metric, const Labels& labels) const {
    const auto sigma = sigma_for(metric, labels);
    if (!sigma) return std::nullopt;
    return std::expm1(z * *sigma);
}

BetweenRunNoise noise_from_log_ratios(const std::vector<LogRatio>& log_ratios, int runs) {
    BetweenRunNoise noise;
    noise.runs = runs;
    std::map<std::string, double> family_squares, figure_squares;
    for (const auto& r : log_ratios) {
        if (!std::isfinite(r.value)) continue;
        const std::string family = noise_family(r.metric);
        family_squares[family] += r.value * r.value;
        ++noise.families[family].ratios;
        figure_squares[r.figure] += r.value * r.value;
        ++noise.figures[r.figure].ratios;
    }
    for (auto& [family, f] : noise.families)
        f.sigma_log = std::sqrt(family_squares[family] / f.ratios);
    for (auto& [figure, f] : noise.figures)
        f.sigma_log = std::sqrt(figure_squares[figure] / f.ratios);
    return noise;
}

BetweenRunNoise noise_from_log_ratios(const std::vector<std::pair<std::string, double>>& log_ratios, int runs) {
    std::vector<LogRatio> ratios;
    for (const auto& [metric, l] : log_ratios)
        ratios.push_back({metric, metric, l});
    return noise_from_log_ratios(ratios, runs);
}

BetweenRunNoise measure_between_runs(const std::vector<const RunReport*>& runs, double threshold) {
    CompareOptions options;
    options.threshold = threshold;
    // Only the ratios are used; the bootstrap interval of each is not.
    options.bootstrap_resamples = 1;
    std::vector<LogRatio> log_ratios;
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j) {
            const Comparison c = compare_reports(*runs[i], *runs[j], options);
            for (const auto& m : c.metrics) {
                const bool judged =
                    m.verdict == Verdict::faster || m.verdict == Verdict::slower || m.verdict == Verdict::within_noise;
                if (m.fact || !judged || !m.median_a || !m.median_b || m.ratio <= 0) continue;
                log_ratios.push_back({m.metric, figure_key(m.metric, m.labels), std::log(m.ratio)});
            }
        }
    BetweenRunNoise noise = noise_from_log_ratios(log_ratios, static_cast<int>(runs.size()));
    for (const RunReport* run : runs)
        for (const auto& result : run->results)
            for (const auto& m : result.measurements)
                if (m.timer != TimerKind::none && !m.samples.empty() && m.summary.median > 0) {
                    const std::string key = figure_key(m.metric, m.labels);
                    noise.medians[key].push_back(m.summary.median);
                    noise.bests[key].push_back(best_and_gap(m.samples, m.higher_is_better).first);
                }
    return noise;
}

}  // namespace clprobe

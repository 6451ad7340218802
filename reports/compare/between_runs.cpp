#include "compare/between_runs.hpp"

#include <cmath>

#include "compare/comparison.hpp"

namespace clprobe {

std::string noise_family(std::string_view metric) {
    const size_t first = metric.find('.');
    if (first == std::string_view::npos) return std::string(metric);
    const size_t second = metric.find('.', first + 1);
    return std::string(metric.substr(0, second));
}

std::optional<double> BetweenRunNoise::band_for(std::string_view metric) const {
    const auto it = families.find(noise_family(metric));
    if (it == families.end() || it->second.ratios == 0) return std::nullopt;
    return std::expm1(z * it->second.sigma_log);
}

BetweenRunNoise noise_from_log_ratios(const std::vector<std::pair<std::string, double>>& log_ratios, int runs) {
    BetweenRunNoise noise;
    noise.runs = runs;
    std::map<std::string, double> squares;
    for (const auto& [metric, l] : log_ratios) {
        if (!std::isfinite(l)) continue;
        const std::string family = noise_family(metric);
        squares[family] += l * l;
        ++noise.families[family].ratios;
    }
    for (auto& [family, f] : noise.families)
        f.sigma_log = std::sqrt(squares[family] / f.ratios);
    return noise;
}

BetweenRunNoise measure_between_runs(const std::vector<const RunReport*>& runs, double threshold) {
    CompareOptions options;
    options.threshold = threshold;
    // Only the ratios are used; the bootstrap interval of each is not.
    options.bootstrap_resamples = 1;
    std::vector<std::pair<std::string, double>> log_ratios;
    for (size_t i = 0; i < runs.size(); ++i)
        for (size_t j = i + 1; j < runs.size(); ++j) {
            const Comparison c = compare_reports(*runs[i], *runs[j], options);
            for (const auto& m : c.metrics) {
                const bool judged =
                    m.verdict == Verdict::faster || m.verdict == Verdict::slower || m.verdict == Verdict::within_noise;
                if (m.fact || !judged || !m.median_a || !m.median_b || m.ratio <= 0) continue;
                log_ratios.emplace_back(m.metric, std::log(m.ratio));
            }
        }
    return noise_from_log_ratios(log_ratios, static_cast<int>(runs.size()));
}

}  // namespace clprobe

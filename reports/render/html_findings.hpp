#pragma once
// The findings of the HTML report as cards: one line per finding with its rank, gain bar,
// severity, confidence and title, then its id, evidence and suggestion. Where the rank order
// departs from the gains (a tie group ordered by severity, rules/ranking.hpp) the page says so.
#include <string>

#include "core/report.hpp"

namespace clprobe::html {

std::string findings_section(const RunReport& report);

}  // namespace clprobe::html

#pragma once
// How big a finding is, as every report renderer prints it: a ranked finding's gain ("12%"), or a
// note's factor ("27x"); a note never shows a gain.
#include <string>

#include "core/report.hpp"

namespace clprobe {

struct FindingSize {
    enum class Kind { gain, factor, none };
    Kind kind = Kind::none;
    std::string value;  // "12%", "27x"; empty for none

    // A table's Gain/Factor cell (Markdown, HTML): the value, or "n/a".
    std::string cell() const { return value.empty() ? "n/a" : value; }
};

FindingSize finding_size(const Finding& finding);

}  // namespace clprobe

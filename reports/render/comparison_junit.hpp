#pragma once
// compare --junit FILE: the gate's verdicts as JUnit XML, which CI systems show as test results
// (GitLab's test reports, Jenkins' JUnit plugin, GitHub's test reporters): one test case for the
// machine's drift reference, one per headline metric and one per workload family, failed exactly
// where --fail-on-regression fails, with the evidence as the failure's message.
#include <string>

#include "compare/comparison.hpp"

namespace clprobe {

struct JunitNames {
    std::string a, b;  // the reports' paths, as given
};

std::string render_comparison_junit(const Comparison& c, const JunitNames& names);

// Text as XML character data or an attribute value: &, <, >, " and ' escaped, and characters XML
// 1.0 does not allow (control characters but tab, newline, carriage return) replaced by '?'.
std::string xml_escape(std::string_view text);

}  // namespace clprobe

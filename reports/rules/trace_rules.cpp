#include "rules/trace_rules.hpp"

namespace clprobe {

std::vector<Rule> trace_program_rules();  // trace_program_rules.cpp
std::vector<Rule> trace_data_rules();     // trace_data_rules.cpp
std::vector<Rule> trace_job_rules();      // trace_job_rules.cpp

bool is_trace_report(const RunReport& report) {
    return find_result(report, trace_probe_id) != nullptr;
}

std::vector<Rule> trace_rules() {
    std::vector<Rule> rules = trace_program_rules();
    for (auto& r : trace_data_rules())
        rules.push_back(std::move(r));
    for (auto& r : trace_job_rules())
        rules.push_back(std::move(r));
    return rules;
}

}  // namespace clprobe

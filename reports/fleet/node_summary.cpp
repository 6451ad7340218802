#include "fleet/node_summary.hpp"

#include <algorithm>

#include "compare/metric_key.hpp"

namespace clprobe {

std::string device_key(const RunReport& r) {
    return r.device ? r.device->type + ": " + r.device->name : "no device";
}

NodeSummary summarize_node(const RunReport& r, std::string source) {
    NodeSummary s;
    s.source = std::move(source);
    s.node = r.host.hostname.empty() ? s.source : r.host.hostname;
    if (r.launch) s.node += "/" + r.launch->rank;
    s.device = device_key(r);
    s.environment = node_environment_of(r);
    for (const auto& p : r.results) {
        if (p.status != ProbeStatus::ok) continue;
        for (const auto& m : p.measurements)
            if (is_headline(m) && m.summary.median > 0)
                s.headlines.emplace(m.metric,
                                    HeadlineFigure{m.unit, m.higher_is_better, m.summary.median, m.summary.cv});
    }
    for (const auto& f : r.findings)
        s.findings.push_back(f.id);
    std::sort(s.findings.begin(), s.findings.end());
    s.findings.erase(std::unique(s.findings.begin(), s.findings.end()), s.findings.end());
    s.economics = workload_economics(r);
    return s;
}

}  // namespace clprobe

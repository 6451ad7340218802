#include "render/comparison_junit.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <map>

#include "compare/between_runs.hpp"
#include "core/workloads.hpp"

namespace clprobe {

namespace {

struct TestCase {
    std::string classname;  // clprobe.machine, clprobe.headline, clprobe.workload
    std::string name;
    std::string failure;  // empty: passed
    std::string output;   // what was compared, passed or not
};

std::string figures(const MetricComparison& m) {
    const auto value = [](const std::optional<double>& v) { return v ? fmt::format("{:.4g}", *v) : std::string("-"); };
    return fmt::format("{}: A {}, B {} {} (x{:.3f}; a change counts beyond {:.1f}%; {})",
                       labelled_metric(m.metric, m.labels), value(m.baseline_median ? m.baseline_median : m.median_a),
                       value(m.median_b), m.unit, m.ratio, 100 * m.band, to_string(m.verdict));
}

void add_machine(const Comparison& c, std::vector<TestCase>& out) {
    if (!c.machine) return;
    for (const auto& s : c.machine->shifts) {
        TestCase t{"clprobe.machine", "drift reference (" + s.series + ")", {}, describe(s)};
        if (!c.machine->shift_is_driver && s.verdict == Verdict::slower) t.failure = "the machine " + describe(s);
        out.push_back(std::move(t));
    }
}

// Failed exactly where the gate fails (Comparison::headline_regressions): a share of a roof called
// slower is shown in its test case's output and passes, as it does not fail the gate.
void add_headlines(const Comparison& c, std::vector<TestCase>& out) {
    const auto regressions = c.headline_regressions();
    for (const auto& m : c.metrics) {
        if (!m.headline || m.fact) continue;
        TestCase t{"clprobe.headline", m.metric, {}, figures(m)};
        if (std::find(regressions.begin(), regressions.end(), &m) != regressions.end()) t.failure = figures(m);
        out.push_back(std::move(t));
    }
}

// Every workload family the two runs measured, failed where its variants were slower together.
void add_families(const Comparison& c, std::vector<TestCase>& out) {
    std::map<std::string, std::size_t> measured;  // family -> timed figures compared
    for (const auto& m : c.metrics)
        if (!m.fact && is_workload_id(m.metric)) ++measured[noise_family(m.metric)];
    const auto regressions = c.family_regressions();
    for (const auto& [family, count] : measured) {
        TestCase t{"clprobe.workload", family, {}, fmt::format("{} figures compared", count)};
        for (const auto& f : regressions)
            if (f.family == family) {
                t.failure = fmt::format("{}: {} variants slower, none faster", family, f.variants);
                for (const auto* m : f.slower)
                    t.failure += "\n" + figures(*m);
            }
        out.push_back(std::move(t));
    }
}

std::string first_line(const std::string& text) {
    return text.substr(0, text.find('\n'));
}

}  // namespace

std::string xml_escape(std::string_view text) {
    std::string out;
    for (const char ch : text) {
        const auto u = static_cast<unsigned char>(ch);
        switch (ch) {
            case '&':
                out += "&amp;";
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '"':
                out += "&quot;";
                break;
            case '\'':
                out += "&apos;";
                break;
            default:
                out += (u < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') || u == 0x7f ? '?' : ch;
        }
    }
    return out;
}

std::string render_comparison_junit(const Comparison& c, const JunitNames& names) {
    std::vector<TestCase> cases;
    add_machine(c, cases);
    add_headlines(c, cases);
    add_families(c, cases);
    std::size_t failures = 0;
    for (const auto& t : cases)
        failures += t.failure.empty() ? 0 : 1;
    const std::string suite = fmt::format("clprobe compare {} {}", names.a, names.b);
    std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    out += fmt::format("<testsuites name=\"clprobe compare\" tests=\"{}\" failures=\"{}\" errors=\"0\">\n",
                       cases.size(), failures);
    out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"0\">\n",
                       xml_escape(suite), cases.size(), failures);
    out += "    <properties>\n";
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"baseline", names.a},
                                      {"candidate", names.b},
                                      {"threshold", fmt::format("{:g}", c.threshold)},
                                      {"baseline_runs", std::to_string(c.baseline_runs)},
                                      {"candidate_runs", std::to_string(c.candidate_runs)},
                                      {"movement_known_from", c.movement_known_from}})
        out += fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", name, xml_escape(value));
    out += "    </properties>\n";
    for (const auto& t : cases) {
        out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"0\">\n", t.classname, xml_escape(t.name));
        if (!t.failure.empty())
            out += fmt::format("      <failure type=\"regression\" message=\"{}\">{}</failure>\n",
                               xml_escape(first_line(t.failure)), xml_escape(t.failure));
        out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(t.output));
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

}  // namespace clprobe

// docs/findings.md against the rules' declarations (RuleSpec): every rule has a section, each
// section names the rule's inputs and states its thresholds, and every documented id is a rule.
// The declarations are the single source; this test keeps the reference from drifting.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "rules/analysis.hpp"

using namespace clprobe;

namespace {

std::string read_findings_doc() {
    std::ifstream in(std::string(CLPROBE_DOCS) + "/findings.md");
    REQUIRE(in);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// id -> its section's text, from "### `id`" up to the next heading.
std::map<std::string, std::string> sections_by_id(const std::string& doc) {
    std::map<std::string, std::string> sections;
    const std::regex heading(R"(^#{2,3} .*$)", std::regex::multiline);
    const std::regex rule_heading(R"(^### `([a-z0-9_.]+)`)");
    std::vector<std::pair<std::size_t, std::string>> starts;  // offset, heading line
    for (auto it = std::sregex_iterator(doc.begin(), doc.end(), heading); it != std::sregex_iterator(); ++it)
        starts.emplace_back(static_cast<std::size_t>(it->position()), it->str());
    for (std::size_t i = 0; i < starts.size(); ++i) {
        std::smatch m;
        if (!std::regex_search(starts[i].second, m, rule_heading)) continue;
        const std::size_t end = i + 1 < starts.size() ? starts[i + 1].first : doc.size();
        sections[m[1]] = doc.substr(starts[i].first, end - starts[i].first);
    }
    return sections;
}

// The threshold's text as a number of its own (not the "3" inside "0.35" or "30").
bool states(const std::string& section, const RuleThreshold& threshold) {
    const std::string text = std::regex_replace(threshold.text(), std::regex(R"([.%])"), R"(\$&)");
    return std::regex_search(section, std::regex("(^|[^0-9.])" + text + "([^0-9]|\\.[^0-9]|$)"));
}

}  // namespace

TEST_CASE("findings doc: each declared rule has a section naming its inputs and thresholds", "[rules][docs]") {
    const auto sections = sections_by_id(read_findings_doc());
    for (const auto& rule : all_rules()) {
        INFO("rule " << rule.id);
        const auto it = sections.find(rule.id);
        REQUIRE(it != sections.end());
        for (const auto& input : rule.inputs)
            for (const auto& name : input.names) {
                INFO("input " << name);
                CHECK(it->second.find(name) != std::string::npos);
            }
        for (const auto& threshold : rule.thresholds) {
            INFO("threshold " << threshold.name << " = " << threshold.text());
            CHECK(states(it->second, threshold));
        }
    }
}

TEST_CASE("findings doc: every documented id is a declared rule", "[rules][docs]") {
    std::set<std::string> declared;
    for (const auto& rule : all_rules())
        declared.insert(rule.id);
    for (const auto& [id, section] : sections_by_id(read_findings_doc())) {
        INFO("documented id " << id);
        CHECK(declared.count(id) == 1);
    }
}

TEST_CASE("findings doc: the checks catch a missing input and a wrong threshold", "[rules][docs]") {
    const std::string section = "### `x.y`\n- **Trigger**: `a.b` >= 1.25x and 500 ms, or 5%.\n";
    CHECK(states(section, {"ratio", 1.25}));
    CHECK(states(section, {"ms", 500}));
    CHECK(states(section, {"share", 0.05, true}));
    CHECK_FALSE(states(section, {"ratio", 1.2}));  // a prefix of 1.25
    CHECK_FALSE(states(section, {"ratio", 25}));   // inside 1.25
    CHECK_FALSE(states(section, {"ms", 50}));      // inside 500
    const auto parsed = sections_by_id(section + "## Next\nkernel.z\n");
    REQUIRE(parsed.count("x.y") == 1);
    CHECK(parsed.at("x.y").find("kernel.z") == std::string::npos);
}

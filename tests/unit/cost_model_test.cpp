// The cost model and the best / best value / cheapest choice on hand-built reports: throughput
// and cost from the fastest variant's step time, energy summed over non-overlapping scopes, and
// choices that rest on a missing price said so.
#include <catch2/catch.hpp>

#include "compare/machine_choice.hpp"
#include "core/cost_model.hpp"
#include "json/machine_choice_json.hpp"
#include "json/report_json.hpp"
#include "render/machine_choice_html.hpp"

using namespace clprobe;

namespace {

// A report whose glm.pipeline has two variants (serial 0.02 s, resident 0.01 s) and, optionally,
// the resident step's energy on a package and a DRAM sensor, plus a platform sensor.
RunReport glm_report(std::optional<double> per_hour, std::optional<double> per_kwh, bool energy) {
    RunReport r;
    record_prices(r.options, {per_hour, per_kwh});
    ProbeResult p;
    p.id = "glm.pipeline";
    p.measurements.push_back(make_measurement("glm.pipeline.step_time", "s", {{"variant", "serial_pageable"}},
                                              {0.02, 0.02, 0.02}, TimerKind::host_steady_clock, false));
    p.measurements.push_back(make_measurement("glm.pipeline.step_time", "s", {{"variant", "resident"}},
                                              {0.01, 0.01, 0.01}, TimerKind::host_steady_clock, false));
    if (energy) {
        const auto add = [&](const char* variant, const char* sensor, const char* scope, double j) {
            p.measurements.push_back(make_measurement("glm.pipeline.step_energy", "J",
                                                      {{"variant", variant}, {"sensor", sensor}, {"scope", scope}},
                                                      {j, j, j}, TimerKind::host_steady_clock, false));
        };
        add("resident", "intel-rapl:0", "cpu package 0", 0.5);
        add("resident", "intel-rapl:0:0", "dram package 0", 0.1);
        add("resident", "intel-rapl:1", "platform", 0.9);
        add("serial_pageable", "intel-rapl:0", "cpu package 0", 1.2);
    }
    r.results.push_back(std::move(p));
    return r;
}

}  // namespace

TEST_CASE("workload_economics: the fastest variant, its energy and its cost", "[cost]") {
    const auto all = workload_economics(glm_report(3.6, std::nullopt, true));
    REQUIRE(all.size() == 1);
    const auto& e = all[0];
    CHECK(e.variant == "resident");
    CHECK(e.throughput == Approx(100));  // steps per second
    REQUIRE(e.joules_per_step);
    CHECK(*e.joules_per_step == Approx(0.6));  // package + dram; the platform covers both
    CHECK(e.energy_scope == "cpu package 0 + dram package 0");
    REQUIRE(e.cost_per_million);
    CHECK(*e.cost_per_million == Approx(3.6 * 0.01 / 3600 * 1e6));  // $10 per million steps
    CHECK(*e.units_per_dollar == Approx(1e5));
    CHECK(*e.cost_per_hour == Approx(3.6));
}

TEST_CASE("workload_economics: billed by energy adds the measured joules; without energy no cost", "[cost]") {
    const auto with = workload_economics(glm_report(3.6, 0.36, true));
    REQUIRE(with[0].cost_per_million);
    // $10 of machine time plus 0.6 J x 1e6 steps = 0.1667 kWh at $0.36.
    CHECK(*with[0].cost_per_million == Approx(10 + 0.36 * 0.6 * 1e6 / 3.6e6));
    const auto without = workload_economics(glm_report(3.6, 0.36, false));
    CHECK_FALSE(without[0].cost_per_million);
    CHECK_THAT(without[0].cost_basis, Catch::Contains("no energy was measured"));
    const auto unpriced = workload_economics(glm_report(std::nullopt, std::nullopt, false));
    CHECK_FALSE(unpriced[0].cost_per_million);
    CHECK_THAT(unpriced[0].cost_basis, Catch::Contains("no price given"));
    CHECK_FALSE(unpriced[0].joules_per_step);
}

TEST_CASE("prices_of: absent, null or negative prices are no price", "[cost]") {
    RunReport r;
    CHECK_FALSE(prices_of(r).any());
    r.options["price_per_hour"] = -1.0;
    r.options["energy_price_per_kwh"] = nullptr;
    CHECK_FALSE(prices_of(r).any());
    r.options["price_per_hour"] = 2.5;
    CHECK(prices_of(r).per_hour == 2.5);
}

TEST_CASE("choose_machines: best, best value, cheapest; a missing price is said", "[cost]") {
    // A: $3.6/h; B: same speed at $1/h; C: no price, half the step time.
    RunReport c = glm_report(std::nullopt, std::nullopt, false);
    c.results[0].measurements[1] = make_measurement("glm.pipeline.step_time", "s", {{"variant", "resident"}},
                                                    {0.005, 0.005, 0.005}, TimerKind::host_steady_clock, false);
    const auto choices = choose_machines({{"a", workload_economics(glm_report(3.6, std::nullopt, true))},
                                          {"b", workload_economics(glm_report(1.0, std::nullopt, false))},
                                          {"c", workload_economics(c)}});
    REQUIRE(choices.size() == 1);
    const auto& w = choices[0];
    REQUIRE(w.rows.size() == 3);
    CHECK(w.rows[*w.best].name == "c");
    CHECK(w.rows[*w.best_value].name == "b");
    CHECK(w.rows[*w.cheapest].name == "b");
    REQUIRE(w.caveats.size() == 3);
    CHECK_THAT(w.caveats[0].text, Catch::StartsWith("best value rests on the others: c left out (no price given"));
    CHECK(w.caveats[0].choice == "best value");
    CHECK(w.caveats[0].left_out == std::vector<std::string>{"c"});
    CHECK(w.caveats[0].chosen_among_rest);
    CHECK_THAT(w.caveats[0].reason, Catch::StartsWith("no price given"));
    CHECK_THAT(w.caveats[1].text, Catch::StartsWith("cheapest rests on the others: c left out"));
    CHECK(w.caveats[2].choice == "energy");
    CHECK((w.caveats[2].left_out == std::vector<std::string>{"b", "c"}));
    CHECK_THAT(w.caveats[2].text, Catch::Contains("energy: not measured on b, c"));
    const std::string text = render_machine_choices(choices);
    CHECK_THAT(text, Catch::Contains("best:       c (highest throughput)"));
    CHECK_THAT(text, Catch::Contains("best value: b (most steps per dollar)"));
    CHECK_THAT(text, Catch::Contains("0.6 J/step"));
}

TEST_CASE("choose_machines: nothing measured, nothing chosen", "[cost]") {
    CHECK(choose_machines({{"a", {}}, {"b", {}}}).empty());
    CHECK(render_machine_choices({}).empty());
}

TEST_CASE("choose_machines: no report priced, nothing chosen for value or cost, and said so", "[cost]") {
    const auto choices = choose_machines({{"a", workload_economics(glm_report(std::nullopt, std::nullopt, false))},
                                          {"b", workload_economics(glm_report(std::nullopt, std::nullopt, false))}});
    REQUIRE(choices.size() == 1);
    CHECK(choices[0].best);
    CHECK_FALSE(choices[0].best_value);
    CHECK_FALSE(choices[0].cheapest);
    REQUIRE(choices[0].caveats.size() == 2);  // no energy caveat: neither measured it
    CHECK_FALSE(choices[0].caveats[0].chosen_among_rest);
    CHECK_THAT(choices[0].caveats[0].text, Catch::StartsWith("best value not chosen: a, b left out"));
}

TEST_CASE("machine_choices_to_json: rows with their figures, picks by index and name, caveats as data", "[cost]") {
    // a: $3.6/h with energy; b: $1/h without: b is the best value and the cheapest, a the best (a tie
    // in throughput goes to the first).
    const auto choices = choose_machines({{"a.json", workload_economics(glm_report(3.6, std::nullopt, true))},
                                          {"b.json", workload_economics(glm_report(1.0, std::nullopt, false))}});
    const nlohmann::json j = machine_choices_to_json(choices);
    REQUIRE(j.is_array());
    REQUIRE(j.size() == 1);
    const auto& w = j[0];
    CHECK(w["workload"] == "glm");
    CHECK(w["unit"] == "step");
    REQUIRE(w["reports"].size() == 2);
    const auto& a = w["reports"][0];
    CHECK(a["report"] == "a.json");
    CHECK(a["variant"] == "resident");
    CHECK(a["throughput"].get<double>() == Approx(100));
    CHECK(a["cost_per_million"].get<double>() == Approx(10));
    CHECK(a["cost_per_hour"].get<double>() == Approx(3.6));
    CHECK(a["joules_per_step"].get<double>() == Approx(0.6));
    CHECK(a["joules_per_unit"].get<double>() == Approx(0.6));
    CHECK(a["energy_scope"] == "cpu package 0 + dram package 0");
    const auto& b = w["reports"][1];
    CHECK(b["cost_per_million"].get<double>() == Approx(1.0 * 0.01 / 3600 * 1e6));
    CHECK(b["joules_per_step"].is_null());
    CHECK(b["energy_scope"].is_null());
    CHECK(w["best"]["index"] == 0);
    CHECK(w["best"]["report"] == "a.json");
    CHECK(w["best_value"]["report"] == "b.json");
    CHECK(w["best_value"]["why"] == "most steps per dollar");
    CHECK(w["cheapest"]["index"] == 1);
    REQUIRE(w["caveats"].size() == 1);
    CHECK(w["caveats"][0]["choice"] == "energy");
    CHECK(w["caveats"][0]["left_out"] == nlohmann::json::array({"b.json"}));
    CHECK(w["caveats"][0]["chosen_among_rest"] == true);
    CHECK(machine_choices_to_json({}) == nlohmann::json::array());
}

TEST_CASE("machine choice views: Markdown and HTML carry the rows, the choices and the caveats", "[cost]") {
    const auto choices = choose_machines({{"a|1", workload_economics(glm_report(3.6, std::nullopt, true))},
                                          {"<b>", workload_economics(glm_report(std::nullopt, std::nullopt, false))}});
    const std::string md = render_machine_choices_markdown(choices);
    CHECK_THAT(md, Catch::Contains("## Choosing a machine for glm (in steps, each report's fastest variant)"));
    CHECK_THAT(md, Catch::Contains("| `a\\|1` | 100 steps/s | 100k | $10 | $3.6 | 0.6 J/step |"));
    CHECK_THAT(md, Catch::Contains("| `<b>` | 100 steps/s | n/a | n/a | n/a | n/a |"));
    CHECK_THAT(md, Catch::Contains("- **best value**: `a\\|1` (most steps per dollar)"));
    CHECK_THAT(md, Catch::Contains("- note: best value rests on the others: <b> left out (no price given"));
    const std::string html = render_machine_choices_html(choices);
    CHECK_THAT(html, Catch::Contains("<h2>Choosing a machine for glm"));
    CHECK_THAT(html, Catch::Contains("<code>&lt;b&gt;</code>"));
    CHECK_THAT(html, Catch::Contains("<li><b>cheapest</b>: <code>a|1</code> (lowest cost per hour)</li>"));
    CHECK_THAT(html, Catch::Contains("<p class=warn>cheapest rests on the others: &lt;b&gt; left out"));
    CHECK(render_machine_choices_markdown({}).empty());
    CHECK(render_machine_choices_html({}).empty());
}

TEST_CASE("report JSON: the cost a dashboard reads is written beside the price, and not read back", "[cost][json]") {
    const nlohmann::json j = report_to_json(glm_report(3.6, std::nullopt, true));
    REQUIRE(j.contains("economics"));
    REQUIRE(j.at("economics").size() == 1);
    const auto& e = j.at("economics")[0];
    CHECK(e.at("workload") == "glm");
    CHECK(e.at("pipeline") == "glm.pipeline");
    CHECK(e.at("variant") == "resident");
    CHECK(e.at("cost_per_million").get<double>() == Approx(10));
    CHECK(e.at("joules_per_step").get<double>() == Approx(0.6));
    // Without a price: the throughput, and a null cost with the reason.
    const auto free = report_to_json(glm_report(std::nullopt, std::nullopt, false)).at("economics")[0];
    CHECK(free.at("cost_per_million").is_null());
    CHECK(free.at("throughput").get<double>() == Approx(100));
    CHECK_FALSE(free.at("cost_basis").get<std::string>().empty());
    // No workload pipeline: no block.
    CHECK_FALSE(report_to_json(RunReport{}).contains("economics"));
}

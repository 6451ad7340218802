#include "compare/machine_choice.hpp"

#include <fmt/core.h>

#include <algorithm>

namespace clprobe {

namespace {

std::string names_of(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

// The index of the row with the largest key(row) among rows that have one; the rows without are
// listed in `missing`.
template <typename Key>
std::optional<std::size_t> pick(const std::vector<ChoiceRow>& rows, Key key, bool largest,
                                std::vector<std::string>& missing) {
    std::optional<std::size_t> chosen;
    std::optional<double> chosen_value;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::optional<double> v = key(rows[i].figures);
        if (!v) {
            missing.push_back(rows[i].name);
            continue;
        }
        if (!chosen_value || (largest ? *v > *chosen_value : *v < *chosen_value)) {
            chosen = i;
            chosen_value = v;
        }
    }
    return chosen;
}

std::string si(double v) {
    if (v >= 1e9) return fmt::format("{:.3g}G", v / 1e9);
    if (v >= 1e6) return fmt::format("{:.3g}M", v / 1e6);
    if (v >= 1e3) return fmt::format("{:.3g}k", v / 1e3);
    return fmt::format("{:.3g}", v);
}

std::string money(double usd) {
    return usd >= 0.01 ? fmt::format("${:.3g}", usd) : fmt::format("${:.2e}", usd);
}

// Energy per step for GLM; per 1,000 tokens for attention, the figure serving is priced in.
std::string energy_text(const WorkloadEconomics& e) {
    if (!e.joules_per_step) return "n/a";
    if (e.unit == "token") return fmt::format("{:.3g} J/1k tokens", *e.joules_per_step / e.units_per_step * 1000);
    return fmt::format("{:.3g} J/step", *e.joules_per_step);
}

std::string units_of(const WorkloadChoice& c) {
    return c.unit + "s";
}

}  // namespace

std::vector<WorkloadChoice> choose_machines(const std::vector<MachineFigures>& machines) {
    std::vector<WorkloadChoice> out;
    for (const char* workload : {"glm", "attention"}) {
        WorkloadChoice c;
        c.workload = workload;
        for (const auto& m : machines)
            for (const auto& e : m.workloads)
                if (e.workload == workload) {
                    c.unit = e.unit;
                    c.rows.push_back({m.name, e});
                }
        if (c.rows.empty()) continue;
        std::vector<std::string> no_time, no_value, no_hourly;
        c.best = pick(
            c.rows, [](const WorkloadEconomics& e) { return std::optional<double>(e.throughput); }, true, no_time);
        c.best_value = pick(
            c.rows, [](const WorkloadEconomics& e) { return e.units_per_dollar; }, true, no_value);
        c.cheapest = pick(
            c.rows, [](const WorkloadEconomics& e) { return e.cost_per_hour; }, false, no_hourly);
        const auto caveat = [&](const char* choice, const std::vector<std::string>& missing,
                                const std::optional<std::size_t>& chosen) {
            if (missing.empty()) return;
            // The first left-out report's cost basis says which figure it lacks (a price, or the
            // energy an energy-billed machine needs).
            std::string why;
            for (const auto& row : c.rows)
                if (std::find(missing.begin(), missing.end(), row.name) != missing.end()) {
                    why = row.figures.cost_basis;
                    break;
                }
            c.caveats.push_back({choice, missing, why, chosen.has_value(),
                                 fmt::format("{} {}: {} left out ({})", choice,
                                             chosen ? "rests on the others" : "not chosen", names_of(missing), why)});
        };
        caveat("best value", no_value, c.best_value);
        caveat("cheapest", no_hourly, c.cheapest);
        std::vector<std::string> no_energy;
        for (const auto& row : c.rows)
            if (!row.figures.joules_per_step) no_energy.push_back(row.name);
        if (!no_energy.empty() && no_energy.size() < c.rows.size())
            c.caveats.push_back({"energy", no_energy, "no readable sensor", true,
                                 fmt::format("energy: not measured on {} (no readable sensor), so energy is compared "
                                             "only among the others",
                                             names_of(no_energy))});
        out.push_back(std::move(c));
    }
    return out;
}

ChoiceCells choice_cells(const WorkloadChoice& c, const ChoiceRow& row) {
    const WorkloadEconomics& e = row.figures;
    return {si(e.throughput) + " " + units_of(c) + "/s",
            e.units_per_dollar ? si(*e.units_per_dollar) : std::string("n/a"),
            e.cost_per_million ? money(*e.cost_per_million) : std::string("n/a"),
            e.cost_per_hour ? money(*e.cost_per_hour) : std::string("n/a"), energy_text(e)};
}

std::vector<ChoiceLine> choice_lines(const WorkloadChoice& c) {
    return {{"best", c.best, "highest throughput"},
            {"best value", c.best_value, "most " + units_of(c) + " per dollar"},
            {"cheapest", c.cheapest, "lowest cost per hour"}};
}

std::string choice_heading(const WorkloadChoice& c) {
    return fmt::format("Choosing a machine for {} (in {}, each report's fastest variant)", c.workload, units_of(c));
}

std::string render_machine_choices(const std::vector<WorkloadChoice>& choices) {
    std::string out;
    for (const auto& c : choices) {
        const std::string units = units_of(c);
        out += fmt::format("\n{}:\n", choice_heading(c));
        std::size_t width = 6;
        for (const auto& row : c.rows)
            width = std::max(width, row.name.size());
        out += fmt::format("  {:<{}}  {:>16}  {:>16}  {:>14}  {:>10}  {}\n", "report", width, "throughput",
                           units + " per $", "$ per 1M " + units, "$ per hour", "energy");
        for (const auto& row : c.rows) {
            const ChoiceCells cells = choice_cells(c, row);
            out += fmt::format("  {:<{}}  {:>16}  {:>16}  {:>14}  {:>10}  {}\n", row.name, width, cells.throughput,
                               cells.per_dollar, cells.per_million, cells.per_hour, cells.energy);
        }
        for (const ChoiceLine& l : choice_lines(c))
            out += fmt::format("  {:<11} {}\n", l.label + ":",
                               l.row ? fmt::format("{} ({})", c.rows[*l.row].name, l.why) : "none (no figures)");
        for (const auto& caveat : c.caveats)
            out += fmt::format("  note: {}\n", caveat.text);
    }
    return out;
}

std::string render_machine_choices_markdown(const std::vector<WorkloadChoice>& choices) {
    // Report names are file paths or host names: a '|' in one would split its cell.
    const auto cell = [](std::string s) {
        std::string out;
        for (char ch : s)
            out += ch == '|' ? std::string("\\|") : std::string(1, ch);
        return out;
    };
    std::string out;
    for (const auto& c : choices) {
        const std::string units = units_of(c);
        out += fmt::format("\n## {}\n\n", choice_heading(c));
        out += fmt::format("| report | throughput | {} per $ | $ per 1M {} | $ per hour | energy |\n", units, units);
        out += "|---|---|---|---|---|---|\n";
        for (const auto& row : c.rows) {
            const ChoiceCells cells = choice_cells(c, row);
            out += fmt::format("| `{}` | {} | {} | {} | {} | {} |\n", cell(row.name), cells.throughput,
                               cells.per_dollar, cells.per_million, cells.per_hour, cells.energy);
        }
        out += "\n";
        for (const ChoiceLine& l : choice_lines(c))
            out += fmt::format(
                "- **{}**: {}\n", l.label,
                l.row ? fmt::format("`{}` ({})", cell(c.rows[*l.row].name), l.why) : std::string("none (no figures)"));
        for (const auto& caveat : c.caveats)
            out += fmt::format("- note: {}\n", caveat.text);
    }
    return out;
}

}  // namespace clprobe

#include "render/machine_choice_html.hpp"

#include <fmt/core.h>

#include "render/html_page.hpp"
#include "render/svg_chart.hpp"

namespace clprobe {

std::string render_machine_choices_html(const std::vector<WorkloadChoice>& choices) {
    using svg::escape;
    std::string out;
    for (const auto& c : choices) {
        const std::string units = c.unit + "s";
        out += fmt::format("<h2>{}</h2>\n", escape(choice_heading(c)));
        std::string rows;
        for (const auto& row : c.rows) {
            const ChoiceCells cells = choice_cells(c, row);
            rows += fmt::format(
                "<tr><td><code>{}</code></td><td class=num>{}</td><td class=num>{}</td><td class=num>{}</td>"
                "<td class=num>{}</td><td class=num>{}</td></tr>\n",
                escape(row.name), escape(cells.throughput), escape(cells.per_dollar), escape(cells.per_million),
                escape(cells.per_hour), escape(cells.energy));
        }
        out += html::scroll_table(fmt::format("<tr><th>report</th><th>throughput</th><th>{} per $</th><th>$ per 1M "
                                              "{}</th><th>$ per hour</th><th>energy</th></tr>",
                                              escape(units), escape(units)),
                                  rows);
        out += "<ul>\n";
        for (const ChoiceLine& l : choice_lines(c))
            out += fmt::format("<li><b>{}</b>: {}</li>\n", escape(l.label),
                               l.row ? fmt::format("<code>{}</code> ({})", escape(c.rows[*l.row].name), escape(l.why))
                                     : std::string("none (no figures)"));
        out += "</ul>\n";
        for (const auto& caveat : c.caveats)
            out += fmt::format("<p class=warn>{}</p>\n", escape(caveat.text));
    }
    return out;
}

}  // namespace clprobe

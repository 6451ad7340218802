#include "render/html_page.hpp"

#include <fmt/core.h>

#include "render/svg_chart.hpp"

namespace clprobe::html {

namespace {

constexpr const char* style = R"(
*{box-sizing:border-box}
body{font-family:system-ui,sans-serif;margin:0 auto;padding:16px 20px;max-width:1280px;color:#222;line-height:1.4}
h1{font-size:22px;margin-bottom:4px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin-bottom:4px}
.scroll{overflow-x:auto;max-width:100%}pre{overflow-x:auto;max-width:100%;font-size:12px}
.worse{color:#b00}.better{color:#070}.devbar{display:inline-block;height:.8em;background:#69c;vertical-align:middle}
.devbar.out{background:#c33}
table{border-collapse:collapse;margin:8px 0;font-size:13px}td,th{border:1px solid #ddd;padding:3px 7px;vertical-align:top}
th{background:#f4f4f4;text-align:left}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.ok{color:#1a7f37}.error{color:#c62828}.unsupported,.skipped{color:#a66a00}.meta{color:#555;font-size:13px}
.warn{background:#fff4e5;border-left:4px solid #e69f00;padding:6px 10px;margin:4px 0}
.good{background:#eef8f0;border-left:4px solid #1a7f37;padding:6px 10px;margin:4px 0}
code{background:#f4f4f4;padding:0 3px;overflow-wrap:anywhere}
figure.chart{margin:8px 0 16px;max-width:100%}
svg.plot{display:block;max-width:100%;height:auto}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;max-height:9em;overflow:auto;font-size:12px;margin-top:4px;padding:2px 0}
.legend span{display:inline-flex;align-items:center;gap:4px;white-space:nowrap}
ol.findings{list-style:none;padding:0;margin:8px 0}
.finding{border:1px solid #ddd;border-left:5px solid #999;border-radius:4px;margin:6px 0;padding:6px 10px}
.finding.sev-critical{border-left-color:#b71c1c}.finding.sev-high{border-left-color:#d55e00}
.finding.sev-medium{border-left-color:#e69f00}.finding.sev-low{border-left-color:#56b4e9}
.fhead{display:grid;grid-template-columns:2.6em 9.5em 4.6em 6.8em minmax(0,1fr);gap:8px;align-items:center}
.rank{font-weight:bold;font-size:15px}
.gainbar{display:flex;align-items:center;gap:6px;font-variant-numeric:tabular-nums;font-weight:bold;white-space:nowrap}
.gainbar .track{flex:1;height:10px;background:#eee;border-radius:2px;overflow:hidden;min-width:40px}
.gainbar .fill{display:block;height:100%;background:#0072b2}
.sev{font-size:12px;text-transform:uppercase;letter-spacing:.03em;white-space:nowrap}
.conf{font-size:12px;color:#555;white-space:nowrap}
.ftitle{font-weight:600}
.fid{font-size:12px;color:#555;margin-top:2px}.fid code{overflow-wrap:normal;white-space:nowrap}
.fbody{font-size:13px;margin-top:4px}.fbody ul{margin:2px 0;padding-left:18px}
.tie{font-size:12px;color:#7a4d00;background:#fff8e6;padding:2px 6px;margin:4px 0 0;border-radius:3px}
.tiegroup{border-left:3px dotted #e69f00;padding-left:8px;margin:8px 0}
table.key td{padding:1px 6px}
td.sharecell{min-width:11em;width:28%}.legend a{font-size:12px}
.pair{display:grid;grid-template-columns:repeat(auto-fit,minmax(280px,1fr));gap:4px 16px}.pair h3{font-size:13px}
svg.timeline,svg.zoomed{min-width:640px}.legend span[data-gap]{white-space:normal;flex-wrap:wrap}
td.strip{white-space:nowrap}td.metric{min-width:13em}svg.strip{vertical-align:middle;margin-right:4px}
@media (max-width:640px){body{padding:8px}.fhead{grid-template-columns:2.6em minmax(0,1fr) auto}
.fhead .ftitle{grid-column:1/-1}.fhead .conf{grid-column:span 2}}
)";

}  // namespace

std::string page_start(std::string_view title) {
    return fmt::format(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{}</style>"
        "</head><body>\n",
        svg::escape(title), style);
}

std::string page_end() {
    return "</body></html>\n";
}

std::string scroll_table(std::string_view header_row, std::string_view rows) {
    return fmt::format("<div class=\"scroll\"><table>{}\n{}</table></div>\n", header_row, rows);
}

}  // namespace clprobe::html

#pragma once
// The frame every HTML page shares (report, trace and fleet): one style sheet, no scripts. The
// layout fits 1,000-1,600 px screens and a phone's width: charts scale down, wide tables scroll
// inside their own box, never the page.
#include <string>
#include <string_view>

namespace clprobe::html {

// "<!DOCTYPE html>...<body>" with the shared style sheet and the title.
std::string page_start(std::string_view title);
std::string page_end();

// A table wrapped in a box that scrolls sideways on its own when the screen is narrower.
std::string scroll_table(std::string_view header_row, std::string_view rows);

}  // namespace clprobe::html

#pragma once
// What every renderer of a report may be asked for; each renderer reads the fields that apply to
// it and ignores the rest, so that all share one signature (render/report_formats.hpp).

namespace clprobe {

struct RenderOptions {
    bool verbose = false;  // every variant's measurement, not only headlines (text, Markdown)
    bool color = false;    // ANSI colour (text); the CLI enables it only on a terminal without NO_COLOR
};

}  // namespace clprobe

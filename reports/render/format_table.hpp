#pragma once
// A table of the formats something renders to, written once for every such table (the report's
// in render/report_formats.hpp, the fleet's in render/fleet_formats.hpp): one row per format, one
// renderer signature, and what the CLI needs of it: a row by name, the names for a CLI11
// validator, and the list spelt out for --help.
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/text.hpp"
#include "render/render_options.hpp"

namespace clprobe {

template <class Subject>
struct OutputFormat {
    using Renderer = std::string (*)(const Subject& subject, const RenderOptions& options);
    std::string_view name;         // the --format value
    std::string_view description;  // what it is for, in --help
    Renderer render;
};

template <class Subject>
class FormatTable {
  public:
    using Row = OutputFormat<Subject>;
    // `what` names the table in the message of an unknown name ("no report format 'pdf'").
    constexpr FormatTable(std::span<const Row> rows, std::string_view what) : rows_(rows), what_(what) {}

    // Every row, the default first.
    std::span<const Row> rows() const { return rows_; }

    // The row called `name`; throws std::out_of_range for any other name (the CLI checks names
    // against names() before they get here).
    const Row& find(std::string_view name) const {
        for (const Row& row : rows_)
            if (row.name == name) return row;
        throw std::out_of_range("no " + std::string(what_) + " format '" + std::string(name) + "'");
    }

    std::vector<std::string> names() const {
        std::vector<std::string> out;
        for (const Row& row : rows_)
            out.emplace_back(row.name);
        return out;
    }

    // "text (the terminal report), md (Markdown, for a ticket) or json (...)".
    std::string help() const {
        std::vector<std::string> items;
        for (const Row& row : rows_)
            items.push_back(std::string(row.name) + " (" + std::string(row.description) + ")");
        return text::sentence_list(items, " or ");
    }

  private:
    std::span<const Row> rows_;
    std::string_view what_;
};

}  // namespace clprobe

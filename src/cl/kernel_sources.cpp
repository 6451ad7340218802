#include "cl/kernel_sources.hpp"

#include <algorithm>
#include <stdexcept>
#include <string_view>

#include "cl/embedded_kernels.hpp"
#include "core/atomic_file.hpp"

namespace clprobe {

KernelSources KernelSources::embedded() {
    return KernelSources{};
}

KernelSources KernelSources::from_directory(const std::filesystem::path& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec))
        throw std::runtime_error("--kernel-dir '" + dir.string() + "' is not a folder");
    KernelSources s;
    s.dir_ = dir;
    if (s.files().empty()) throw std::runtime_error("--kernel-dir '" + dir.string() + "' holds no .cl files");
    return s;
}

namespace {

// The file named by a line `#include "path"`, if the line is one.
std::optional<std::string> include_target(std::string_view line) {
    constexpr std::string_view directive = "#include \"";
    if (line.substr(0, directive.size()) != directive) return std::nullopt;
    const auto end = line.find('"', directive.size());
    if (end == std::string_view::npos) return std::nullopt;
    return std::string(line.substr(directive.size(), end - directive.size()));
}

}  // namespace

std::string KernelSources::source(const std::string& relative_path) const {
    std::string text = raw_source(relative_path);
    if (text.find("#include \"") == std::string::npos) return text;
    std::string out;
    std::size_t line_number = 0;
    for (std::size_t pos = 0; pos < text.size();) {
        const std::size_t end = std::min(text.find('\n', pos), text.size());
        const std::string_view line(text.data() + pos, end - pos);
        ++line_number;
        if (const auto target = include_target(line)) {
            // One level deep (a part includes nothing); #line keeps build logs on this file's lines.
            out += raw_source(*target);
            out += "\n#line " + std::to_string(line_number + 1) + "\n";
        } else {
            out.append(line);
            out += '\n';
        }
        pos = end + 1;
    }
    return out;
}

std::string KernelSources::raw_source(const std::string& relative_path) const {
    if (dir_) {
        const auto path = *dir_ / relative_path;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec))
            throw std::runtime_error("kernel file '" + path.string() + "' not found");
        return read_file(path, 16u << 20);
    }
    for (const auto& k : embedded::kernels())
        if (relative_path == k.path) return k.source;
    throw std::runtime_error("kernel '" + relative_path + "' is not embedded in this clprobe");
}

std::vector<std::string> KernelSources::files() const {
    std::vector<std::string> out;
    if (dir_) {
        std::error_code ec;
        for (auto it = std::filesystem::recursive_directory_iterator(*dir_, ec);
             !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
            if (it->is_regular_file() && it->path().extension() == ".cl")
                out.push_back(std::filesystem::relative(it->path(), *dir_).generic_string());
    } else {
        for (const auto& k : embedded::kernels())
            if (std::filesystem::path(k.path).extension() == ".cl") out.emplace_back(k.path);
    }
    std::sort(out.begin(), out.end());
    return out;
}

std::string KernelSources::origin() const {
    return dir_ ? dir_->string() : "embedded";
}

}  // namespace clprobe

#include "core/program_plan.hpp"

#include <algorithm>
#include <stdexcept>

namespace clprobe {

std::vector<ProgramNeed> unique_programs(const std::vector<ProgramNeed>& needs) {
    std::vector<ProgramNeed> out;
    for (const auto& n : needs)
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    return out;
}

std::vector<std::vector<ProgramNeed>> share_programs(const std::vector<ProgramNeed>& programs, unsigned workers) {
    const std::size_t n = std::min<std::size_t>(workers, programs.size());
    std::vector<std::vector<ProgramNeed>> shares(n);
    for (std::size_t i = 0; i < programs.size() && n > 0; ++i)
        shares[i % n].push_back(programs[i]);
    return shares;
}

std::string program_argument(const ProgramNeed& need) {
    return need.file + "\n" + need.options;
}

ProgramNeed parse_program_argument(const std::string& argument) {
    const std::size_t nl = argument.find('\n');
    if (nl == std::string::npos || nl == 0)
        throw std::invalid_argument("not a program argument (file, newline, options): '" + argument + "'");
    return {argument.substr(0, nl), argument.substr(nl + 1)};
}

}  // namespace clprobe

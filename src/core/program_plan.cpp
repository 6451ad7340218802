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

std::vector<BuilderShare> plan_builders(const std::vector<ProgramNeed>& programs,
                                        const std::vector<WarmUpGroup>& groups, unsigned workers) {
    struct Task {
        BuilderShare work;
        std::size_t weight = 0;
    };
    std::vector<Task> tasks;
    std::vector<ProgramNeed> claimed;
    const auto unclaimed = [&claimed](const ProgramNeed& need) {
        return std::find(claimed.begin(), claimed.end(), need) == claimed.end();
    };
    for (const auto& group : groups) {
        Task t;
        t.work.warm_ups = group.probe_ids;
        constexpr std::size_t per_warm_up = 4;
        t.weight = group.programs.size() + per_warm_up * group.probe_ids.size();
        for (const auto& need : unique_programs(group.programs))
            if (unclaimed(need)) {
                t.work.programs.push_back(need);
                claimed.push_back(need);
            }
        tasks.push_back(std::move(t));
    }
    for (const auto& need : unique_programs(programs))
        if (unclaimed(need)) tasks.push_back({{{need}, {}}, 1});
    std::stable_sort(tasks.begin(), tasks.end(), [](const Task& a, const Task& b) { return a.weight > b.weight; });

    std::vector<BuilderShare> shares(std::min<std::size_t>(workers, tasks.size()));
    std::vector<std::size_t> load(shares.size(), 0);
    for (const auto& t : tasks) {
        if (shares.empty()) break;
        const auto i = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        auto& share = shares[i];
        share.programs.insert(share.programs.end(), t.work.programs.begin(), t.work.programs.end());
        share.warm_ups.insert(share.warm_ups.end(), t.work.warm_ups.begin(), t.work.warm_ups.end());
        load[i] += t.weight;
    }
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

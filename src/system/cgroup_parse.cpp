#include "system/cgroup_parse.hpp"

#include <algorithm>

#include "core/text.hpp"

namespace clprobe {

namespace {

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    if (s.empty()) return out;
    while (true) {
        const auto pos = s.find(sep);
        out.emplace_back(s.substr(0, pos));
        if (pos == std::string_view::npos) break;
        s.remove_prefix(pos + 1);
    }
    return out;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape_octal(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 3 < s.size()) {
            const auto a = s[i + 1], b = s[i + 2], c = s[i + 3];
            if (a >= '0' && a <= '3' && b >= '0' && b <= '7' && c >= '0' && c <= '7') {
                out += static_cast<char>((a - '0') * 64 + (b - '0') * 8 + (c - '0'));
                i += 3;
                continue;
            }
        }
        out += s[i];
    }
    return out;
}

// "/a/b" joined under "/sys/fs/cgroup/x" without doubling slashes; "/" adds nothing.
std::string join(const std::string& base, std::string_view rel) {
    while (!rel.empty() && rel.front() == '/')
        rel.remove_prefix(1);
    if (rel.empty()) return base;
    return base + (base.empty() || base.back() != '/' ? "/" : "") + std::string(rel);
}

// The process's folder: its cgroup path made relative to what the mount shows. Without a cgroup
// namespace a container sees its host path ("/docker/abc") while the mount's root is that same
// folder; with one, both are "/".
std::string directory_of(const std::string& path, const MountEntry& m) {
    if (m.root == "/") return join(m.mount_point, path);
    if (path == m.root) return m.mount_point;
    if (text::starts_with(path, m.root) && path.size() > m.root.size() && path[m.root.size()] == '/')
        return join(m.mount_point, std::string_view(path).substr(m.root.size()));
    // The process sits outside the mounted subtree (a container that mounts only its own cgroup
    // but sees a host path): the mount point is the closest folder that describes it.
    return m.mount_point;
}

}  // namespace

std::vector<CgroupMembership> parse_proc_cgroup(std::string_view text) {
    std::vector<CgroupMembership> out;
    for (const auto raw : text::lines(text)) {
        const auto line = text::trim(raw);
        const auto c1 = line.find(':');
        if (c1 == std::string_view::npos) continue;
        const auto c2 = line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        const auto id = text::to_u64(line.substr(0, c1));
        if (!id) continue;
        CgroupMembership m;
        m.hierarchy = static_cast<int>(*id);
        m.controllers = split(line.substr(c1 + 1, c2 - c1 - 1), ',');
        m.path = std::string(line.substr(c2 + 1));  // paths may contain ':' themselves
        // A cgroup removed while we run reads "/path (deleted)".
        if (const auto del = m.path.rfind(" (deleted)"); del != std::string::npos && del + 10 == m.path.size())
            m.path.erase(del);
        if (m.path.empty() || m.path.front() != '/') continue;
        out.push_back(std::move(m));
    }
    return out;
}

std::vector<MountEntry> parse_mountinfo(std::string_view text) {
    std::vector<MountEntry> out;
    for (const auto line : text::lines(text)) {
        // id parent major:minor root mount_point options [optional fields...] - fstype source super_options
        const auto f = text::split_whitespace(line);
        const auto dash = std::find(f.begin(), f.end(), std::string_view("-"));
        if (f.size() < 7 || dash == f.end() || dash - f.begin() < 6 || f.end() - dash < 4) continue;
        MountEntry m;
        m.root = unescape_octal(f[3]);
        m.mount_point = unescape_octal(f[4]);
        m.fs_type = std::string(*(dash + 1));
        if (m.fs_type != "cgroup" && m.fs_type != "cgroup2") continue;
        m.super_options = split(*(dash + 3), ',');
        out.push_back(std::move(m));
    }
    return out;
}

std::optional<CgroupLocation> locate_cgroup(std::string_view controller, const std::vector<CgroupMembership>& groups,
                                            const std::vector<MountEntry>& mounts) {
    auto has = [&](const std::vector<std::string>& list) {
        return std::find(list.begin(), list.end(), controller) != list.end();
    };
    for (const auto& g : groups) {
        if (g.hierarchy == 0 || !has(g.controllers)) continue;
        for (const auto& m : mounts)
            if (m.fs_type == "cgroup" && has(m.super_options))
                return CgroupLocation{1, g.path, m.mount_point, directory_of(g.path, m)};
    }
    for (const auto& g : groups) {
        if (g.hierarchy != 0 || !g.controllers.empty()) continue;
        for (const auto& m : mounts)
            if (m.fs_type == "cgroup2") return CgroupLocation{2, g.path, m.mount_point, directory_of(g.path, m)};
    }
    return std::nullopt;
}

std::vector<std::string> cgroup_ancestors(const CgroupLocation& where) {
    std::vector<std::string> out;
    std::string dir = where.directory;
    while (true) {
        out.push_back(dir);
        if (dir.size() <= where.mount_point.size() || !text::starts_with(dir, where.mount_point)) break;
        const auto slash = dir.rfind('/');
        if (slash == std::string::npos || slash < where.mount_point.size()) break;
        dir.erase(slash);
    }
    return out;
}

std::optional<double> CpuBandwidth::cpus() const {
    if (!quota_us || period_us == 0) return std::nullopt;
    return static_cast<double>(*quota_us) / static_cast<double>(period_us);
}

std::optional<CpuBandwidth> parse_cpu_max(std::string_view text) {
    const auto f = text::split_whitespace(text);
    if (f.empty() || f.size() > 2) return std::nullopt;
    CpuBandwidth b;
    if (f.size() == 2) {
        const auto period = text::to_u64(f[1]);
        if (!period || *period == 0) return std::nullopt;
        b.period_us = *period;
    }
    if (f[0] != "max") {
        const auto quota = text::to_u64(f[0]);
        if (!quota) return std::nullopt;
        b.quota_us = *quota;
    }
    return b;
}

std::optional<CpuBandwidth> parse_cfs_quota(std::string_view quota, std::string_view period) {
    const auto q = text::to_i64(quota);
    const auto p = text::to_u64(period);
    if (!q || !p || *p == 0) return std::nullopt;
    CpuBandwidth b;
    b.period_us = *p;
    if (*q >= 0) b.quota_us = static_cast<std::uint64_t>(*q);
    return b;
}

std::optional<MemoryLimit> parse_memory_limit(std::string_view text) {
    text = text::trim(text);
    if (text == "max") return MemoryLimit{};
    // v1 "unlimited" is LONG_MAX rounded down to the page size; no machine has 2^62 bytes.
    constexpr std::uint64_t unlimited_from = 1ull << 62;
    if (text == "-1") return MemoryLimit{};
    const auto n = text::to_u64(text);
    if (!n) return std::nullopt;
    if (*n >= unlimited_from) return MemoryLimit{};
    return MemoryLimit{*n};
}

}  // namespace clprobe

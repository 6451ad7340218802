#include "trace/program_trace.hpp"

#include <array>
#include <iterator>
#include <utility>

namespace clprobe {

std::string_view to_string(CommandKind kind) {
    constexpr std::string_view names[] = {"kernel", "write", "read",    "copy", "fill", "map",
                                          "unmap",  "svm",   "migrate", "sync", "other"};  // CommandKind's order
    const auto i = static_cast<std::size_t>(kind);
    return i < std::size(names) ? names[i] : names[std::size(names) - 1];
}

CommandKind command_kind_of(std::string_view command) {
    static constexpr std::array<std::pair<std::string_view, CommandKind>, 22> table{{
        {"kernel", CommandKind::kernel},
        {"task", CommandKind::kernel},
        {"native_kernel", CommandKind::kernel},
        {"write", CommandKind::write},
        {"write_rect", CommandKind::write},
        {"write_image", CommandKind::write},
        {"read", CommandKind::read},
        {"read_rect", CommandKind::read},
        {"read_image", CommandKind::read},
        {"copy", CommandKind::copy},
        {"copy_rect", CommandKind::copy},
        {"copy_image", CommandKind::copy},
        {"copy_image_to_buffer", CommandKind::copy},
        {"copy_buffer_to_image", CommandKind::copy},
        {"fill", CommandKind::fill},
        {"fill_image", CommandKind::fill},
        {"map", CommandKind::map},
        {"map_image", CommandKind::map},
        {"unmap", CommandKind::unmap},
        {"migrate", CommandKind::migrate},
        {"marker", CommandKind::sync},
        {"barrier", CommandKind::sync},
    }};
    for (const auto& [name, kind] : table)
        if (name == command) return kind;
    if (command.substr(0, 4) == "svm_") return CommandKind::svm;
    return CommandKind::other;
}

bool is_transfer(CommandKind kind) {
    return kind == CommandKind::write || kind == CommandKind::read || kind == CommandKind::map;
}

std::string_view ProgramTrace::kernel_name(const TracedCommand& c) const {
    if (c.kernel < 0 || static_cast<std::size_t>(c.kernel) >= kernel_names.size()) return {};
    return kernel_names[static_cast<std::size_t>(c.kernel)];
}

int ProgramTrace::pid_of(const TracedCommand& c) const {
    const int queue_pid = c.queue < queues.size() ? queues[c.queue].pid : 0;
    return queue_pid != 0 ? queue_pid : pid;
}

}  // namespace clprobe

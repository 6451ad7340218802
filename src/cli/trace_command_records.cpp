#include "cli/trace_command_records.hpp"

#include <fcntl.h>
#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "core/atomic_file.hpp"
#include "layer/trace_format.hpp"

namespace clprobe {

namespace {

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
    throw OutputError("--records " + path + ": " + why);
}

// A file made and removed: the only check that a read-only mount or a full quota would fail.
void check_writable(const std::string& path) {
    const std::string probe = path + "/.clprobe-write-check";
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) refuse(path, std::string("cannot create a file in it: ") + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
}

// An existing folder takes records only when they stay the user's: another account that owns the
// folder, or may list or write it, could read the captured data or swap a file for a link.
void check_private(const std::string& option, const std::string& path, bool shared) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) refuse(option, std::string("cannot read its mode: ") + std::strerror(errno));
    if (shared) return;
    if (st.st_uid != ::geteuid())
        refuse(option, fmt::format("owned by another user (uid {}); records hold the program's data, so they go in "
                                   "a folder of your own (or pass --records-shared)",
                                   st.st_uid));
    const mode_t others = st.st_mode & (S_IRGRP | S_IWGRP | S_IROTH | S_IWOTH);
    if (others)
        refuse(option, fmt::format("other users may read or write it (mode {:04o}); records hold the program's "
                                   "data: `chmod go-rwx` it, name a new folder, or pass --records-shared",
                                   st.st_mode & 07777));
}

}  // namespace

RecordsFolder prepare_records_folder(const std::string& option, bool shared) {
    RecordsFolder out;
    if (option.empty()) {
        const char* tmp = std::getenv("TMPDIR");
        const std::string base = tmp && *tmp ? tmp : "/tmp";
        std::string pattern = base + "/clprobe-trace-XXXXXX";
        if (!::mkdtemp(pattern.data()))
            throw OutputError("cannot create a records folder in " + base + ": " + std::strerror(errno));
        out.path = pattern;
        out.temporary = true;
        return out;
    }
    std::error_code ec;
    out.path = std::filesystem::absolute(option, ec).lexically_normal().string();
    if (ec) refuse(option, ec.message());
    if (std::filesystem::exists(out.path, ec)) {
        if (!std::filesystem::is_directory(out.path, ec))
            refuse(option, "not a folder (the records are one file per process, in a folder)");
        check_private(option, out.path, shared);
    } else if (::mkdir(out.path.c_str(), 0700) != 0) {
        refuse(option, std::string("cannot create the folder: ") + std::strerror(errno));
    }
    check_writable(out.path);
    for (const auto& entry : std::filesystem::directory_iterator(out.path, ec))
        if (entry.path().filename().string().ends_with(trace_format::stream_suffix))
            std::filesystem::remove(entry.path(), ec);
    return out;
}

void remove_temporary(const RecordsFolder& folder) {
    if (!folder.temporary) return;
    std::error_code ec;
    std::filesystem::remove_all(folder.path, ec);
}

}  // namespace clprobe

#include "cli/trace_command_records.hpp"

#include <fcntl.h>
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
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) refuse(path, std::string("cannot create a file in it: ") + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
}

}  // namespace

RecordsFolder prepare_records_folder(const std::string& option) {
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
    } else if (!std::filesystem::create_directory(out.path, ec)) {
        refuse(option, "cannot create the folder: " + (ec ? ec.message() : std::string("unknown error")));
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

#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>

namespace clprobe {

namespace {

std::filesystem::path folder_of(const std::filesystem::path& path) {
    auto parent = path.parent_path();
    return parent.empty() ? std::filesystem::path(".") : parent;
}

std::filesystem::path temp_name_for(const std::filesystem::path& path) {
    std::random_device rd;
    const auto tag = std::to_string(::getpid()) + "." + std::to_string(rd() % 1000000);
    return folder_of(path) / ("." + path.filename().string() + ".tmp." + tag);
}

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what, int err) {
    throw OutputError("cannot write '" + path.string() + "': " + what + ": " + std::strerror(err));
}

// A path that exists and is not a regular file or a folder: a character device (/dev/null,
// /dev/stdout, a terminal), a FIFO or a socket. It is written in place: a temporary file renamed
// over it would replace the device node (as root, /dev/null itself) with a regular file.
bool is_special(const std::filesystem::path& path) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
           !std::filesystem::is_directory(status);
}

}  // namespace

void check_output_path(const std::filesystem::path& path) {
    std::error_code ec;
    if (path.empty()) throw OutputError("empty output path");
    if (std::filesystem::is_directory(path, ec))
        throw OutputError("cannot write '" + path.string() + "': it is a directory");
    if (is_special(path)) {
        if (::access(path.c_str(), W_OK) != 0) fail(path, "not writable", errno);
        return;
    }
    const auto folder = folder_of(path);
    if (!std::filesystem::is_directory(folder, ec))
        throw OutputError("cannot write '" + path.string() + "': folder '" + folder.string() + "' does not exist");
    const auto probe = temp_name_for(path);
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, "cannot create a file in '" + folder.string() + "'", errno);
    ::close(fd);
    ::unlink(probe.c_str());
}

AtomicFileWriter::AtomicFileWriter(std::filesystem::path path) : path_(std::move(path)) {
    std::error_code ec;
    if (std::filesystem::is_directory(path_, ec))
        throw OutputError("cannot write '" + path_.string() + "': it is a directory");
    in_place_ = is_special(path_);
    if (in_place_) {
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
        if (fd_ < 0) fail(path_, "cannot open", errno);
        return;
    }
    tmp_ = temp_name_for(path_);
    fd_ = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ < 0) fail(path_, "cannot create temporary file", errno);
}

AtomicFileWriter::~AtomicFileWriter() {
    abandon();
}

void AtomicFileWriter::abandon() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
}

void AtomicFileWriter::write(std::string_view piece) {
    if (fd_ < 0) throw OutputError("cannot write '" + path_.string() + "': already closed");
    std::size_t done = 0;
    while (done < piece.size()) {
        const ssize_t n = ::write(fd_, piece.data() + done, piece.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const int err = n < 0 ? errno : EIO;
            abandon();
            fail(path_, "write failed", err);
        }
        done += static_cast<std::size_t>(n);
    }
}

void AtomicFileWriter::commit() {
    if (fd_ < 0) throw OutputError("cannot write '" + path_.string() + "': already closed");
    // A block device or a network file can still refuse the data here; a pipe, a terminal or
    // /dev/null cannot be synced at all (EINVAL), which is not a failure.
    if (::fsync(fd_) != 0 && errno != EINVAL && !(in_place_ && (errno == ENOTSUP || errno == EROFS))) {
        const int err = errno;
        abandon();
        fail(path_, "fsync failed", err);
    }
    const int closed = ::close(fd_);
    const int close_err = errno;
    fd_ = -1;
    if (closed != 0 && close_err != EINTR) {
        abandon();
        fail(path_, "close failed", close_err);
    }
    if (in_place_) return;
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
        const int err = errno;
        abandon();
        fail(path_, "rename failed", err);
    }
    tmp_.clear();  // renamed: nothing to remove
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
    AtomicFileWriter writer(path);
    writer.write(content);
    writer.commit();
}

std::string read_file(const std::filesystem::path& path, std::size_t max_bytes) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw std::runtime_error("cannot read '" + path.string() + "': it is a directory");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read '" + path.string() + "': " + std::strerror(errno));
    std::string content;
    char buffer[1 << 16];
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        content.append(buffer, static_cast<std::size_t>(in.gcount()));
        if (content.size() > max_bytes)
            throw std::runtime_error("cannot read '" + path.string() + "': larger than " + std::to_string(max_bytes) +
                                     " bytes");
    }
    if (in.bad()) throw std::runtime_error("cannot read '" + path.string() + "': read error");
    return content;
}

}  // namespace clprobe

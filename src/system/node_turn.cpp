#include "system/node_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace clprobe {

std::string node_turn_lock_path(const char* runtime_dir, unsigned uid) {
    const std::string dir = runtime_dir != nullptr && *runtime_dir != '\0' ? runtime_dir : "/tmp";
    return dir + "/clprobe-node-turn-" + std::to_string(uid) + ".lock";
}

NodeTurn::NodeTurn(std::string lock_path) : path_(std::move(lock_path)) {}

NodeTurn::~NodeTurn() {
    release();
}

void NodeTurn::acquire() {
    if (held()) return;
    const int fd = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0) throw std::runtime_error("cannot open the node lock file " + path_ + ": " + std::strerror(errno));
    // Try first, so that a rank that finds the node free records no wait at all.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        waited_ = true;
        const auto start = std::chrono::steady_clock::now();
        int rc = 0;
        while ((rc = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
        }
        wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (rc != 0) {
            const int err = errno;
            ::close(fd);
            throw std::runtime_error("cannot lock " + path_ + ": " + std::strerror(err));
        }
    }
    fd_ = fd;
}

void NodeTurn::release() {
    if (!held()) return;
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
    fd_ = -1;
}

}  // namespace clprobe

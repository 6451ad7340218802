#include "system/node_turn.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace clprobe {

namespace {

std::string errno_text(int err) {
    return std::strerror(err);
}

// Opens `path` as this user's lock file: never through a symlink, and only a regular file this
// user owns. Returns the descriptor, or -1 with `why` set.
int open_own_file(const std::string& path, std::string& why) {
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        why = errno == ELOOP ? path + " is a symlink" : "cannot open " + path + ": " + errno_text(errno);
        return -1;
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
        why = path + " is not a regular file of this user";
        ::close(fd);
        return -1;
    }
    return fd;
}

// The private folder beside the lock: created 0700 if missing, and used only when it is a real
// folder of this user that no one else can write.
bool private_folder_ok(const std::string& folder, std::string& why) {
    if (::mkdir(folder.c_str(), 0700) != 0 && errno != EEXIST) {
        why = "cannot create " + folder + ": " + errno_text(errno);
        return false;
    }
    struct stat st {};
    if (::lstat(folder.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & 077) != 0) {
        why = folder + " is not a private folder of this user";
        return false;
    }
    return true;
}

}  // namespace

std::string node_turn_lock_path(const char* runtime_dir, unsigned uid) {
    const std::string dir = runtime_dir != nullptr && *runtime_dir != '\0' ? runtime_dir : "/tmp";
    return dir + "/clprobe-node-turn-" + std::to_string(uid) + ".lock";
}

std::string private_lock_path(const std::string& lock_path, unsigned uid) {
    const auto slash = lock_path.rfind('/');
    const std::string folder = slash == std::string::npos ? "." : lock_path.substr(0, slash);
    const std::string name = slash == std::string::npos ? lock_path : lock_path.substr(slash + 1);
    return folder + "/clprobe-" + std::to_string(uid) + "/" + name;
}

NodeTurn::NodeTurn(std::string lock_path, double wait_budget_seconds)
    : path_(std::move(lock_path)), wait_budget_(wait_budget_seconds) {}

NodeTurn::~NodeTurn() {
    release();
}

void NodeTurn::acquire() {
    if (held()) return;
    std::string why;
    int fd = open_own_file(path_, why);
    if (fd < 0) {
        // Every rank of this user moves the same way, so they still share one lock.
        const std::string moved = private_lock_path(path_, ::geteuid());
        std::string why_not;
        if (!private_folder_ok(moved.substr(0, moved.rfind('/')), why_not) || (fd = open_own_file(moved, why_not)) < 0)
            throw std::runtime_error(why + ", and " + why_not);
        moved_because_ = why;
        path_ = moved;
    }
    // Try first, so that a rank that finds the node free records no wait at all.
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        waited_ = true;
        const auto start = std::chrono::steady_clock::now();
        auto waited_for = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        };
        // Polled rather than a blocking flock, so the wait has a budget (and no signal games).
        bool got = false;
        while (!got && waited_for() < wait_budget_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            got = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
        }
        wait_seconds_ += waited_for();
        if (!got) {
            ::close(fd);
            throw std::runtime_error("another process held " + path_ + " for the whole wait budget of " +
                                     std::to_string(static_cast<long>(wait_budget_)) + " s");
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

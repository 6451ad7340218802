#pragma once
// Ranks of one launch that share a node take turns at the node-local layers: each holds an
// exclusive lock on a per-node file while it measures, so no rank's bandwidth or compute figures
// include another's load. The lock is released before layers that need every rank at once (the
// network layer starts with a barrier), and by the destructor on every other way out.
//
// The default folder may be /tmp, which every local user can write: another user could plant a
// symlink there (so that opening with O_CREAT creates or truncates a file of ours elsewhere) or a
// file of their own that they hold locked forever. So the file is opened without following
// symlinks and must be a regular file of this user; otherwise the lock moves to a private folder
// (0700, ours) beside it. Waiting for the turn has a budget, after which the rank measures anyway.
#include <string>

namespace clprobe {

// The lock file for this user on this node: $XDG_RUNTIME_DIR (else /tmp)/clprobe-node-turn-UID.lock.
// One per user, not per job: two jobs of one user on one node would disturb each other too.
std::string node_turn_lock_path(const char* runtime_dir, unsigned uid);

// Where the lock moves when `lock_path` is not safe to use: FOLDER/clprobe-UID/NAME.
std::string private_lock_path(const std::string& lock_path, unsigned uid);

// How long a rank waits for its turn by default: longer than every other rank's node-local
// layers in --full (a stuck rank must not hold the rest forever).
inline constexpr double default_turn_wait_budget_seconds = 3600;

class NodeTurn {
  public:
    explicit NodeTurn(std::string lock_path, double wait_budget_seconds = default_turn_wait_budget_seconds);
    ~NodeTurn();
    NodeTurn(const NodeTurn&) = delete;
    NodeTurn& operator=(const NodeTurn&) = delete;

    // Blocks until this process has the node to itself; a no-op while held. Throws
    // std::runtime_error when no safe lock file can be opened, or the wait budget runs out.
    void acquire();
    // Lets the next rank measure; a no-op when not held.
    void release();

    bool held() const { return fd_ >= 0; }
    bool waited() const { return waited_; }                // another rank held the node when we asked
    double wait_seconds() const { return wait_seconds_; }  // total time spent waiting for it
    // The file in use: the requested path, or the private one it moved to (moved_because says why).
    const std::string& lock_path() const { return path_; }
    const std::string& moved_because() const { return moved_because_; }

  private:
    std::string path_;
    double wait_budget_;
    int fd_ = -1;
    bool waited_ = false;
    double wait_seconds_ = 0;
    std::string moved_because_;
};

}  // namespace clprobe

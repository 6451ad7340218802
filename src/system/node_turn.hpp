#pragma once
// Ranks of one launch that share a node take turns at the node-local layers: each holds an
// exclusive lock on a per-node file while it measures, so no rank's bandwidth or compute figures
// include another's load. The lock is released before layers that need every rank at once (the
// network layer starts with a barrier), and by the destructor on every other way out.
#include <string>

namespace clprobe {

// The lock file for this user on this node: $XDG_RUNTIME_DIR (else /tmp)/clprobe-node-turn-UID.lock.
// One per user, not per job: two jobs of one user on one node would disturb each other too.
std::string node_turn_lock_path(const char* runtime_dir, unsigned uid);

class NodeTurn {
  public:
    explicit NodeTurn(std::string lock_path);
    ~NodeTurn();
    NodeTurn(const NodeTurn&) = delete;
    NodeTurn& operator=(const NodeTurn&) = delete;

    // Blocks until this process has the node to itself; a no-op while held. Throws
    // std::runtime_error when the lock file cannot be opened.
    void acquire();
    // Lets the next rank measure; a no-op when not held.
    void release();

    bool held() const { return fd_ >= 0; }
    bool waited() const { return waited_; }                // another rank held the node when we asked
    double wait_seconds() const { return wait_seconds_; }  // total time spent waiting for it
    const std::string& lock_path() const { return path_; }

  private:
    std::string path_;
    int fd_ = -1;
    bool waited_ = false;
    double wait_seconds_ = 0;
};

}  // namespace clprobe

// The node-turn lock in a shared folder: a symlink or another user's file planted at its path must
// not be followed or trusted (the lock moves to a private folder), and a wait has a budget.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "system/node_turn.hpp"

using namespace clprobe;
namespace fs = std::filesystem;

namespace {

// A fresh folder standing in for /tmp.
fs::path shared_folder(const char* name) {
    const fs::path d = fs::temp_directory_path() / (std::string(name) + "-" + std::to_string(::getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

}  // namespace

TEST_CASE("node turn: the private path beside the lock", "[launcher]") {
    CHECK(private_lock_path("/tmp/clprobe-node-turn-7.lock", 7) == "/tmp/clprobe-7/clprobe-node-turn-7.lock");
}

TEST_CASE("node turn: a symlink at the lock path is not followed", "[launcher]") {
    const fs::path d = shared_folder("clprobe-turn-symlink");
    const fs::path victim = d / "victim";
    const fs::path lock = d / "clprobe-node-turn.lock";
    fs::create_symlink(victim, lock);
    {
        NodeTurn turn(lock.string());
        turn.acquire();
        CHECK(turn.held());
        CHECK_FALSE(fs::exists(victim));  // O_CREAT did not go through the link
        CHECK(turn.lock_path() == private_lock_path(lock.string(), ::geteuid()));
        CHECK(turn.moved_because().find("symlink") != std::string::npos);
        struct stat st {};
        REQUIRE(::stat(fs::path(turn.lock_path()).parent_path().c_str(), &st) == 0);
        CHECK((st.st_mode & 077) == 0);
    }
    fs::remove_all(d);
}

TEST_CASE("node turn: another user's file at the lock path is not trusted", "[launcher]") {
    if (::geteuid() != 0) return;  // giving the file to another user needs root
    const fs::path d = shared_folder("clprobe-turn-foreign");
    const fs::path lock = d / "clprobe-node-turn.lock";
    std::ofstream(lock.string()) << "";
    REQUIRE(::chown(lock.c_str(), 65534, 65534) == 0);
    {
        NodeTurn turn(lock.string());
        turn.acquire();
        CHECK(turn.lock_path() != lock.string());
        CHECK(turn.moved_because().find("not a regular file of this user") != std::string::npos);
    }
    fs::remove_all(d);
}

TEST_CASE("node turn: a planted folder in place of the private one is refused", "[launcher]") {
    const fs::path d = shared_folder("clprobe-turn-planted");
    const fs::path lock = d / "clprobe-node-turn.lock";
    fs::create_symlink(d / "elsewhere", lock);
    const fs::path private_dir = fs::path(private_lock_path(lock.string(), ::geteuid())).parent_path();
    fs::create_directories(private_dir);
    fs::permissions(private_dir, fs::perms::all);  // 0777: anyone could swap the file in it
    NodeTurn turn(lock.string());
    CHECK_THROWS_AS(turn.acquire(), std::runtime_error);
    CHECK_FALSE(turn.held());
    fs::remove_all(d);
}

TEST_CASE("node turn: the wait for a held lock has a budget", "[launcher]") {
    const fs::path d = shared_folder("clprobe-turn-budget");
    const std::string lock = (d / "clprobe-node-turn.lock").string();
    NodeTurn holder(lock);
    holder.acquire();
    // flock locks belong to open file descriptions: a second NodeTurn in this process waits too.
    NodeTurn waiter(lock, 0.2);
    CHECK_THROWS_WITH(waiter.acquire(), Catch::Contains("wait budget"));
    CHECK_FALSE(waiter.held());
    CHECK(waiter.waited());
    holder.release();
    waiter.acquire();
    CHECK(waiter.held());
    fs::remove_all(d);
}

// Output-path placeholders against injected launcher environments, and node turns taken in turn.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <thread>

#include "core/launcher_env.hpp"
#include "system/node_turn.hpp"

using namespace clprobe;

TEST_CASE("launcher: rank and local placement from each launcher's variables", "[launcher]") {
    CHECK_FALSE(launcher_env_from({}).rank);
    const auto slurm = launcher_env_from({{"SLURM_PROCID", "12"}, {"SLURM_LOCALID", "3"}});
    CHECK(slurm.launcher == "slurm");
    CHECK(*slurm.rank == "12");
    CHECK(slurm.local_rank == 3);
    CHECK_FALSE(slurm.local_size);
    CHECK(slurm.may_share_node());  // a local id without a count: assume sharing

    const auto ompi = launcher_env_from(
        {{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "1"}});
    CHECK(ompi.launcher == "openmpi");
    CHECK_FALSE(ompi.may_share_node());  // alone on its node

    // A PMIx launcher that sets only PMIX_RANK (prterun): the rank, no placement.
    const auto pmix = launcher_env_from({{"PMIX_RANK", "3"}});
    CHECK(pmix.launcher == "pmix");
    CHECK(pmix.rank == "3");
    CHECK_FALSE(pmix.may_share_node());
    const auto pmi = launcher_env_from({{"PMI_RANK", "4"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}});
    CHECK(pmi.launcher == "pmi");
    CHECK(pmi.may_share_node());

    // Slurm first: srun can start Open MPI programs, and then both are set.
    CHECK(launcher_env_from({{"SLURM_PROCID", "7"}, {"OMPI_COMM_WORLD_RANK", "2"}}).rank == "7");
    CHECK_FALSE(launcher_env_from({{"SLURM_PROCID", "7"}, {"SLURM_LOCALID", "x"}}).local_rank);
}

TEST_CASE("launcher: the world size, from the first launcher variable with a rank count", "[launcher]") {
    EnvironmentMap env;
    CHECK_FALSE(launcher_env_from(env).world_size);
    env["SLURM_NTASKS"] = "4";
    // srun without --mpi: no PMI to wire MPI up with, so not an MPI launch (Open MPI would abort).
    CHECK_FALSE(launcher_env_from(env).world_size);
    env["PMIX_RANK"] = "0";
    REQUIRE(launcher_env_from(env).world_size);
    CHECK(launcher_env_from(env).world_size == 4);
    CHECK(launcher_env_from(env).world_size_variable == "SLURM_NTASKS");
    env["OMPI_COMM_WORLD_SIZE"] = "2";  // Open MPI's own count wins
    CHECK(launcher_env_from(env).world_size == 2);
    CHECK(launcher_env_from(env).world_size_variable == "OMPI_COMM_WORLD_SIZE");
    env["OMPI_COMM_WORLD_SIZE"] = "two";  // not a number: the next variable counts
    CHECK(launcher_env_from(env).world_size_variable == "SLURM_NTASKS");
    env = {{"PMI_SIZE", "0"}, {"SLURM_NPROCS", "3x"}};
    CHECK_FALSE(launcher_env_from(env).world_size);
    // PMI_RANK and PMI_FD wire srun's tasks too; the rank and the world size are read apart.
    const auto pmi = launcher_env_from({{"SLURM_NPROCS", "3"}, {"PMI_FD", "5"}});
    CHECK(pmi.world_size == 3);
    CHECK_FALSE(pmi.rank);
    const auto slurm = launcher_env_from({{"SLURM_PROCID", "1"}, {"SLURM_NTASKS", "2"}, {"PMI_RANK", "1"}});
    CHECK(slurm.launcher == "slurm");
    CHECK(slurm.world_size == 2);
}

TEST_CASE("launcher: the real environment's collector reads every variable the world size needs", "[launcher]") {
    // current_launcher() copies only launcher_variables() out of the environment: a variable
    // missing there would leave MPI unstarted under that launcher.
    const auto& names = launcher_variables();
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "SLURM_NPROCS", "PMIX_RANK",
                             "PMI_RANK", "PMI_FD", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK"}) {
        INFO(name);
        CHECK(std::count(names.begin(), names.end(), name) == 1);
    }
}

TEST_CASE("launcher: {host} and {rank} expand; unknown placeholders and a missing rank are errors", "[launcher]") {
    const auto ompi = launcher_env_from({{"OMPI_COMM_WORLD_RANK", "5"}});
    CHECK(expand_output_path("reports/{host}.json", "node7", {}) == "reports/node7.json");
    CHECK(expand_output_path("r-{host}-{rank}.json", "node7", ompi) == "r-node7-5.json");
    CHECK(expand_output_path("plain.json", "", {}) == "plain.json");
    CHECK(expand_output_path("odd{A-b}{.json", "n", {}) == "odd{A-b}{.json");  // not placeholders
    CHECK_THROWS_WITH(expand_output_path("r-{rank}.json", "n", {}), Catch::Contains("{rank} needs a launcher"));
    CHECK_THROWS_WITH(expand_output_path("r-{node}.json", "n", ompi), Catch::Contains("unknown placeholder '{node}'"));
    const auto sized = launcher_env_from({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "4"}});
    CHECK(expand_output_path("r-{rank}-of-{size}.json", "n", sized) == "r-1-of-4.json");
    CHECK_THROWS_WITH(expand_output_path("r-{size}.json", "n", ompi), Catch::Contains("{size} needs a launcher"));
    CHECK(short_host_name("node7.cluster.example.org") == "node7");
    CHECK(short_host_name("node7") == "node7");
}

TEST_CASE("node turn: the lock path", "[launcher]") {
    CHECK(node_turn_lock_path(nullptr, 1000) == "/tmp/clprobe-node-turn-1000.lock");
    CHECK(node_turn_lock_path("/run/user/1000", 1000) == "/run/user/1000/clprobe-node-turn-1000.lock");
}

TEST_CASE("node turn: a second process waits until the first releases", "[launcher]") {
    const auto path =
        (std::filesystem::temp_directory_path() / ("clprobe-turn-test-" + std::to_string(::getpid()))).string();
    int from_child[2];
    REQUIRE(::pipe(from_child) == 0);
    NodeTurn first(path);
    first.acquire();
    CHECK(first.held());
    CHECK_FALSE(first.waited());
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        // The child reports 'w' when it starts waiting and 'g' once it got the turn; it must
        // not get it before the parent has written 'r' (released).
        NodeTurn second(path);
        char c = 'w';
        if (::write(from_child[1], &c, 1) != 1) ::_exit(3);
        second.acquire();
        c = second.waited() ? 'g' : 'n';
        if (::write(from_child[1], &c, 1) != 1) ::_exit(3);
        ::_exit(0);
    }
    char c = 0;
    REQUIRE(::read(from_child[0], &c, 1) == 1);
    CHECK(c == 'w');
    // Give the child every chance to (wrongly) get the turn: it must still be blocked. The
    // check is a non-blocking poll of the pipe, not a timing threshold.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    int status = 0;
    CHECK(::waitpid(child, &status, WNOHANG) == 0);
    first.release();
    REQUIRE(::read(from_child[0], &c, 1) == 1);
    CHECK(c == 'g');  // it had to wait, and then got the turn
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    for (int fd : {from_child[0], from_child[1]})
        ::close(fd);
    std::filesystem::remove(path);
}

TEST_CASE("node turn: release is idempotent and the destructor releases", "[launcher]") {
    const auto path =
        (std::filesystem::temp_directory_path() / ("clprobe-turn-test2-" + std::to_string(::getpid()))).string();
    {
        NodeTurn t(path);
        t.acquire();
        t.acquire();  // no-op while held
        t.release();
        t.release();
        CHECK_FALSE(t.held());
        t.acquire();
    }
    NodeTurn again(path);
    again.acquire();  // would block forever if the destructor had not released
    CHECK_FALSE(again.waited());
    std::filesystem::remove(path);
}

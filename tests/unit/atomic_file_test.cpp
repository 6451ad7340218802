// write_file_atomically, check_output_path and read_file in a fresh temporary folder per test.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/atomic_file.hpp"

using namespace clprobe;
namespace fs = std::filesystem;

namespace {

// A new empty folder under the system temp directory, removed with everything in it.
class TempDir {
  public:
    TempDir() {
        std::random_device rd;
        for (int attempt = 0; attempt < 100; ++attempt) {
            path_ =
                fs::temp_directory_path() / ("clprobe-unit-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
            if (fs::create_directory(path_)) return;
        }
        throw std::runtime_error("cannot create a temporary folder");
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    const fs::path& path() const { return path_; }
    fs::path operator/(const std::string& name) const { return path_ / name; }

  private:
    fs::path path_;
};

// Names of everything in `folder`, hidden files included.
std::set<std::string> entries(const fs::path& folder) {
    std::set<std::string> out;
    for (const auto& e : fs::directory_iterator(folder))
        out.insert(e.path().filename().string());
    return out;
}

void write_plain(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

// Changes the working directory for the scope of one test.
class WorkingDirectory {
  public:
    explicit WorkingDirectory(const fs::path& path) : saved_(fs::current_path()) { fs::current_path(path); }
    ~WorkingDirectory() { fs::current_path(saved_); }

  private:
    fs::path saved_;
};

}  // namespace

TEST_CASE("atomic_file: write then read back, binary content intact", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "report.json";
    const char raw[] = "{\"a\": 1}\n\0\xff\r\n tail";
    const std::string content(raw, sizeof raw - 1);  // embedded NUL and a non-UTF-8 byte
    write_file_atomically(target, content);
    CHECK(read_file(target, 1 << 20) == content);
    CHECK(fs::file_size(target) == content.size());
    CHECK(entries(dir.path()) == std::set<std::string>{"report.json"});
}

TEST_CASE("atomic_file: empty content writes an empty file", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "empty.txt";
    write_file_atomically(target, "");
    REQUIRE(fs::exists(target));
    CHECK(fs::file_size(target) == 0);
    CHECK(read_file(target, 0).empty());
}

TEST_CASE("atomic_file: overwriting replaces the content and leaves no temporary files", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "report.json";
    write_file_atomically(target, std::string(100000, 'a'));
    write_file_atomically(target, "second, shorter");
    write_file_atomically(target, "third");
    CHECK(read_file(target, 1 << 20) == "third");
    CHECK(entries(dir.path()) == std::set<std::string>{"report.json"});
}

TEST_CASE("atomic_file: a relative file name is written in the working directory", "[atomic_file]") {
    TempDir dir;
    {
        WorkingDirectory cwd(dir.path());
        check_output_path("relative.txt");
        write_file_atomically("relative.txt", "here");
    }
    CHECK(read_file(dir / "relative.txt", 100) == "here");
    CHECK(entries(dir.path()) == std::set<std::string>{"relative.txt"});
}

TEST_CASE("atomic_file: writing into a missing folder throws and creates nothing", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "missing" / "report.json";
    CHECK_THROWS_AS(write_file_atomically(target, "content"), OutputError);
    CHECK_THROWS_WITH(write_file_atomically(target, "content"), Catch::Matchers::Contains(target.string()));
    CHECK_FALSE(fs::exists(dir / "missing"));
    CHECK(entries(dir.path()).empty());
}

TEST_CASE("atomic_file: writing over a directory throws and keeps the directory", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "a_folder";
    fs::create_directory(target);
    write_plain(target / "inside.txt", "keep me");
    CHECK_THROWS_AS(write_file_atomically(target, "content"), OutputError);
    CHECK(fs::is_directory(target));
    CHECK(read_file(target / "inside.txt", 100) == "keep me");
    CHECK(entries(dir.path()) == std::set<std::string>{"a_folder"});
}

TEST_CASE("check_output_path: a writable new path passes and leaves nothing behind", "[atomic_file]") {
    TempDir dir;
    CHECK_NOTHROW(check_output_path(dir / "new.json"));
    CHECK(entries(dir.path()).empty());
}

TEST_CASE("check_output_path: an existing file passes and is left unchanged", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "old.json";
    write_plain(target, "previous report");
    CHECK_NOTHROW(check_output_path(target));
    CHECK(read_file(target, 100) == "previous report");
    CHECK(entries(dir.path()) == std::set<std::string>{"old.json"});
}

TEST_CASE("check_output_path: a missing folder throws OutputError and creates nothing", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "no_such_folder" / "report.json";
    CHECK_THROWS_AS(check_output_path(target), OutputError);
    CHECK_THROWS_WITH(check_output_path(target), Catch::Matchers::Contains("does not exist"));
    CHECK_FALSE(fs::exists(dir / "no_such_folder"));
    CHECK(entries(dir.path()).empty());
}

TEST_CASE("check_output_path: a directory throws OutputError and is left alone", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "reports";
    fs::create_directory(target);
    CHECK_THROWS_AS(check_output_path(target), OutputError);
    CHECK_THROWS_WITH(check_output_path(target), Catch::Matchers::Contains("is a directory"));
    CHECK(fs::is_directory(target));
    CHECK(entries(target).empty());
    CHECK(entries(dir.path()) == std::set<std::string>{"reports"});
}

TEST_CASE("check_output_path: an empty path throws OutputError", "[atomic_file]") {
    CHECK_THROWS_AS(check_output_path(""), OutputError);
}

TEST_CASE("read_file: a missing file throws naming the path", "[atomic_file]") {
    TempDir dir;
    const auto missing = dir / "absent.json";
    CHECK_THROWS_AS(read_file(missing, 1 << 20), std::runtime_error);
    CHECK_THROWS_WITH(read_file(missing, 1 << 20), Catch::Matchers::Contains(missing.string()));
    CHECK(entries(dir.path()).empty());
}

TEST_CASE("read_file: a directory throws", "[atomic_file]") {
    TempDir dir;
    CHECK_THROWS_AS(read_file(dir.path(), 1 << 20), std::runtime_error);
}

TEST_CASE("read_file: enforces max_bytes", "[atomic_file]") {
    TempDir dir;
    SECTION("small file") {
        const auto target = dir / "hundred.txt";
        write_file_atomically(target, std::string(100, 'x'));
        CHECK(read_file(target, 100).size() == 100);  // exactly the limit is fine
        CHECK_THROWS_AS(read_file(target, 99), std::runtime_error);
        CHECK_THROWS_WITH(read_file(target, 99), Catch::Matchers::Contains(target.string()));
    }
    SECTION("file larger than one read buffer") {
        const auto target = dir / "big.bin";
        const std::string content(200000, 'y');
        write_file_atomically(target, content);
        CHECK(read_file(target, 200000) == content);
        CHECK_THROWS_AS(read_file(target, 150000), std::runtime_error);
        CHECK_THROWS_AS(read_file(target, 199999), std::runtime_error);
    }
}

TEST_CASE("write_file_atomically: a device is written in place, every write checked", "[atomic_file]") {
    // Renaming a temporary file over /dev/null would replace the device node (as root it can).
    if (!std::filesystem::is_character_file("/dev/null") || !std::filesystem::is_character_file("/dev/full")) return;
    check_output_path("/dev/null");
    write_file_atomically("/dev/null", "a report\n");
    CHECK(std::filesystem::is_character_file("/dev/null"));
    // /dev/full refuses every write with ENOSPC: the report was not written, and the caller is told.
    check_output_path("/dev/full");
    CHECK_THROWS_AS(write_file_atomically("/dev/full", "a report\n"), OutputError);
    CHECK_THROWS_WITH(write_file_atomically("/dev/full", "a report\n"),
                      Catch::Matchers::Contains("No space left on device"));
    CHECK(std::filesystem::is_character_file("/dev/full"));
}

TEST_CASE("write_file_atomically: a FIFO is written in place", "[atomic_file]") {
    TempDir dir;
    const auto fifo = dir / "pipe";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string received;
    std::thread reader([&] { received = read_file(fifo, 1 << 20); });
    write_file_atomically(fifo, "through the pipe\n");
    reader.join();
    CHECK(received == "through the pipe\n");
    CHECK(std::filesystem::is_fifo(fifo));
    CHECK(entries(dir.path()) == std::set<std::string>{"pipe"});
}

TEST_CASE("AtomicFileWriter: pieces appear together at commit, and not before", "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "timeline.json";
    write_plain(target, "the previous timeline");
    {
        AtomicFileWriter writer(target);
        writer.write("{\"a\":");
        writer.write(std::string(300000, ' '));
        // Mid-write the old file is still whole, beside the writer's temporary one.
        CHECK(read_file(target, 1 << 20) == "the previous timeline");
        CHECK(entries(dir.path()).size() == 2);
        writer.write("1}\n");
        writer.commit();
    }
    CHECK(read_file(target, 1 << 20) == "{\"a\":" + std::string(300000, ' ') + "1}\n");
    CHECK(entries(dir.path()) == std::set<std::string>{"timeline.json"});
}

TEST_CASE("AtomicFileWriter: a writer given up before commit leaves the old file and no temporary one",
          "[atomic_file]") {
    TempDir dir;
    const auto target = dir / "timeline.json";
    write_plain(target, "kept");
    {
        AtomicFileWriter writer(target);
        writer.write("half of a new timeline");
        // An error while producing the rest: the writer goes out of scope uncommitted.
    }
    CHECK(read_file(target, 100) == "kept");
    CHECK(entries(dir.path()) == std::set<std::string>{"timeline.json"});
    // A new file is not created at all.
    { AtomicFileWriter writer(dir / "new.json"); }
    CHECK(entries(dir.path()) == std::set<std::string>{"timeline.json"});
    // After commit it takes no more.
    AtomicFileWriter done(dir / "done.json");
    done.commit();
    CHECK_THROWS_AS(done.write("late"), OutputError);
    CHECK(read_file(dir / "done.json", 10).empty());
}

TEST_CASE("AtomicFileWriter: a full device fails the piece that does not fit", "[atomic_file]") {
    if (!std::filesystem::is_character_file("/dev/full")) return;
    AtomicFileWriter writer("/dev/full");
    CHECK_THROWS_WITH(writer.write("a piece\n"), Catch::Matchers::Contains("No space left on device"));
    CHECK(std::filesystem::is_character_file("/dev/full"));
}

#pragma once
// Reports are written whole or not at all: a temporary file in the target's folder, flushed and
// renamed over the target, so a crash or a full disk never leaves a truncated report behind.
// A target that is a character device, FIFO or socket (/dev/stdout, a pipe) is written in place,
// every write checked: renaming over it would replace the device node.
#include <filesystem>
#include <stdexcept>
#include <string>
#include <string_view>

namespace clprobe {

class OutputError : public std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Throws OutputError with a one-line message naming the path and the reason.
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

// The same, for content written in pieces (a timeline of millions of events need never be one
// string): nothing appears at `path` until commit(); a writer destroyed before that removes its
// temporary file. Every call throws OutputError as above.
class AtomicFileWriter {
  public:
    explicit AtomicFileWriter(std::filesystem::path path);
    AtomicFileWriter(const AtomicFileWriter&) = delete;
    AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;
    ~AtomicFileWriter();

    void write(std::string_view piece);
    void commit();

  private:
    void abandon();

    std::filesystem::path path_, tmp_;
    int fd_ = -1;
    bool in_place_ = false;  // a device, FIFO or socket: written where it is
};

// Checks, before a long run, that `path` could be written: its folder exists and accepts a new
// file, and the path is not a folder. Throws OutputError; leaves nothing behind.
void check_output_path(const std::filesystem::path& path);

// Reads a whole file; throws std::runtime_error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace clprobe

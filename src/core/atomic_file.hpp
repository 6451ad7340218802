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

// Checks, before a long run, that `path` could be written: its folder exists and accepts a new
// file, and the path is not a folder. Throws OutputError; leaves nothing behind.
void check_output_path(const std::filesystem::path& path);

// Reads a whole file; throws std::runtime_error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path, std::size_t max_bytes);

}  // namespace clprobe

#include "cli/stdout_check.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "cli/exit_codes.hpp"

namespace clprobe {

namespace {

int& noted_error() {
    static int err = 0;
    return err;
}

}  // namespace

void note_stdout_error(int err) {
    noted_error() = err;
}

bool stdout_failed() {
    return std::ferror(stdout) != 0;
}

int finish_stdout(int code) {
    errno = 0;
    const bool flushed = std::fflush(stdout) == 0;
    const int err = errno != 0 ? errno : noted_error();
    if (flushed && !stdout_failed()) return code;
    // An earlier failed write may leave nothing to flush, and so no errno to name.
    fmt::print(stderr, "clprobe: cannot write to standard output: {}\n", err != 0 ? std::strerror(err) : "write error");
    return code == exit_code::ok ? exit_code::output : code;
}

}  // namespace clprobe

#include "cl/stderr_capture.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

namespace clprobe {

StderrCapture::StderrCapture() {
    std::fflush(stderr);
    capture_fd_ = ::memfd_create("clprobe-stderr", MFD_CLOEXEC);
    if (capture_fd_ < 0) return;  // no capture possible: leave stderr alone
    saved_fd_ = ::dup(STDERR_FILENO);
    if (saved_fd_ < 0 || ::dup2(capture_fd_, STDERR_FILENO) < 0) {
        if (saved_fd_ >= 0) ::close(saved_fd_);
        ::close(capture_fd_);
        saved_fd_ = capture_fd_ = -1;
    }
}

std::string StderrCapture::finish() {
    if (capture_fd_ < 0) return {};
    std::fflush(stderr);
    ::dup2(saved_fd_, STDERR_FILENO);
    ::close(saved_fd_);
    std::string text;
    char buf[4096];
    ::lseek(capture_fd_, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(capture_fd_, buf, sizeof buf)) > 0;)
        text.append(buf, static_cast<std::size_t>(n));
    ::close(capture_fd_);
    saved_fd_ = capture_fd_ = -1;
    return text;
}

StderrCapture::~StderrCapture() {
    finish();
}

}  // namespace clprobe

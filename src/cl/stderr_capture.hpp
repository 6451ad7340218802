#pragma once
// Some drivers (PoCL among them) print compiler diagnostics straight to the process's stderr.
// clprobe's stderr is its progress stream, so builds run inside a StderrCapture: the chatter is
// kept (it goes into the build log) but not shown.
#include <string>

namespace clprobe {

class StderrCapture {
  public:
    StderrCapture();
    ~StderrCapture();
    StderrCapture(const StderrCapture&) = delete;
    StderrCapture& operator=(const StderrCapture&) = delete;

    // Restores stderr and returns what was written meanwhile (once; later calls return "").
    std::string finish();

  private:
    int saved_fd_ = -1;
    int capture_fd_ = -1;
};

}  // namespace clprobe

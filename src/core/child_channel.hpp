#pragma once
// The pipe from an isolated probe's child process to the parent (docs/architecture.md, "Process
// model"). Line-framed text: "B <what>" is a breadcrumb, the command or kernel the child is about
// to wait for, so a child that dies or hangs inside the driver is reported with where it was;
// "R <json>" is its ProbeResult in the report's own JSON form, one line (JSON escapes newlines);
// "T <json>" its --trace timeline entries.
// The writer side is process-global because the breadcrumbs come from deep inside the OpenCL
// helpers (src/cl), which must not know whether they run in a child.
#include <optional>
#include <string>
#include <string_view>

namespace clprobe {

// Child side. Until set, breadcrumbs cost one branch and go nowhere.
void set_child_channel_fd(int fd) noexcept;
int child_channel_fd() noexcept;
// Writes "B <what>\n" unless `what` repeats the last breadcrumb (a sampler's batches name the same
// kernel hundreds of times; one line says as much). Never throws; a failed write is ignored.
void drop_breadcrumb(std::string_view what) noexcept;
// Writes "R <json>\n" (the result) in full; false when the pipe refused it.
bool send_child_result(std::string_view json_line) noexcept;
// Writes "T <json>\n": the child's --trace timeline entries (cl/command_trace raw entries).
bool send_child_trace(std::string_view json_line) noexcept;

// Parent side: feed it what the pipe delivers, in any pieces.
class ChildChannelReader {
  public:
    void feed(std::string_view bytes);
    const std::string& last_breadcrumb() const { return breadcrumb_; }
    // The result's JSON text, once its whole line arrived.
    const std::optional<std::string>& result() const { return result_; }
    const std::optional<std::string>& trace() const { return trace_; }

  private:
    void line(std::string_view text);
    std::string pending_;
    std::string breadcrumb_;
    std::optional<std::string> result_, trace_;
};

}  // namespace clprobe

#pragma once
// The pipes between an isolated probe's child process and the parent (docs/architecture.md,
// "Process model"). One child runs a batch of probes in turn (a layer's device probes), so the
// conversation is per probe:
//   child -> parent (fd 3), line-framed text:
//     "S <probe id>"  ready to start that probe; the child then waits for the parent's word
//     "B <what>"      a breadcrumb: the command or kernel the child is about to wait for, so a child
//                     that dies or hangs inside the driver is reported with where it was
//     "T <json>"      the probe's --trace timeline entries (cl/command_trace raw entries)
//     "R <json>"      the probe's ProbeResult in the report's own JSON form, one line
//   parent -> child (fd 4), one byte per "S": 'g' go, 'q' stop here (the run was interrupted).
// The parent answers "S" only after its own checks between probes (the drift reference), so they
// still run while the device is idle, and each probe's time budget starts at its 'g'.
// The writer side is process-global because the breadcrumbs come from deep inside the OpenCL
// helpers (src/cl), which must not know whether they run in a child.
#include <deque>
#include <string>
#include <string_view>

namespace clprobe {

// Child side. Until set, breadcrumbs cost one branch and go nowhere.
void set_child_channel_fds(int channel_fd, int go_fd) noexcept;
int child_channel_fd() noexcept;
// Writes "B <what>\n" unless `what` repeats the last breadcrumb (a sampler's batches name the same
// kernel hundreds of times; one line says as much). Never throws; a failed write is ignored.
void drop_breadcrumb(std::string_view what) noexcept;
// Writes "S <probe id>\n" and waits for the parent's answer: true on 'g'; false on 'q', a closed
// pipe, or an interrupt (this process was signalled while it waited).
bool ask_to_start(std::string_view probe_id) noexcept;
// Writes "R <json>\n" (the result) in full; false when the pipe refused it.
bool send_child_result(std::string_view json_line) noexcept;
// Writes "T <json>\n": the probe's --trace timeline entries.
bool send_child_trace(std::string_view json_line) noexcept;

struct ChildMessage {
    enum class Kind { start, result, trace };
    Kind kind;
    std::string text;  // the probe id (start) or the JSON (result, trace)
};

// Parent side: feed it what the pipe delivers, in any pieces; take the messages in order.
class ChildChannelReader {
  public:
    void feed(std::string_view bytes);
    // The breadcrumb since the last "S" or "R": where the probe now running is.
    const std::string& last_breadcrumb() const { return breadcrumb_; }
    bool has_message() const { return !messages_.empty(); }
    ChildMessage take_message();

  private:
    void line(std::string_view text);
    std::string pending_;
    std::string breadcrumb_;
    std::deque<ChildMessage> messages_;
};

}  // namespace clprobe

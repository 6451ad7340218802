#include "core/child_channel.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/stop_points.hpp"

namespace clprobe {

namespace {

int channel_fd = -1;
int go_fd = -1;
// The last breadcrumb, kept in a fixed buffer so dropping one never allocates.
char last[160];
std::size_t last_size = 0;

bool write_all(int fd, const char* data, std::size_t size) noexcept {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

}  // namespace

void set_child_channel_fds(int channel, int go) noexcept {
    channel_fd = channel;
    go_fd = go;
    last_size = 0;
}

int child_channel_fd() noexcept {
    return channel_fd;
}

void drop_breadcrumb(std::string_view what) noexcept {
    if (channel_fd < 0) return;
    if (what.size() > sizeof last - 4) what = what.substr(0, sizeof last - 4);
    if (what.size() == last_size && std::memcmp(what.data(), last, last_size) == 0) return;
    std::memcpy(last, what.data(), what.size());
    last_size = what.size();
    char line[sizeof last];
    line[0] = 'B';
    line[1] = ' ';
    std::size_t n = 2;
    for (const char c : what)
        line[n++] = c == '\n' ? ' ' : c;
    line[n++] = '\n';
    write_all(channel_fd, line, n);
}

namespace {

bool send_line(const char* prefix, std::string_view json_line) noexcept {
    if (channel_fd < 0) return false;
    return write_all(channel_fd, prefix, 2) && write_all(channel_fd, json_line.data(), json_line.size()) &&
           write_all(channel_fd, "\n", 1);
}

}  // namespace

bool ask_to_start(std::string_view probe_id) noexcept {
    if (!send_line("S ", probe_id)) return false;
    last_size = 0;  // a new probe: its first breadcrumb is news even if it repeats the last one
    for (;;) {
        char answer = 0;
        const ssize_t n = ::read(go_fd, &answer, 1);
        if (n == 1) return answer == 'g';
        // EINTR from the parent's SIGTERM ends the wait (the handler recorded it); another signal
        // handled in this process does not.
        if (n < 0 && errno == EINTR && !interrupt_requested()) continue;
        return false;
    }
}

bool send_child_result(std::string_view json_line) noexcept {
    return send_line("R ", json_line);
}

bool send_child_trace(std::string_view json_line) noexcept {
    return send_line("T ", json_line);
}

void ChildChannelReader::feed(std::string_view bytes) {
    pending_.append(bytes);
    std::size_t start = 0;
    for (std::size_t nl; (nl = pending_.find('\n', start)) != std::string::npos; start = nl + 1)
        line(std::string_view(pending_).substr(start, nl - start));
    pending_.erase(0, start);
}

ChildMessage ChildChannelReader::take_message() {
    ChildMessage m = std::move(messages_.front());
    messages_.pop_front();
    return m;
}

void ChildChannelReader::line(std::string_view text) {
    if (text.size() < 2 || text[1] != ' ') return;  // not ours: ignored rather than trusted
    std::string body(text.substr(2));
    switch (text[0]) {
        case 'B':
            breadcrumb_ = std::move(body);
            break;
        case 'S':
            breadcrumb_.clear();
            messages_.push_back({ChildMessage::Kind::start, std::move(body)});
            break;
        case 'R':
            breadcrumb_.clear();
            messages_.push_back({ChildMessage::Kind::result, std::move(body)});
            break;
        case 'T':
            messages_.push_back({ChildMessage::Kind::trace, std::move(body)});
            break;
        default:
            break;
    }
}

}  // namespace clprobe

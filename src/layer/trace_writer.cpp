#include "layer/trace_writer.hpp"

#include "layer/space_budget.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

namespace clprobe::layer {

bool TraceWriter::open(const char* path, size_t chunk_bytes, bool exclusive) {
    const long page = sysconf(_SC_PAGESIZE) > 0 ? sysconf(_SC_PAGESIZE) : 4096;
    chunk_bytes_ = (chunk_bytes + page - 1) / page * page;
    // Not O_TRUNC: a program that starts another OpenCL program passes OPENCL_LAYERS and the file
    // name on to it. Truncating the file under the parent's mapping would kill the parent with
    // SIGBUS, so only the process that holds the lock owns (and truncates) the file.
    fd_ = ::open(path, O_RDWR | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : 0), 0600);
    if (fd_ < 0) return false;
    if ((!exclusive && flock(fd_, LOCK_EX | LOCK_NB) != 0) || ftruncate(fd_, 0) != 0) {
        ::close(fd_);
        fd_ = -1;
        return false;
    }
    // map_next_chunk() moves one chunk on from here: the first chunk starts at 0.
    chunk_start_ = 0 - static_cast<uint64_t>(chunk_bytes_);
    if (!map_next_chunk()) {
        ::close(fd_);
        fd_ = -1;
        return false;
    }
    return true;
}

bool TraceWriter::map_next_chunk() {
    const uint64_t start = chunk_start_ + chunk_bytes_;
    // Reserve the blocks now (not a sparse ftruncate): a store into a mapped hole the disk cannot
    // back raises SIGBUS in the program, while a failed reservation just ends the trace.
    if (posix_fallocate(fd_, static_cast<off_t>(start), static_cast<off_t>(chunk_bytes_)) != 0) return false;
    void* p = mmap(nullptr, chunk_bytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, static_cast<off_t>(start));
    if (p == MAP_FAILED) return false;
    if (chunk_) munmap(chunk_, chunk_bytes_);
    chunk_ = static_cast<char*>(p);
    chunk_start_ = start;
    used_ = 0;
    return true;
}

void TraceWriter::write(std::string_view text) {
    if (abandoned_.load(std::memory_order_relaxed) || !space_take(text.size(), false)) return;
    std::lock_guard lock(mu_);
    append(text);
}

void TraceWriter::write_prepaid(std::string_view text) {
    if (abandoned_.load(std::memory_order_relaxed)) return;
    std::lock_guard lock(mu_);
    append(text);
}

void TraceWriter::write_reserved(std::string_view text) {
    if (abandoned_.load(std::memory_order_relaxed) || !space_take(text.size(), true)) return;
    std::lock_guard lock(mu_);
    append(text);
}

void TraceWriter::write_if_free(std::string_view text) {
    if (abandoned_.load(std::memory_order_relaxed)) return;
    std::unique_lock lock(mu_, std::try_to_lock);
    if (lock.owns_lock() && space_take(text.size(), false)) append(text);
}

void TraceWriter::put(std::string_view lines) {
    // Line by line, each newline stored after its line: memcpy may store a block's end before its
    // middle, so a process killed during one bulk copy could leave complete-looking fragments
    // behind a hole. This way a crash leaves at most one line without its newline, which the
    // reader drops.
    char* out = chunk_ + used_;
    for (size_t start = 0; start < lines.size();) {
        const size_t end = lines.find('\n', start);
        std::memcpy(out + start, lines.data() + start, end - start);
        // A crash interrupts this thread between two of its stores (like a signal would): keeping
        // the compiler from moving the newline's store before the copy is all the ordering needed.
        std::atomic_signal_fence(std::memory_order_seq_cst);
        out[end] = '\n';
        start = end + 1;
    }
    used_ += lines.size();
}

void TraceWriter::append(std::string_view text) {
    while (!text.empty() && chunk_) {
        const size_t room = chunk_bytes_ - used_;
        if (text.size() <= room) {
            put(text);
            return;
        }
        // The whole lines that fit stay in this chunk; its unused tail stays NUL (fresh file
        // blocks read as zeros), which the reader skips.
        const size_t cut = room ? text.rfind('\n', room - 1) : std::string_view::npos;
        if (cut != std::string_view::npos) {
            put(text.substr(0, cut + 1));
            text.remove_prefix(cut + 1);
        } else if (used_ == 0) {
            return;  // a line longer than a chunk: cannot happen with RecordLine, and must not loop
        }
        if (!map_next_chunk()) unmap();  // disk full: the trace ends here, the program goes on
    }
}

void TraceWriter::close(std::string_view last) {
    if (abandoned_.load(std::memory_order_relaxed)) return;
    std::unique_lock lock(mu_, std::defer_lock);
    for (int tries = 0; !lock.try_lock(); ++tries) {
        if (tries == 200) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (space_take(last.size(), true)) append(last);
    if (!chunk_) return;
    if (ftruncate(fd_, static_cast<off_t>(chunk_start_ + used_)) != 0) {
        // The NUL-padded tail stays; the reader skips it.
    }
    unmap();
}

void TraceWriter::unmap() {
    if (chunk_) munmap(chunk_, chunk_bytes_);
    chunk_ = nullptr;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

}  // namespace clprobe::layer

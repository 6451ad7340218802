#pragma once
// The trace file, written through a MAP_SHARED mapping of its current chunk. Stores into such a
// mapping land in the page cache, which outlives the process: whatever way the traced program dies
// (a crash, abort(), exit() mid-flight, SIGKILL), every record copied in before stays in the file.
// Records are copied under one lock, each line's newline last, so a file cut by a crash ends at
// most with one partial line (without its newline, then NULs), which the reader ignores.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string_view>

namespace clprobe::layer {

class TraceWriter {
  public:
    // Creates (or truncates) `path` and maps its first chunk. False when the file cannot be made
    // ours: then nothing is recorded. `chunk_bytes` is rounded up to whole pages. `exclusive`: the
    // file must not exist yet (one file per process; errno EEXIST when it does); otherwise the
    // file is shared by name and the first process to lock it owns it.
    bool open(const char* path, size_t chunk_bytes, bool exclusive);

    // Appends `text`, one or more whole lines. Thread-safe; dropped once closed.
    void write(std::string_view text);

    // write() for the records bounded space must keep (space_budget.hpp): the exact totals at
    // exit and the sampling state may use the reserve past the soft limit.
    void write_reserved(std::string_view text);

    // write() of text whose bytes were counted against the size cap already (a T paid with its E).
    void write_prepaid(std::string_view text);

    // write() from a signal handler: never waits for the lock (the interrupted thread may hold
    // it), so the text is dropped when the lock is taken.
    void write_if_free(std::string_view text);

    // Appends `last` (the X record), cuts the file to the bytes used and stops accepting records.
    // When another thread keeps the lock for long (it may be stuck in a dying process), gives up
    // instead: the file then keeps its NUL-padded tail, which the reader skips.
    void close(std::string_view last);

    // In a fork()ed child the mapping is the parent's file: the child must never write into it,
    // nor take the lock (another thread of the parent may have held it at the fork).
    void abandon() { abandoned_.store(true, std::memory_order_relaxed); }

  private:
    void append(std::string_view text);  // with mu_ held
    void put(std::string_view lines);    // whole lines that fit in the chunk, with mu_ held
    bool map_next_chunk();
    void unmap();

    std::mutex mu_;
    std::atomic<bool> abandoned_{false};
    int fd_ = -1;
    char* chunk_ = nullptr;     // the mapped chunk; null when closed or failed
    size_t chunk_bytes_ = 0;    // size of every chunk
    uint64_t chunk_start_ = 0;  // file offset of the mapped chunk
    size_t used_ = 0;           // bytes of the chunk holding records
};

}  // namespace clprobe::layer

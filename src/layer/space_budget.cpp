#include "layer/space_budget.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <tuple>
#include <vector>

#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/sampling_policy.hpp"

namespace clprobe::layer {

std::atomic<bool> g_space_limited{false};

namespace {

struct Shared {
    uint64_t used;
    uint64_t half_ns;
    uint64_t start_ns;
};

Shared* shared = nullptr;  // the job's counter; a private one when the file cannot be mapped
uint64_t cap = 0, soft = 0;
std::atomic<uint32_t> period{1};
std::atomic<uint64_t> command_counter{0}, wait_counter{0}, dropped_writes{0};
std::atomic<uint64_t> last_aggregates{0}, last_adjust{0};
constexpr uint64_t aggregate_interval_ns = 1'000'000'000;

uint64_t load(const uint64_t& v) {
    return __atomic_load_n(&v, __ATOMIC_RELAXED);
}

struct Table {
    std::mutex mu;
    std::map<std::tuple<const void*, const void*, const void*, const void*>, Aggregate*> by_key;
    std::vector<Aggregate*> changed;
    std::vector<Aggregate*> all;
};
Table* table = nullptr;

// With table->mu held.
void mark_changed(Aggregate* a) {
    if (a->changed) return;
    a->changed = true;
    table->changed.push_back(a);
}

void write_period(uint64_t now, uint32_t k) {
    RecordLine z('Z');
    z.num(now).num(k).num(dropped_writes.load(std::memory_order_relaxed));
    writer().write_reserved(z.line());
}

}  // namespace

void init_space_budget() {
    const char* text = std::getenv("CLPROBE_TRACE_MAX_BYTES");
    if (!text || !*text) return;
    cap = std::strtoull(text, nullptr, 10);
    if (cap == 0) return;
    // The reserve keeps the exit's exact totals (A), Z and X writable whatever the timeline took.
    const uint64_t reserve = std::clamp<uint64_t>(cap / 16, 4096, uint64_t{16} << 20);
    soft = cap > reserve ? cap - reserve : cap / 2;
    if (const char* path = std::getenv("CLPROBE_TRACE_SPACE"); path && *path) {
        const int fd = ::open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void* p = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            ::close(fd);
            if (p != MAP_FAILED) shared = static_cast<Shared*>(p);
        }
    }
    if (!shared) shared = new Shared{0, 0, now_ns()};
    table = new Table;
    g_space_limited.store(true);
}

bool space_take(size_t n, bool reserved) {
    if (!g_space_limited.load(std::memory_order_relaxed)) return true;
    const uint64_t limit = reserved ? cap : soft;
    const uint64_t before = __atomic_fetch_add(&shared->used, n, __ATOMIC_RELAXED);
    if (before + n <= limit) return true;
    __atomic_fetch_sub(&shared->used, n, __ATOMIC_RELAXED);
    dropped_writes.fetch_add(1, std::memory_order_relaxed);
    return false;
}

void space_adjust(int64_t delta) {
    if (!g_space_limited.load(std::memory_order_relaxed) || delta == 0) return;
    if (delta > 0)
        __atomic_fetch_add(&shared->used, static_cast<uint64_t>(delta), __ATOMIC_RELAXED);
    else
        __atomic_fetch_sub(&shared->used, static_cast<uint64_t>(-delta), __ATOMIC_RELAXED);
}

void update_sampling(uint64_t now) {
    if (!g_space_limited.load(std::memory_order_relaxed)) return;
    const uint64_t used = load(shared->used);
    uint64_t half = load(shared->half_ns);
    if (half == 0) {
        if (used < soft / 2) return;
        uint64_t expected = 0;
        __atomic_compare_exchange_n(&shared->half_ns, &expected, now, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
        half = load(shared->half_ns);
    }
    uint64_t adjusted = last_adjust.load(std::memory_order_relaxed);
    if (now - adjusted < sampling_adjust_ns || !last_adjust.compare_exchange_strong(adjusted, now)) return;
    const uint64_t start = std::min(load(shared->start_ns), half);
    const double allowed =
        sampling_allowance(soft, static_cast<double>(now > start ? now - start : 0), static_cast<double>(half - start));
    const uint32_t k = period.load(std::memory_order_relaxed);
    const uint32_t next_k = next_sampling_period(k, used, allowed, soft);
    uint32_t expected = k;
    if (next_k != k && period.compare_exchange_strong(expected, next_k)) write_period(now, next_k);
    if (k > 1 || next_k > 1) {
        uint64_t last = last_aggregates.load(std::memory_order_relaxed);
        if (now - last >= aggregate_interval_ns && last_aggregates.compare_exchange_strong(last, now))
            write_aggregates(false);
    }
}

bool keep_command() {
    const uint32_t k = period.load(std::memory_order_relaxed);
    return k == 1 || command_counter.fetch_add(1, std::memory_order_relaxed) % k == 0;
}

bool keep_wait() {
    const uint32_t k = period.load(std::memory_order_relaxed);
    return k == 1 || wait_counter.fetch_add(1, std::memory_order_relaxed) % k == 0;
}

Aggregate* aggregate_command(cl_command_queue q, const char* command, cl_kernel kernel, const char* host,
                             uint64_t bytes, bool failed) {
    std::lock_guard lock(table->mu);
    Aggregate*& a = table->by_key[{q, command, kernel, host}];
    if (!a) {
        a = new Aggregate;
        a->queue = q;
        a->command = command;
        a->kernel = kernel;
        a->host = host;
        table->all.push_back(a);
    }
    mark_changed(a);
    ++a->count;
    a->bytes += bytes;
    a->failed += failed;
    return a;
}

void aggregate_time(Aggregate* a, uint64_t start, uint64_t end, int status) {
    std::lock_guard lock(table->mu);
    if (status == 0 && end >= start && start != 0) {
        const uint64_t d = end - start;
        ++a->timed;
        a->device_ns += d;
        a->min_ns = std::min(a->min_ns, d);
        a->max_ns = std::max(a->max_ns, d);
    }
    mark_changed(a);
}

void write_aggregates(bool final) {
    if (!table) return;
    std::vector<Aggregate> snapshot;
    {
        std::unique_lock lock(table->mu, std::try_to_lock);
        if (!lock.owns_lock()) return;  // another thread is writing them now; the next call will
        if (final) table->changed = table->all;
        for (Aggregate* a : table->changed) {
            a->changed = false;
            snapshot.push_back(*a);
        }
        table->changed.clear();
    }
    const uint64_t now = now_ns();
    for (const Aggregate& a : snapshot) {
        RecordLine line('A');
        line.num(now).handle(a.queue).word(a.command).handle(a.kernel).num(a.count).num(a.timed).num(a.failed);
        line.num(a.device_ns).num(a.timed ? a.min_ns : 0).num(a.max_ns).num(a.bytes).word(a.host);
        if (final)
            writer().write_reserved(line.line());
        else
            emit(line.line());
    }
    if (final) write_period(now, period.load(std::memory_order_relaxed));
}

void reset_space_after_fork() {
    if (!table) return;
    table = new Table;  // the parent's (and its lock) left behind
    command_counter.store(0);
    wait_counter.store(0);
    dropped_writes.store(0);
}

}  // namespace clprobe::layer

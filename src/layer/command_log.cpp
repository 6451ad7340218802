#include "layer/command_log.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "layer/record_line.hpp"
#include "layer/space_budget.hpp"

namespace clprobe::layer {
namespace {

// A thread's staged calls. Heap-allocated and registered, so that the exit handler can write out
// the stages of threads still running; a stage whose thread ended is reused by a later thread.
struct Stage {
    std::mutex mu;  // the owning thread, or the exit handler
    StagedCall items[stage_capacity];
    unsigned count = 0;
    int thread = 0;  // the owner's thread id, for E and W
    // Read by the owner without the lock, to decide on writing out at an entry.
    std::atomic<bool> has_items{false};
    std::atomic<uint64_t> oldest{0};     // t1 of the first staged entry
    std::atomic<uint64_t> last_exit{0};  // t1 of the last one
};

struct Registry {
    std::mutex mu;
    std::vector<Stage*> free;
    std::vector<Stage*> all;
};

Registry& registry() {
    static Registry* r = new Registry;
    return *r;
}

std::atomic<uint64_t> last_seq{0};

// Write-outs between taking the calls out of a stage and handing their records to the writer: the
// exit handler lets them finish before it closes the file, or their records would be lost.
std::atomic<int> writes_in_flight{0};

// Plain pointer: trivially destructible, so reachable at any point of the thread's exit.
thread_local Stage* t_stage = nullptr;

void write_out(Stage& stage);

// Writes the thread's stage when the thread ends and hands the stage to the next thread.
struct StageOwner {
    ~StageOwner() {
        Stage* s = t_stage;
        if (!s) return;
        write_out(*s);
        t_stage = nullptr;
        std::lock_guard lock(registry().mu);
        registry().free.push_back(s);
    }
};

Stage& own_stage() {
    if (Stage* s = t_stage) return *s;
    thread_local StageOwner owner;  // registers the destructor above for this thread
    (void)owner;
    Stage* s = nullptr;
    {
        std::lock_guard lock(registry().mu);
        auto& r = registry();
        if (!r.free.empty()) {
            s = r.free.back();
            r.free.pop_back();
        } else {
            s = new Stage;
            r.all.push_back(s);
        }
    }
    const int thread = thread_id();
    {
        std::lock_guard lock(s->mu);
        s->thread = thread;
    }
    t_stage = s;
    return *s;
}

void format(const StagedCall& c, int thread, uint64_t seq, RecordLine& line) {
    if (c.kind == StagedCall::Kind::wait) {
        line.num(c.t0).num(c.t1).num(static_cast<uint64_t>(thread)).word(c.name).handle(c.queue);
        return;
    }
    line.num(seq).num(c.t0).num(c.t1).num(static_cast<uint64_t>(thread)).handle(c.queue).word(c.name);
    line.handle(c.kernel).num(c.bytes).num(c.blocking ? 1 : 0).word(trace_format::host_memory_name(c.host));
    if (c.dims) {
        line.sizes(c.global, c.dims);
        if (c.local_auto)
            line.word("0");
        else
            line.sizes(c.local, c.dims);
    } else {
        line.word("-").word("-");
    }
    line.num(c.buffers).snum(c.status).handle(c.mem);
}

// Formats and writes `n` calls; then watches their events and polls the queues they went to.
void write_calls(const StagedCall* calls, unsigned n, int thread) {
    // Under --max-size, which calls go into the timeline (the others are counted in aggregates).
    bool keep[stage_capacity];
    unsigned commands = 0;
    const bool limited = g_space_limited.load(std::memory_order_relaxed);
    if (limited && n) update_sampling(calls[n - 1].t1);
    for (unsigned i = 0; i < n; ++i) {
        const bool command = calls[i].kind == StagedCall::Kind::command;
        keep[i] = !limited || (command ? keep_command() : keep_wait());
        commands += command && keep[i];
    }
    uint64_t seq = last_seq.fetch_add(commands, std::memory_order_relaxed) + 1;

    struct Watch {
        QueueState* queue;
        PendingEvent pending;
    };
    Watch watches[stage_capacity];
    unsigned watched = 0;
    RecordBatch text(limited);
    for (unsigned i = 0; i < n; ++i) {
        const StagedCall& c = calls[i];
        if (!keep[i]) {
            if (c.kind != StagedCall::Kind::command) continue;
            Aggregate* a = aggregate_command(c.queue, c.name, c.kernel, trace_format::host_memory_name(c.host).data(),
                                             c.bytes, c.status != CL_SUCCESS);
            if (c.event) watches[watched++] = {queue_state(c.queue), {c.event, 0, a}};
            continue;
        }
        RecordLine line(c.kind == StagedCall::Kind::wait ? 'W' : 'E');
        format(c, thread, seq, line);
        const std::string_view record = line.line();
        // Under a size cap a record is admitted only with its bytes (and a command's T) paid: a
        // command refused at the limit is counted in its aggregate instead, so totals stay exact.
        const bool command = c.kind == StagedCall::Kind::command;
        if (limited && !space_take(record.size() + (command && c.event ? t_record_prepay : 0), false)) {
            if (command) {
                Aggregate* a =
                    aggregate_command(c.queue, c.name, c.kernel, trace_format::host_memory_name(c.host).data(), c.bytes,
                                      c.status != CL_SUCCESS);
                if (c.event) watches[watched++] = {queue_state(c.queue), {c.event, 0, a}};
                ++seq;  // its number stays unused
            }
            continue;
        }
        text.add(record);
        if (command) {
            // queue_state() may write the queue's Q (a queue created behind the layer's back): it
            // then precedes these E records, which are still in `text`.
            if (c.event) watches[watched++] = {queue_state(c.queue), {c.event, seq}};
            ++seq;
        }
    }
    text.flush();

    // After the E records, so a T never precedes its E.
    PendingEvent run[stage_capacity];
    for (unsigned i = 0; i < watched;) {
        QueueState* qs = watches[i].queue;
        unsigned n = 0;
        for (; i < watched && watches[i].queue == qs; ++i)
            run[n++] = watches[i].pending;
        watch_events(qs, run, n);
        drain(qs, SIZE_MAX, qs->in_order);
    }
}

void write_out(Stage& stage) {
    if (g_forked_child.load(std::memory_order_relaxed)) return;  // the parent's stage and events
    struct InFlight {
        InFlight() { writes_in_flight.fetch_add(1, std::memory_order_acq_rel); }
        ~InFlight() { writes_in_flight.fetch_sub(1, std::memory_order_acq_rel); }
    } in_flight;
    StagedCall calls[stage_capacity];
    unsigned n;
    int thread;
    {
        std::lock_guard lock(stage.mu);
        n = stage.count;
        thread = stage.thread;
        std::copy(stage.items, stage.items + n, calls);
        stage.count = 0;
        stage.has_items.store(false, std::memory_order_relaxed);
    }
    // Formatted and written outside the lock: the stage is free again for its thread at once.
    if (n) write_calls(calls, n, thread);
}

}  // namespace

void stage(const StagedCall& call) {
    Stage& s = own_stage();
    bool full;
    {
        std::lock_guard lock(s.mu);
        s.items[s.count++] = call;
        full = s.count == stage_capacity;
        if (s.count == 1) s.oldest.store(call.t1, std::memory_order_relaxed);
        s.has_items.store(true, std::memory_order_relaxed);
        s.last_exit.store(call.t1, std::memory_order_relaxed);
    }
    if (full) write_out(s);
}

bool flush_staged_if_due(uint64_t now) {
    Stage* s = t_stage;
    if (!s || !s->has_items.load(std::memory_order_relaxed)) return false;
    if (now - s->last_exit.load(std::memory_order_relaxed) < stage_idle_ns &&
        now - s->oldest.load(std::memory_order_relaxed) < stage_max_age_ns)
        return false;
    write_out(*s);
    return true;
}

void flush_staged() {
    if (Stage* s = t_stage) write_out(*s);
}

void flush_staged_on_signal() {
    if (g_forked_child.load(std::memory_order_relaxed)) return;
    std::unique_lock registry_lock(registry().mu, std::try_to_lock);
    if (!registry_lock.owns_lock()) return;
    for (Stage* s : registry().all) {
        std::unique_lock lock(s->mu, std::try_to_lock);
        if (!lock.owns_lock() || s->count == 0) continue;
        const unsigned commands = static_cast<unsigned>(std::count_if(
            s->items, s->items + s->count, [](const StagedCall& c) { return c.kind == StagedCall::Kind::command; }));
        uint64_t seq = last_seq.fetch_add(commands, std::memory_order_relaxed) + 1;
        for (unsigned i = 0; i < s->count; ++i) {
            const StagedCall& c = s->items[i];
            RecordLine line(c.kind == StagedCall::Kind::wait ? 'W' : 'E');
            format(c, s->thread, seq, line);
            writer().write_if_free(line.line());
            if (c.kind == StagedCall::Kind::command) ++seq;
        }
        s->count = 0;
        s->has_items.store(false, std::memory_order_relaxed);
    }
}

void flush_all_staged() {
    std::vector<Stage*> stages;
    {
        std::unique_lock lock(registry().mu, std::defer_lock);
        for (int i = 0; !lock.try_lock(); ++i) {
            if (i == 100) return;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        stages = registry().all;
    }
    for (Stage* s : stages) {
        // Each thread holds its stage's lock only to copy a call in or the stage out; a lock that
        // stays taken belongs to a thread stopped in the middle of that, whose stage is skipped.
        std::unique_lock lock(s->mu, std::defer_lock);
        bool locked = false;
        for (int i = 0; i < 20 && !(locked = lock.try_lock()); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        if (!locked) continue;
        lock.unlock();
        write_out(*s);
    }
    // Other threads writing out their stages right now (they took the calls before the loop above).
    for (int i = 0; i < 200 && writes_in_flight.load(std::memory_order_acquire) > 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void reset_stages_after_fork() {
    Registry& r = registry();
    new (&r.mu) std::mutex;  // another thread of the parent may have held it at the fork
    r.free.clear();
    for (Stage* s : r.all) {
        new (&s->mu) std::mutex;
        s->count = 0;
        s->has_items.store(false, std::memory_order_relaxed);
        if (s != t_stage) r.free.push_back(s);
    }
    last_seq.store(0, std::memory_order_relaxed);
    writes_in_flight.store(0, std::memory_order_relaxed);
}

}  // namespace clprobe::layer

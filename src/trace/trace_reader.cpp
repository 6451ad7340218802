#include "trace/trace_reader.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

namespace clprobe {

namespace {

// A record's fields; a record has at most 15.
struct Fields {
    std::array<std::string_view, 16> at{};
    std::size_t count = 0;
};

Fields split(std::string_view line) {
    Fields f;
    std::size_t start = 0;
    while (f.count < f.at.size()) {
        const auto tab = line.find('\t', start);
        f.at[f.count++] = line.substr(start, tab == std::string_view::npos ? std::string_view::npos : tab - start);
        if (tab == std::string_view::npos) break;
        start = tab + 1;
    }
    return f;
}

// A malformed number makes the whole record unreadable (thrown, caught per line).
struct BadRecord {};

std::uint64_t unsigned_of(std::string_view s, int base = 10) {
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    if (ec != std::errc() || end != s.data() + s.size()) throw BadRecord{};
    return v;
}

std::int64_t signed_of(std::string_view s) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) throw BadRecord{};
    return v;
}

// "gx,gy,gz" -> gx*gy*gz; "-" or "" -> 0.
std::uint64_t items_of(std::string_view s) {
    if (s.empty() || s == "-") return 0;
    std::uint64_t product = 1;
    std::size_t start = 0;
    while (true) {
        const auto comma = s.find(',', start);
        product *=
            unsigned_of(s.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
        if (comma == std::string_view::npos) return product;
        start = comma + 1;
    }
}

class Reader {
  public:
    void line(std::string_view text) {
        if (text.empty()) return;
        const Fields f = split(text);
        try {
            if (!record(f)) ++trace_.unreadable_lines;
        } catch (const BadRecord&) {
            ++trace_.unreadable_lines;
        }
    }
    ProgramTrace finish() { return std::move(trace_); }

  private:
    ProgramTrace trace_;
    std::unordered_map<std::string, std::uint32_t> devices_, queues_, kernels_, kernel_name_index_;
    std::unordered_set<std::string> created_queues_;  // handles with a creation record so far
    std::unordered_map<std::string, std::size_t> live_allocations_;
    struct ProgramOrigin {
        std::string origin;
        std::uint64_t hash = 0;
    };
    std::unordered_map<std::string, ProgramOrigin> programs_;
    std::unordered_map<std::uint64_t, std::size_t> awaiting_times_;  // seq -> command index
    std::unordered_map<std::string, std::size_t> aggregate_index_;   // "queue\tcommand\tkernel"

    // Whether the record had the right shape; unknown types are accepted and skipped.
    bool record(const Fields& f) {
        const std::string_view type = f.at[0];
        if (type == "H") return header(f);
        if (trace_.empty()) return false;  // records before a header: not this format
        ++trace_.records;
        if (type == "E") return enqueue(f);
        if (type == "T") return times(f);
        if (type == "W") return wait(f);
        if (type == "M") return allocation(f);
        if (type == "R") return release(f);
        if (type == "K") return kernel(f);
        if (type == "P") return program(f);
        if (type == "B") return build(f);
        if (type == "Q") return queue(f);
        if (type == "D") return device(f);
        if (type == "X") return exit_record(f);
        if (type == "O") return origin(f);
        if (type == "S") return signal_record(f);
        if (type == "A") return aggregate(f);
        if (type == "Z") return sampling(f);
        if (type == "V") return variable(f);
        if (type == "C") return capture_time(f);
        return true;
    }

    bool header(const Fields& f) {
        if (f.count < 4 || !trace_.empty()) return false;
        trace_.format_version = static_cast<int>(unsigned_of(f.at[1]));
        trace_.pid = static_cast<int>(unsigned_of(f.at[2]));
        trace_.layer_start = unsigned_of(f.at[3]);
        ++trace_.records;
        return true;
    }

    std::uint32_t device_index(std::string_view handle) {
        const auto [it, added] = devices_.try_emplace(std::string(handle), trace_.devices.size());
        if (added) trace_.devices.push_back({std::string(handle), "other", "", ""});
        return it->second;
    }

    std::uint32_t queue_index(std::string_view handle) {
        const auto [it, added] = queues_.try_emplace(std::string(handle), trace_.queues.size());
        if (added) trace_.queues.push_back({std::string(handle), -1, 0, false});
        return it->second;
    }

    bool device(const Fields& f) {
        if (f.count < 5) return false;
        TracedDevice& d = trace_.devices[device_index(f.at[1])];
        d.type = f.at[2];
        d.vendor = f.at[3];
        d.name = f.at[4];
        return true;
    }

    bool queue(const Fields& f) {
        if (f.count < 6) return false;
        // A second creation record for a handle already created: the driver reused the address of a
        // released queue (Intel's runtime does when threads create and release queues in turn). It
        // is a new queue; commands from here on name it.
        const std::string handle(f.at[2]);
        if (!created_queues_.insert(handle).second) queues_.erase(handle);
        TracedQueue& q = trace_.queues[queue_index(handle)];
        q.created = unsigned_of(f.at[1]);
        q.device = static_cast<std::int32_t>(device_index(f.at[3]));
        q.profiling_added = f.at[5] == "1";
        return true;
    }

    bool kernel(const Fields& f) {
        if (f.count < 4) return false;
        const std::string name(f.at[3]);
        const auto [it, added] = kernel_name_index_.try_emplace(name, trace_.kernel_names.size());
        if (added) trace_.kernel_names.push_back(name);
        kernels_[std::string(f.at[1])] = it->second;
        return true;
    }

    bool program(const Fields& f) {
        if (f.count < 6) return false;
        programs_[std::string(f.at[2])] = {std::string(f.at[3]), unsigned_of(f.at[4], 16)};
        return true;
    }

    bool build(const Fields& f) {
        if (f.count < 7) return false;
        TracedBuild b;
        b.host_begin = unsigned_of(f.at[1]);
        b.host_end = unsigned_of(f.at[2]);
        b.op = f.at[4];
        b.status = static_cast<int>(signed_of(f.at[5]));
        b.thread = static_cast<std::uint32_t>(unsigned_of(f.at[6]));
        if (const auto it = programs_.find(std::string(f.at[3])); it != programs_.end()) {
            b.origin = it->second.origin;
            b.source_hash = it->second.hash;
        } else if (b.op == "link") {
            b.origin = "link";
        }
        trace_.builds.push_back(std::move(b));
        return true;
    }

    bool allocation(const Fields& f) {
        if (f.count < 8) return false;
        if (signed_of(f.at[7]) != 0) return true;  // a failed allocation holds no memory
        TracedAllocation a;
        a.created_begin = unsigned_of(f.at[1]);
        a.created_end = unsigned_of(f.at[2]);
        a.handle = f.at[3];
        a.bytes = unsigned_of(f.at[4]);
        a.flags = unsigned_of(f.at[5], 16);
        a.kind = f.at[6];
        live_allocations_[a.handle] = trace_.allocations.size();
        trace_.allocations.push_back(std::move(a));
        return true;
    }

    bool release(const Fields& f) {
        if (f.count < 4) return false;
        const auto it = live_allocations_.find(std::string(f.at[3]));
        if (it == live_allocations_.end()) return true;  // created before tracing, or not an allocation we saw
        TracedAllocation& a = trace_.allocations[it->second];
        a.released_begin = unsigned_of(f.at[1]);
        a.released_end = unsigned_of(f.at[2]);
        live_allocations_.erase(it);
        return true;
    }

    bool enqueue(const Fields& f) {
        if (f.count < 15) return false;
        if (signed_of(f.at[14]) != 0) {
            ++trace_.failed_commands;
            return true;
        }
        TracedCommand c;
        c.seq = unsigned_of(f.at[1]);
        c.host_begin = unsigned_of(f.at[2]);
        c.host_end = unsigned_of(f.at[3]);
        c.thread = static_cast<std::uint32_t>(unsigned_of(f.at[4]));
        c.queue = queue_index(f.at[5]);
        c.command = f.at[6];
        c.kind = command_kind_of(c.command);
        if (f.at[7] != "0") {
            const auto it = kernels_.find(std::string(f.at[7]));
            c.kernel = it != kernels_.end() ? static_cast<std::int32_t>(it->second) : unknown_kernel();
        }
        c.bytes = unsigned_of(f.at[8]);
        c.blocking = f.at[9] == "1";
        c.host_memory = trace_format::host_memory_of(f.at[10]);
        c.global = f.at[11];
        c.local = f.at[12];
        c.global_items = items_of(c.global);
        c.buffers = static_cast<std::uint32_t>(unsigned_of(f.at[13]));
        if (f.count > 15 && f.at[15] != "0") c.mem = f.at[15];
        awaiting_times_[c.seq] = trace_.commands.size();
        trace_.commands.push_back(std::move(c));
        return true;
    }

    // A kernel object created before the layer saw it (it should not happen, but a name is needed).
    std::int32_t unknown_kernel() {
        const auto [it, added] = kernel_name_index_.try_emplace("(unnamed)", trace_.kernel_names.size());
        if (added) trace_.kernel_names.push_back("(unnamed)");
        return static_cast<std::int32_t>(it->second);
    }

    bool times(const Fields& f) {
        if (f.count < 7) return false;
        const auto it = awaiting_times_.find(unsigned_of(f.at[1]));
        if (it == awaiting_times_.end()) return true;
        DeviceTimes t;
        t.queued = unsigned_of(f.at[2]);
        t.submit = unsigned_of(f.at[3]);
        t.start = unsigned_of(f.at[4]);
        t.end = unsigned_of(f.at[5]);
        t.status = static_cast<int>(signed_of(f.at[6]));
        trace_.commands[it->second].device = t;
        awaiting_times_.erase(it);
        return true;
    }

    bool wait(const Fields& f) {
        if (f.count < 6) return false;
        TracedWait w;
        w.host_begin = unsigned_of(f.at[1]);
        w.host_end = unsigned_of(f.at[2]);
        w.thread = static_cast<std::uint32_t>(unsigned_of(f.at[3]));
        w.op = f.at[4];
        if (f.at[5] != "0") w.queue = queue_index(f.at[5]);
        trace_.waits.push_back(std::move(w));
        return true;
    }

    // A records are cumulative: the last one of a key holds its totals.
    bool aggregate(const Fields& f) {
        if (f.count < 13) return false;
        TracedAggregate a;
        a.queue = queue_index(f.at[2]);
        a.command = f.at[3];
        a.kind = command_kind_of(a.command);
        if (f.at[4] != "0") {
            const auto it = kernels_.find(std::string(f.at[4]));
            a.kernel = it != kernels_.end() ? static_cast<std::int32_t>(it->second) : unknown_kernel();
        }
        a.count = unsigned_of(f.at[5]);
        a.timed = unsigned_of(f.at[6]);
        a.failed = unsigned_of(f.at[7]);
        a.device_ns = unsigned_of(f.at[8]);
        a.min_ns = unsigned_of(f.at[9]);
        a.max_ns = unsigned_of(f.at[10]);
        a.bytes = unsigned_of(f.at[11]);
        a.host_memory = trace_format::host_memory_of(f.at[12]);
        seen(unsigned_of(f.at[1]));
        const std::string key =
            std::string(f.at[2]) + '\t' + a.command + '\t' + std::string(f.at[4]) + '\t' + std::string(f.at[12]);
        const auto [it, added] = aggregate_index_.try_emplace(key, trace_.aggregates.size());
        if (added)
            trace_.aggregates.push_back(std::move(a));
        else if (a.count >= trace_.aggregates[it->second].count)
            trace_.aggregates[it->second] = std::move(a);
        return true;
    }

    bool sampling(const Fields& f) {
        if (f.count < 4) return false;
        const std::uint64_t t = unsigned_of(f.at[1]), period = unsigned_of(f.at[2]);
        TraceSampling& s = trace_.sampling;
        s.limited = true;
        if (period > 1 && !s.since) s.since = t;
        s.max_period = std::max(s.max_period, period);
        s.dropped_writes = std::max(s.dropped_writes, unsigned_of(f.at[3]));
        return true;
    }

    bool exit_record(const Fields& f) {
        if (f.count < 2) return false;
        trace_.clean_exit = true;
        trace_.layer_end = unsigned_of(f.at[1]);
        seen(*trace_.layer_end);
        return true;
    }

    bool origin(const Fields& f) {
        if (f.count < 4) return false;
        ProcessOrigin o;
        o.ppid = static_cast<int>(unsigned_of(f.at[1]));
        o.origin = f.at[2];
        o.start = unsigned_of(f.at[3]);
        if (f.count > 4) o.command_line = f.at[4];
        trace_.origin = std::move(o);
        return true;
    }

    bool capture_time(const Fields& f) {
        if (f.count < 3) return false;
        const std::uint64_t begin = unsigned_of(f.at[1]), end = unsigned_of(f.at[2]);
        if (end > begin) trace_.captures.emplace_back(begin, end);
        seen(end);
        return true;
    }

    bool variable(const Fields& f) {
        if (f.count < 2) return false;
        trace_.environment[std::string(f.at[1])] = f.count > 2 ? std::string(f.at[2]) : std::string();
        return true;
    }

    bool signal_record(const Fields& f) {
        if (f.count < 3) return false;
        trace_.fatal_signal_at = unsigned_of(f.at[1]);
        trace_.fatal_signal = static_cast<int>(unsigned_of(f.at[2]));
        seen(*trace_.fatal_signal_at);
        return true;
    }

    void seen(std::uint64_t t) { trace_.last_record = std::max(trace_.last_record, t); }
};

}  // namespace

ProgramTrace read_program_trace(std::istream& in) {
    Reader reader;
    std::string line;
    while (std::getline(in, line)) {
        if (in.eof()) break;  // no newline: a record cut short by a crash
        // NUL bytes are the unused tail of a preallocated chunk of the file.
        if (line.find('\0') != std::string::npos) std::erase(line, '\0');
        reader.line(line);
    }
    ProgramTrace trace = reader.finish();
    // Commands are written when their enqueue returns, so threads may interleave seq numbers. Most
    // traces are in order already, and a stable sort's buffer would hold half of them once more.
    const auto by_seq = [](const TracedCommand& a, const TracedCommand& b) { return a.seq < b.seq; };
    if (!std::is_sorted(trace.commands.begin(), trace.commands.end(), by_seq))
        std::stable_sort(trace.commands.begin(), trace.commands.end(), by_seq);
    // Where the records end: what a process still running when clprobe stopped is known up to.
    std::uint64_t& last = trace.last_record;
    last = std::max(last, trace.layer_start);
    for (const auto& c : trace.commands)
        last = std::max(last, c.host_end);
    for (const auto& w : trace.waits)
        last = std::max(last, w.host_end);
    for (const auto& b : trace.builds)
        last = std::max(last, b.host_end);
    for (const auto& a : trace.allocations)
        last = std::max({last, a.created_end, a.released_end.value_or(0)});
    return trace;
}

std::optional<ProgramTrace> read_program_trace_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    return read_program_trace(in);
}

}  // namespace clprobe

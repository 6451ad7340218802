#include "layer/replay_capture.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <set>
#include <unordered_map>
#include <utility>

#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/replay_format.hpp"

namespace clprobe::layer {

std::atomic<bool> g_replay_enabled{false};

using replay::ArgKind;

struct ReplayCapture {
    replay::CaptureRecord record;
    cl_command_queue queue = nullptr;
    cl_kernel kernel = nullptr;
    std::pair<cl_program, std::string> key;
    std::string program_bytes;
    std::vector<cl_mem> mems;  // per record.args entry: the buffer, or null
    std::vector<std::vector<uint8_t>> inputs, outputs;
    uint64_t charged = 0;
    uint64_t items = 0;       // work-items of the launch
    bool recapture = false;   // replaces an earlier capture of the same kernel (a much larger launch)
    uint64_t blocked_at = 0;  // host time the capture's own waits began
};

namespace {

struct ArgValue {
    ArgKind kind = ArgKind::scalar;
    uint64_t size = 0;
    std::vector<uint8_t> bytes;  // scalar
    cl_mem mem = nullptr;        // buffer
};

struct KernelEntry {
    cl_program program = nullptr;
    std::string name;
    std::map<cl_uint, ArgValue> args;
};

struct ProgramEntry {
    std::string origin;  // source, il, binary, builtin, link
    std::string bytes;
    std::string options;
};

using KernelKey = std::pair<cl_program, std::string>;

struct State {
    std::mutex mu;  // guards everything below; never held across a driver call
    std::string dir;
    uint64_t at = 2;
    // CLPROBE_REPLAY_INPUTS_ONLY: captures for counting work only keep no outputs (half the bytes,
    // half the reads in the program's run).
    bool inputs_only = false;
    replay::CaptureBudget budget;
    std::unordered_map<cl_program, ProgramEntry> programs;
    std::unordered_map<cl_kernel, KernelEntry> kernels;
    std::unordered_map<cl_sampler, uint64_t> samplers;  // live samplers: the program's references
    std::map<KernelKey, uint64_t> launches;             // per kernel name and program: launches seen
    std::set<KernelKey> claimed;                        // captured, skipped, or being captured
    // The capture written for a kernel: its launch's work-items, folder and bytes. A later launch
    // of several times the work-items is captured again in its place (a program's first launches
    // are often small probes: hashcat's autotune), at its 2nd launch of that size, at most
    // max_recaptures times.
    struct Written {
        uint64_t items = 0;
        std::string folder;
        uint64_t charged = 0;
        int recaptures = 0;
        bool busy = false;  // a recapture of it is under way
    };
    std::map<KernelKey, Written> written;
    std::map<std::pair<KernelKey, uint64_t>, uint64_t> size_launches;  // larger launches seen, per size
    uint64_t next_folder = 0;
    // Held from a capture's first wait to its last read: one capture at a time, so two threads'
    // captures never wait on each other's queues half-way.
    std::mutex capture_mu;
};

State* g_state = nullptr;  // made at init, never freed (the program may call OpenCL from its exit)

std::string info_text(cl_device_id d, cl_device_info what) {
    size_t size = 0;
    if (next.clGetDeviceInfo(d, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string s(size, '\0');
    if (next.clGetDeviceInfo(d, what, size, s.data(), nullptr) != CL_SUCCESS) return {};
    s.resize(s.find('\0') == std::string::npos ? s.size() : s.find('\0'));
    return s;
}

replay::DeviceText device_text(cl_command_queue q) {
    replay::DeviceText out;
    cl_device_id d = nullptr;
    if (next.clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, nullptr) != CL_SUCCESS || !d) return out;
    out.name = info_text(d, CL_DEVICE_NAME);
    out.vendor = info_text(d, CL_DEVICE_VENDOR);
    out.driver_version = info_text(d, CL_DRIVER_VERSION);
    cl_platform_id platform = nullptr;
    size_t size = 0;
    if (next.clGetDeviceInfo(d, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr) == CL_SUCCESS && platform &&
        next.clGetPlatformInfo(platform, CL_PLATFORM_NAME, 0, nullptr, &size) == CL_SUCCESS && size) {
        out.platform.assign(size, '\0');
        if (next.clGetPlatformInfo(platform, CL_PLATFORM_NAME, size, out.platform.data(), nullptr) != CL_SUCCESS)
            out.platform.clear();
        out.platform.resize(out.platform.find('\0') == std::string::npos ? out.platform.size()
                                                                         : out.platform.find('\0'));
    }
    return out;
}

bool write_all(const std::string& path, const void* data, size_t n) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) return false;
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            ::close(fd);
            return false;
        }
        p += w;
        n -= static_cast<size_t>(w);
    }
    return ::close(fd) == 0;
}

// A new <dir>/<pid>-<n>/, or "" when none can be made.
std::string new_folder() {
    const std::string pid = std::to_string(static_cast<long long>(::getpid()));
    for (int tries = 0; tries < 1000; ++tries) {
        uint64_t n;
        {
            std::lock_guard lock(g_state->mu);
            n = g_state->next_folder++;
        }
        std::string path = g_state->dir + "/" + pid + "-" + std::to_string(n);
        if (::mkdir(path.c_str(), 0700) == 0) return path;
        if (errno != EEXIST) return {};
    }
    return {};
}

// A C record: the capture's own host time from `since` to now, which the analysis cuts out of the
// program's timeline (the program did not spend it). Two per capture: its waits and reads before
// the launch, and after the launch completed its reads and files; the launch itself is the
// program's.
void note_capture_time(uint64_t since) {
    if (!since) return;
    RecordLine line('C');
    line.num(since).num(now_ns()).num(static_cast<uint64_t>(thread_id()));
    emit(line.line());
}

constexpr int max_recaptures = 2;
constexpr uint64_t recapture_factor = 4;  // a launch of at least 4x the captured work-items

// The data files, then capture.json written as capture.json.tmp and renamed: a folder without
// capture.json is one a reader ignores. The folder, or "" when any write failed.
std::string write_capture(const ReplayCapture& c) {
    const std::string folder = new_folder();
    if (folder.empty()) return {};
    const replay::CaptureRecord& r = c.record;
    if (!r.skipped) {
        if (!write_all(folder + "/" + replay::program_file(r.origin), c.program_bytes.data(), c.program_bytes.size()))
            return {};
        for (size_t i = 0; i < r.args.size(); ++i) {
            if (r.args[i].kind != ArgKind::buffer && r.args[i].kind != ArgKind::image) continue;
            if (!write_all(folder + "/" + replay::data_file(r.args[i].index, false), c.inputs[i].data(),
                           c.inputs[i].size()) ||
                (r.outputs && !write_all(folder + "/" + replay::data_file(r.args[i].index, true), c.outputs[i].data(),
                                         c.outputs[i].size())))
                return {};
        }
    }
    const std::string text = replay::capture_json(r);
    const std::string tmp = folder + "/capture.json.tmp";
    if (!write_all(tmp, text.data(), text.size())) return {};
    return ::rename(tmp.c_str(), (folder + "/capture.json").c_str()) == 0 ? folder : std::string();
}

std::optional<std::string> program_reason(const ProgramEntry* p) {
    if (!p) return std::string("program not seen created");
    if (p->origin == "builtin") return std::string("program built from built-in kernels");
    if (p->origin == "link") return std::string("program linked from several separately compiled programs");
    if (p->origin == "headers") return std::string("program compiled with embedded headers (clCompileProgram)");
    if (p->origin == "source") return replay::source_skip_reason(p->bytes);
    return std::nullopt;
}

// What the driver says of argument `i` where it says anything (kernel argument info is optional
// unless the program was built with -cl-kernel-arg-info): the kind it forces, if any.
std::optional<ArgKind> declared_kind(cl_kernel k, cl_uint i, ArgKind set_as) {
    if (!next.clGetKernelArgInfo) return std::nullopt;
    char type[256] = {};
    if (next.clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof type - 1, type, nullptr) == CL_SUCCESS)
        if (auto kind = replay::kind_from_type_name(type)) return kind;
    cl_kernel_arg_address_qualifier q = 0;
    if (set_as != ArgKind::buffer &&
        next.clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr) == CL_SUCCESS &&
        (q == CL_KERNEL_ARG_ADDRESS_GLOBAL || q == CL_KERNEL_ARG_ADDRESS_CONSTANT))
        return ArgKind::unknown;  // a pointer argument set to something that is not a buffer the layer saw
    return std::nullopt;
}

// The buffer a sub-buffer was made from, else the buffer itself.
cl_mem memory_root(cl_mem m) {
    cl_mem parent = nullptr;
    if (next.clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr) == CL_SUCCESS &&
        parent)
        return parent;
    return m;
}

// A memory argument the host may not read (the layer reads it from the host): the reason.
std::optional<std::string> host_access_reason(const char* what, cl_uint i, cl_mem_flags flags) {
    if (flags & CL_MEM_HOST_NO_ACCESS)
        return std::string(what) + " argument " + std::to_string(i) + " created with CL_MEM_HOST_NO_ACCESS";
    if (flags & CL_MEM_HOST_WRITE_ONLY)
        return std::string(what) + " argument " + std::to_string(i) + " created with CL_MEM_HOST_WRITE_ONLY";
    return std::nullopt;
}

template <typename T>
T image_info(cl_mem m, cl_image_info what) {
    T value{};
    if (next.clGetImageInfo(m, what, sizeof value, &value, nullptr) != CL_SUCCESS) return T{};
    return value;
}

// An image argument's shape from clGetImageInfo, or the reason it is not captured.
std::optional<std::string> describe_image(cl_mem m, cl_uint i, cl_mem_object_type type, replay::ImageShape& shape) {
    // Mip levels and samples are OpenCL 1.2 queries; a driver that fails them has neither.
    const auto reason = replay::image_skip_reason(i, type, image_info<cl_uint>(m, CL_IMAGE_NUM_MIP_LEVELS),
                                                  image_info<cl_uint>(m, CL_IMAGE_NUM_SAMPLES));
    if (reason) return reason;
    cl_image_format format{};
    if (next.clGetImageInfo(m, CL_IMAGE_FORMAT, sizeof format, &format, nullptr) != CL_SUCCESS)
        return "image argument " + std::to_string(i) + ": its format is unreadable";
    shape.type = type;
    shape.channel_order = format.image_channel_order;
    shape.channel_type = format.image_channel_data_type;
    shape.element_size = image_info<size_t>(m, CL_IMAGE_ELEMENT_SIZE);
    // The driver says 0 for an extent the type does not have; the capture says 1.
    shape.width = std::max<size_t>(1, image_info<size_t>(m, CL_IMAGE_WIDTH));
    shape.height = std::max<size_t>(1, image_info<size_t>(m, CL_IMAGE_HEIGHT));
    shape.depth = std::max<size_t>(1, image_info<size_t>(m, CL_IMAGE_DEPTH));
    shape.array_size = std::max<size_t>(1, image_info<size_t>(m, CL_IMAGE_ARRAY_SIZE));
    if (type != CL_MEM_OBJECT_IMAGE2D && type != CL_MEM_OBJECT_IMAGE2D_ARRAY && type != CL_MEM_OBJECT_IMAGE3D)
        shape.height = 1;
    if (type != CL_MEM_OBJECT_IMAGE3D) shape.depth = 1;
    if (type != CL_MEM_OBJECT_IMAGE1D_ARRAY && type != CL_MEM_OBJECT_IMAGE2D_ARRAY) shape.array_size = 1;
    if (shape.element_size == 0 || replay::image_bytes(shape) == 0)
        return "image argument " + std::to_string(i) + ": its size is unreadable";
    return std::nullopt;
}

// A sampler argument's properties. Only a sampler the layer saw created and the program still
// holds is asked (the driver's argument info may say sampler_t of a value the layer cannot vouch
// for; asking a stale handle could crash the program).
std::optional<std::string> describe_sampler(const ArgValue& v, cl_uint i, replay::SamplerShape& shape) {
    cl_sampler s = nullptr;
    if (v.kind != ArgKind::sampler || v.bytes.size() != sizeof s)
        return "sampler argument " + std::to_string(i) + " is no sampler the layer saw created";
    std::memcpy(&s, v.bytes.data(), sizeof s);
    {
        std::lock_guard lock(g_state->mu);
        if (!g_state->samplers.count(s))
            return "sampler argument " + std::to_string(i) + " was released before the launch";
    }
    cl_bool normalized = CL_FALSE;
    cl_addressing_mode addressing = 0;
    cl_filter_mode filter = 0;
    if (!s ||
        next.clGetSamplerInfo(s, CL_SAMPLER_NORMALIZED_COORDS, sizeof normalized, &normalized, nullptr) != CL_SUCCESS ||
        next.clGetSamplerInfo(s, CL_SAMPLER_ADDRESSING_MODE, sizeof addressing, &addressing, nullptr) != CL_SUCCESS ||
        next.clGetSamplerInfo(s, CL_SAMPLER_FILTER_MODE, sizeof filter, &filter, nullptr) != CL_SUCCESS)
        return "sampler argument " + std::to_string(i) + " is unreadable";
    shape.normalized_coords = normalized == CL_TRUE;
    shape.addressing_mode = addressing;
    shape.filter_mode = filter;
    return std::nullopt;
}

// Fills the record's arguments from what the kernel was set to; the reason it cannot be
// captured, if any.
std::optional<std::string> collect_args(ReplayCapture& c, const std::map<cl_uint, ArgValue>& set) {
    cl_uint count = 0;
    if (next.clGetKernelInfo(c.kernel, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr) != CL_SUCCESS)
        return std::string("the kernel's argument count is unreadable");
    for (cl_uint i = 0; i < count; ++i) {
        const auto it = set.find(i);
        if (it == set.end()) return "argument " + std::to_string(i) + " was not set through clSetKernelArg";
        const ArgValue& v = it->second;
        replay::CaptureArg a;
        a.index = i;
        a.kind = v.kind;
        // A NULL cl_mem for a pointer argument (clSetKernelArg's value points to a null handle, as
        // hashcat passes for buffers a kernel does not use) is replayed as it was set: its bytes.
        const bool null_pointer = v.kind == ArgKind::scalar && v.size == sizeof(cl_mem) &&
                                  std::all_of(v.bytes.begin(), v.bytes.end(), [](uint8_t b) { return b == 0; });
        if (const auto declared = declared_kind(c.kernel, i, v.kind); declared && !null_pointer) a.kind = *declared;
        cl_mem_object_type type = 0;
        if (v.kind == ArgKind::buffer) {
            if (next.clGetMemObjectInfo(v.mem, CL_MEM_TYPE, sizeof type, &type, nullptr) != CL_SUCCESS)
                return "buffer argument " + std::to_string(i) + " is no longer a valid memory object";
            if (type == CL_MEM_OBJECT_PIPE)
                a.kind = ArgKind::pipe;
            else if (type != CL_MEM_OBJECT_BUFFER)
                a.kind = ArgKind::image;
        }
        if (const auto reason = replay::arg_skip_reason(a.kind, i)) return reason;
        cl_mem mem = nullptr;
        if (a.kind == ArgKind::buffer || a.kind == ArgKind::image) {
            const char* what = a.kind == ArgKind::buffer ? "buffer" : "image";
            // An image the layer did not see created (one from an interop API, say) has no cl_mem here.
            if (v.kind != ArgKind::buffer)
                return std::string(what) + " argument " + std::to_string(i) +
                       " is no memory object the layer saw created";
            cl_mem_flags flags = 0;
            size_t size = 0;
            next.clGetMemObjectInfo(v.mem, CL_MEM_FLAGS, sizeof flags, &flags, nullptr);
            next.clGetMemObjectInfo(v.mem, CL_MEM_SIZE, sizeof size, &size, nullptr);
            if (auto reason = host_access_reason(what, i, flags)) return reason;
            // Two arguments on one memory object (the same one, sub-buffers of one parent, or an
            // image made from a buffer beside that buffer) would become two separate objects in a
            // replay: not the same launch.
            const cl_mem root = memory_root(v.mem);
            for (size_t j = 0; j < c.mems.size(); ++j)
                if (c.mems[j] && memory_root(c.mems[j]) == root)
                    return std::string(what) + " argument " + std::to_string(i) + " shares its memory with argument " +
                           std::to_string(c.record.args[j].index);
            if (a.kind == ArgKind::image) {
                if (auto reason = describe_image(v.mem, i, type, a.image)) return reason;
                size = replay::image_bytes(a.image);  // tightly packed, as read
            }
            a.size = size;
            a.flags = flags;
            mem = v.mem;
        } else if (a.kind == ArgKind::sampler) {
            if (auto reason = describe_sampler(v, i, a.sampler)) return reason;
        } else if (a.kind == ArgKind::local) {
            a.size = v.size;
        } else {
            a.size = v.bytes.size();
            a.bytes = v.bytes;
        }
        c.record.args.push_back(std::move(a));
        c.mems.push_back(mem);
    }
    return std::nullopt;
}

// Reads every buffer and image argument into `into` (blocking, through the driver: no record);
// images tightly packed (zero row and slice pitch), the whole of level 0.
std::optional<std::string> read_memory(ReplayCapture& c, std::vector<std::vector<uint8_t>>& into) {
    into.assign(c.record.args.size(), {});
    for (size_t i = 0; i < c.record.args.size(); ++i) {
        if (!c.mems[i]) continue;
        const replay::CaptureArg& a = c.record.args[i];
        into[i].resize(a.size);
        cl_int rc = CL_SUCCESS;
        if (a.kind == ArgKind::image) {
            const auto r = *replay::image_region(a.image);
            const size_t origin[3] = {0, 0, 0};
            const size_t region[3] = {r[0], r[1], r[2]};
            rc = next.clEnqueueReadImage(c.queue, c.mems[i], CL_TRUE, origin, region, 0, 0, into[i].data(), 0, nullptr,
                                         nullptr);
        } else {
            rc = next.clEnqueueReadBuffer(c.queue, c.mems[i], CL_TRUE, 0, into[i].size(), into[i].data(), 0, nullptr,
                                          nullptr);
        }
        if (rc != CL_SUCCESS)
            return "reading " + std::string(a.kind == ArgKind::image ? "image" : "buffer") + " argument " +
                   std::to_string(a.index) + " failed (OpenCL error " + std::to_string(rc) + ")";
    }
    return std::nullopt;
}

// A capture that will not be written with data: its reason, alone.
void write_skipped(ReplayCapture* c, std::string reason) {
    c->record.skipped = std::move(reason);
    c->record.args.clear();
    write_capture(*c);
    delete c;
}

void release_claim(const KernelKey& key) {
    std::lock_guard lock(g_state->mu);
    g_state->claimed.erase(key);
}

// Whether a command the launch waits on is a user event not yet set: waiting for it here would
// wait for the program, which is inside this call.
bool waits_on_user_event(const NdRange& l) {
    for (cl_uint i = 0; i < l.nwait && l.wait; ++i) {
        cl_command_type type = 0;
        cl_int status = CL_COMPLETE;
        if (next.clGetEventInfo(l.wait[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, nullptr) == CL_SUCCESS &&
            type == CL_COMMAND_USER &&
            next.clGetEventInfo(l.wait[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
                CL_SUCCESS &&
            status != CL_COMPLETE)
            return true;
    }
    return false;
}

}  // namespace

void init_replay_capture() {
    const char* dir = std::getenv("CLPROBE_REPLAY_DIR");
    if (!dir || !*dir) return;
    g_state = new State;
    g_state->dir = dir;
    ::mkdir(dir, 0700);  // clprobe made it; a layer run by hand makes it here, private (docs/trace.md)
    if (const char* b = std::getenv("CLPROBE_REPLAY_BUDGET"); b && *b)
        g_state->budget = replay::CaptureBudget(std::strtoull(b, nullptr, 10));
    if (const char* only = std::getenv("CLPROBE_REPLAY_INPUTS_ONLY"); only && *only == '1') g_state->inputs_only = true;
    if (const char* at = std::getenv("CLPROBE_REPLAY_AT"); at && *at)
        g_state->at = std::max<uint64_t>(1, std::strtoull(at, nullptr, 10));
    g_replay_enabled.store(true);
}

void reset_replay_after_fork() {
    if (!g_state) return;
    new (&g_state->mu) std::mutex;
    new (&g_state->capture_mu) std::mutex;
    g_state->next_folder = 0;  // a new pid names the child's folders
    g_state->written.clear();  // the parent's captures are the parent's
    g_state->size_launches.clear();
}

void replay_note_program(cl_program p, const char* origin, std::string bytes) {
    if (!p || !g_state) return;
    std::lock_guard lock(g_state->mu);
    g_state->programs[p] = ProgramEntry{origin, std::move(bytes), {}};
}

void replay_note_build(cl_program p, const char* options) {
    if (!p || !g_state) return;
    std::lock_guard lock(g_state->mu);
    const auto it = g_state->programs.find(p);
    if (it != g_state->programs.end()) it->second.options = options ? options : "";
}

void replay_note_compile(cl_program p, const char* options, cl_uint num_headers) {
    if (!p || !g_state) return;
    std::lock_guard lock(g_state->mu);
    const auto it = g_state->programs.find(p);
    if (it == g_state->programs.end()) return;
    it->second.options = options ? options : "";
    if (num_headers > 0) it->second.origin = "headers";
}

void replay_note_link(cl_program linked, cl_uint num_programs, const cl_program* inputs, const char* options) {
    if (!linked || !g_state) return;
    std::lock_guard lock(g_state->mu);
    ProgramEntry entry{"link", {}, {}};
    const auto it = num_programs == 1 && inputs ? g_state->programs.find(inputs[0]) : g_state->programs.end();
    if (it != g_state->programs.end() && it->second.origin == "source") {
        entry = it->second;
        if (options && *options) entry.options += std::string(entry.options.empty() ? "" : " ") + options;
    }
    g_state->programs[linked] = std::move(entry);
}

void replay_note_kernel(cl_kernel k, cl_program p, std::string_view name, cl_kernel cloned_from) {
    if (!k || !g_state) return;
    std::lock_guard lock(g_state->mu);
    KernelEntry entry{p, std::string(name), {}};
    if (cloned_from) {
        const auto it = g_state->kernels.find(cloned_from);
        if (it != g_state->kernels.end()) entry.args = it->second.args;  // a clone keeps the arguments set so far
    }
    g_state->kernels[k] = std::move(entry);
}

void replay_note_arg(cl_kernel k, cl_uint index, size_t size, const void* value, bool known_mem) {
    if (!g_state) return;
    ArgValue v;
    std::lock_guard lock(g_state->mu);
    bool known_sampler = false;
    if (!known_mem && value && size == sizeof(cl_sampler)) {
        cl_sampler s = nullptr;
        std::memcpy(&s, value, sizeof s);
        known_sampler = g_state->samplers.count(s) > 0;
    }
    v.kind = replay::classify_arg(size, value == nullptr, known_mem, known_sampler);
    v.size = size;
    if (v.kind == ArgKind::buffer)
        std::memcpy(&v.mem, value, sizeof v.mem);
    else if ((v.kind == ArgKind::scalar || v.kind == ArgKind::sampler) && value)
        v.bytes.assign(static_cast<const uint8_t*>(value), static_cast<const uint8_t*>(value) + size);
    const auto it = g_state->kernels.find(k);
    if (it != g_state->kernels.end()) it->second.args[index] = std::move(v);
}

void replay_note_sampler(cl_sampler s) {
    if (!s || !g_state) return;
    std::lock_guard lock(g_state->mu);
    g_state->samplers[s] = 1;
}

void replay_retain_sampler(cl_sampler s) {
    if (!g_state) return;
    std::lock_guard lock(g_state->mu);
    const auto it = g_state->samplers.find(s);
    if (it != g_state->samplers.end()) ++it->second;
}

bool replay_release_sampler(cl_sampler s) {
    if (!g_state) return false;
    std::lock_guard lock(g_state->mu);
    const auto it = g_state->samplers.find(s);
    if (it == g_state->samplers.end()) return false;
    if (--it->second == 0) g_state->samplers.erase(it);
    return true;
}

void replay_unrelease_sampler(cl_sampler s) {
    if (!g_state) return;
    std::lock_guard lock(g_state->mu);
    ++g_state->samplers[s];
}

void replay_note_svm_arg(cl_kernel k, cl_uint index) {
    if (!g_state) return;
    std::lock_guard lock(g_state->mu);
    const auto it = g_state->kernels.find(k);
    if (it != g_state->kernels.end()) it->second.args[index] = ArgValue{ArgKind::svm, 0, {}, nullptr};
}

// A recapture that will not be written: the earlier capture stays.
void drop_recapture(ReplayCapture* c) {
    {
        std::lock_guard lock(g_state->mu);
        g_state->budget.refund(c->charged);
        g_state->written[c->key].busy = false;
    }
    delete c;
}

// A capture written: the kernel's record of it, and the earlier one it replaces removed.
void note_written(ReplayCapture* c, const std::string& folder) {
    std::string replaced;
    {
        std::lock_guard lock(g_state->mu);
        State::Written& w = g_state->written[c->key];
        if (c->recapture) {
            replaced = w.folder;
            g_state->budget.refund(w.charged);
            ++w.recaptures;
        }
        w.items = c->items;
        w.folder = folder;
        w.charged = c->charged;
        w.busy = false;
    }
    if (replaced.empty()) return;
    // Its files, then the folder: capture.json first, so a reader never sees half a capture.
    for (const char* name : {"capture.json"})
        ::unlink((replaced + "/" + name).c_str());
    if (DIR* d = ::opendir(replaced.c_str())) {
        while (const dirent* e = ::readdir(d))
            if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
                ::unlink((replaced + "/" + e->d_name).c_str());
        ::closedir(d);
    }
    ::rmdir(replaced.c_str());
}

ReplayCapture* replay_begin(const NdRange& l) {
    if (!g_state || !l.global || l.dims < 1 || l.dims > 3) return nullptr;
    KernelKey key;
    uint64_t ordinal = 0;
    uint64_t items = 1;
    for (cl_uint i = 0; i < l.dims; ++i)
        items *= l.global[i];
    bool recapture = false;
    {
        std::lock_guard lock(g_state->mu);
        const auto it = g_state->kernels.find(l.kernel);
        if (it == g_state->kernels.end()) return nullptr;
        key = {it->second.program, it->second.name};
        if (g_state->claimed.count(key)) {
            const auto w = g_state->written.find(key);
            if (w == g_state->written.end() || w->second.busy || w->second.recaptures >= max_recaptures ||
                items < recapture_factor * w->second.items)
                return nullptr;
            // The 2nd launch of that size, as for a first capture: a ramp of sizes each launched once
            // (an autotuner's) is passed over, and the size the program settles on is captured.
            if (++g_state->size_launches[{key, items}] < 2) return nullptr;
            w->second.busy = true;
            recapture = true;
        }
        ordinal = ++g_state->launches[key];
        if (!recapture && ordinal < g_state->at) return nullptr;
    }
    // A launch held back by a user event is left alone; the kernel's next launch is captured.
    if (waits_on_user_event(l)) return nullptr;
    auto* c = new ReplayCapture;
    std::map<cl_uint, ArgValue> args;
    std::optional<std::string> reason;
    {
        std::lock_guard lock(g_state->mu);
        if (!g_state->claimed.insert(key).second && !recapture) {  // another thread took it meanwhile
            delete c;
            return nullptr;
        }
        const auto k = g_state->kernels.find(l.kernel);
        if (k != g_state->kernels.end()) args = k->second.args;
        const auto p = g_state->programs.find(key.first);
        const ProgramEntry* program = p == g_state->programs.end() ? nullptr : &p->second;
        reason = program_reason(program);
        if (program) {
            c->record.origin = program->origin;
            c->record.options = program->options;
            if (!reason) c->program_bytes = program->bytes;
        }
    }
    c->queue = l.queue;
    c->kernel = l.kernel;
    c->key = key;
    c->items = items;
    c->recapture = recapture;
    replay::CaptureRecord& r = c->record;
    r.pid = static_cast<uint64_t>(::getpid());
    r.kernel = key.second;
    r.launch_ordinal = ordinal;
    r.device = device_text(l.queue);
    r.work_dim = l.dims;
    for (cl_uint i = 0; i < l.dims; ++i)
        r.global_size[i] = l.global[i];
    if (l.offset) {
        r.global_offset.emplace();
        for (cl_uint i = 0; i < l.dims; ++i)
            (*r.global_offset)[i] = l.offset[i];
    }
    if (l.local) {
        r.local_size.emplace();
        for (cl_uint i = 0; i < l.dims; ++i)
            (*r.local_size)[i] = l.local[i];
    }
    if (!reason) reason = collect_args(*c, args);
    if (!reason) {
        uint64_t bytes = 0;
        for (const auto& a : r.args)
            if (a.kind == ArgKind::buffer || a.kind == ArgKind::image)
                bytes += (g_state->inputs_only ? 1 : 2) * a.size;  // its input, and its output when kept
        std::lock_guard lock(g_state->mu);
        reason = g_state->budget.charge(bytes);
        if (!reason) c->charged = bytes;
    }
    if (reason) {
        if (recapture)
            drop_recapture(c);
        else
            write_skipped(c, std::move(*reason));
        return nullptr;
    }
    g_state->capture_mu.lock();
    c->blocked_at = now_ns();
    // The inputs as the launch will see them: after what it waits on and what is queued before it.
    if (l.nwait && l.wait) next.clWaitForEvents(l.nwait, l.wait);
    next.clFinish(l.queue);
    if (auto failed = read_memory(*c, c->inputs)) {
        g_state->capture_mu.unlock();
        note_capture_time(c->blocked_at);
        if (c->recapture) {
            drop_recapture(c);
            return nullptr;
        }
        {
            std::lock_guard lock(g_state->mu);
            g_state->budget.refund(c->charged);
        }
        write_skipped(c, std::move(*failed));
        return nullptr;
    }
    note_capture_time(c->blocked_at);
    return c;
}

void finish_capture(ReplayCapture* c, cl_event event);

void replay_end(ReplayCapture* c, cl_int status, cl_event event) {
    auto refund = [c] {
        std::lock_guard lock(g_state->mu);
        g_state->budget.refund(c->charged);
    };
    if (status != CL_SUCCESS) {
        // The launch failed (the program sees its error as ever): the kernel's next launch is tried.
        g_state->capture_mu.unlock();
        if (c->recapture) {
            drop_recapture(c);
            return;
        }
        refund();
        release_claim(c->key);
        delete c;
        return;
    }
    next.clFinish(c->queue);
    const uint64_t launch_done = now_ns();
    finish_capture(c, event);
    note_capture_time(launch_done);
}

// After the captured launch completed: its device time, its outputs, its files. Deletes `c`.
void finish_capture(ReplayCapture* c, cl_event event) {
    auto refund = [c] {
        std::lock_guard lock(g_state->mu);
        g_state->budget.refund(c->charged);
    };
    cl_ulong start = 0, end = 0;
    if (event &&
        next.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr) == CL_SUCCESS &&
        next.clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr) == CL_SUCCESS &&
        end >= start && end > 0)
        c->record.traced_ns = end - start;
    c->record.outputs = !g_state->inputs_only;
    const auto failed = c->record.outputs ? read_memory(*c, c->outputs) : std::optional<std::string>();
    g_state->capture_mu.unlock();
    if (failed && c->recapture) {
        drop_recapture(c);
        return;
    }
    if (failed) {
        refund();
        write_skipped(c, *failed);
        return;
    }
    const std::string folder = write_capture(*c);
    if (folder.empty()) {
        if (c->recapture) {
            drop_recapture(c);
            return;
        }
        refund();
    } else {
        note_written(c, folder);
    }
    delete c;
}

}  // namespace clprobe::layer

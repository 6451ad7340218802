// Hooks for the objects the trace refers to: queues (Q, with profiling turned on), memory (M, R),
// programs (P), builds (B), kernels (K) and the buffers bound to kernel arguments.
//
// Every hook that writes a record first writes out the thread's staged E and W (flush_staged), so
// the file keeps each thread's calls in order.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "layer/command_log.hpp"
#include "layer/hooks.hpp"
#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/replay_capture.hpp"

namespace clprobe::layer {
namespace {

// ---------------------------------------------------------------------------------------------
// Queues. The layer needs device timestamps for every command, so every queue gets
// CL_QUEUE_PROFILING_ENABLE; what the program can observe of that is masked: the queue's
// properties read back as asked, and its events' profiling info stays unavailable.

void first_queue_created() {
    static std::once_flag once;
    std::call_once(once, arm_exit_handler);
}

cl_command_queue CL_API_CALL create_command_queue(cl_context context, cl_device_id device,
                                                  cl_command_queue_properties props, cl_int* err) {
    if (!recording()) return next.clCreateCommandQueue(context, device, props, err);
    flush_staged();
    const uint64_t t = now_ns();
    bool added = !(props & CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue q = next.clCreateCommandQueue(context, device, props | CL_QUEUE_PROFILING_ENABLE, err);
    if (!q && added) {
        // Every device must support profiling, but should one refuse it, the program's own request
        // decides the outcome, not the layer's.
        q = next.clCreateCommandQueue(context, device, props, err);
        added = false;
    }
    if (q) {
        note_queue(q, device, props, added, nullptr, false, t);
        first_queue_created();
    }
    return q;
}

cl_command_queue CL_API_CALL create_command_queue_with_properties(cl_context context, cl_device_id device,
                                                                  const cl_queue_properties* props, cl_int* err) {
    if (!recording()) return next.clCreateCommandQueueWithProperties(context, device, props, err);
    flush_staged();
    const uint64_t t = now_ns();
    cl_command_queue_properties asked = 0;
    bool listed = false;
    std::vector<cl_queue_properties> amended;
    for (const cl_queue_properties* p = props; p && *p; p += 2) {
        const bool is_flags = p[0] == CL_QUEUE_PROPERTIES;
        if (is_flags) asked = static_cast<cl_command_queue_properties>(p[1]), listed = true;
        amended.push_back(p[0]);
        amended.push_back(is_flags ? (p[1] | CL_QUEUE_PROFILING_ENABLE) : p[1]);
    }
    if (!listed) {
        amended.push_back(CL_QUEUE_PROPERTIES);
        amended.push_back(CL_QUEUE_PROFILING_ENABLE);
    }
    amended.push_back(0);
    bool added = !(asked & CL_QUEUE_PROFILING_ENABLE);
    cl_command_queue q = next.clCreateCommandQueueWithProperties(context, device, added ? amended.data() : props, err);
    if (!q && added) {
        q = next.clCreateCommandQueueWithProperties(context, device, props, err);
        added = false;
    }
    if (q) {
        note_queue(q, device, asked, added, props, added, t);
        first_queue_created();
    }
    return q;
}

cl_int CL_API_CALL get_command_queue_info(cl_command_queue q, cl_command_queue_info what, size_t size, void* value,
                                          size_t* size_ret) {
    QueueState* qs = nullptr;
    const bool masked = what == CL_QUEUE_PROPERTIES || what == CL_QUEUE_PROPERTIES_ARRAY;
    if (masked && !g_forked_child.load(std::memory_order_relaxed)) qs = find_queue_state(q);
    if (!qs || !qs->profiling_added) return next.clGetCommandQueueInfo(q, what, size, value, size_ret);
    if (what == CL_QUEUE_PROPERTIES) {
        const cl_int rc = next.clGetCommandQueueInfo(q, what, size, value, size_ret);
        if (rc == CL_SUCCESS && value && size >= sizeof(cl_command_queue_properties))
            *static_cast<cl_command_queue_properties*>(value) &=
                ~cl_command_queue_properties{CL_QUEUE_PROFILING_ENABLE};
        return rc;
    }
    std::vector<cl_queue_properties> list;
    {
        std::lock_guard lock(objects().mu);
        if (!qs->answers_array) return next.clGetCommandQueueInfo(q, what, size, value, size_ret);
        list = qs->asked_list;
    }
    const size_t bytes = list.size() * sizeof(cl_queue_properties);
    if (value) {
        if (size < bytes) return CL_INVALID_VALUE;
        std::memcpy(value, list.data(), bytes);
    }
    if (size_ret) *size_ret = bytes;
    return CL_SUCCESS;
}

cl_int CL_API_CALL get_event_profiling_info(cl_event event, cl_profiling_info what, size_t size, void* value,
                                            size_t* size_ret) {
    cl_command_queue q = nullptr;
    if (!g_forked_child.load(std::memory_order_relaxed) &&
        next.clGetEventInfo(event, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, nullptr) == CL_SUCCESS && q) {
        const QueueState* qs = find_queue_state(q);
        if (qs && qs->profiling_added) return CL_PROFILING_INFO_NOT_AVAILABLE;
    }
    return next.clGetEventProfilingInfo(event, what, size, value, size_ret);
}

cl_int CL_API_CALL release_command_queue(cl_command_queue q) {
    // The program is done with the queue: collect the timestamps that are ready now rather than at exit.
    if (recording() && q) {
        flush_staged();
        if (QueueState* qs = find_queue_state(q)) drain(qs, SIZE_MAX, false);
    }
    return next.clReleaseCommandQueue(q);
}

// ---------------------------------------------------------------------------------------------
// Memory.

constexpr cl_mem_flags host_backed_flags = CL_MEM_ALLOC_HOST_PTR | CL_MEM_USE_HOST_PTR;

// The status a creation call reported, also when the program passed no errcode_ret.
struct Status {
    explicit Status(cl_int* program_slot) : slot(program_slot ? program_slot : &own) {}
    cl_int* slot;
    cl_int own = CL_SUCCESS;
    cl_int of(const void* created) const { return created ? CL_SUCCESS : (*slot != CL_SUCCESS ? *slot : -1); }
};

void note_allocation(uint64_t t0, const void* handle, uint64_t bytes, cl_mem_flags flags, const char* kind,
                     cl_int status) {
    RecordLine line('M');
    line.num(t0).num(now_ns()).handle(handle).num(bytes).hex(flags).word(kind).snum(status);
    emit(line.line());
}

cl_mem remember_mem(uint64_t t0, cl_mem m, uint64_t bytes, cl_mem_flags flags, const char* kind, cl_int status,
                    bool host_backed, uint32_t element_size = 0) {
    if (m) {
        std::lock_guard lock(objects().mu);
        // A handle the driver reuses after a free simply gets the new object's facts.
        objects().mems[m] = MemInfo{bytes, 1, element_size, host_backed};
    }
    note_allocation(t0, m, bytes, flags, kind, status);
    return m;
}

cl_mem CL_API_CALL create_buffer(cl_context context, cl_mem_flags flags, size_t size, void* host, cl_int* err) {
    if (!recording()) return next.clCreateBuffer(context, flags, size, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateBuffer(context, flags, size, host, st.slot);
    return remember_mem(t0, m, size, flags, "buffer", st.of(m), flags & host_backed_flags);
}

cl_mem CL_API_CALL create_buffer_with_properties(cl_context context, const cl_mem_properties* props, cl_mem_flags flags,
                                                 size_t size, void* host, cl_int* err) {
    if (!recording()) return next.clCreateBufferWithProperties(context, props, flags, size, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateBufferWithProperties(context, props, flags, size, host, st.slot);
    return remember_mem(t0, m, size, flags, "buffer", st.of(m), flags & host_backed_flags);
}

cl_mem CL_API_CALL create_sub_buffer(cl_mem parent, cl_mem_flags flags, cl_buffer_create_type type, const void* info,
                                     cl_int* err) {
    if (!recording()) return next.clCreateSubBuffer(parent, flags, type, info, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateSubBuffer(parent, flags, type, info, st.slot);
    const uint64_t bytes =
        type == CL_BUFFER_CREATE_TYPE_REGION && info ? static_cast<const cl_buffer_region*>(info)->size : 0;
    bool host_backed = flags & host_backed_flags;
    {
        std::lock_guard lock(objects().mu);
        const auto it = objects().mems.find(parent);
        if (it != objects().mems.end()) host_backed = host_backed || it->second.host_backed;
    }
    return remember_mem(t0, m, bytes, flags, "subbuffer", st.of(m), host_backed);
}

// Bytes per pixel of an image format; packed formats count as a whole.
uint32_t element_size(const cl_image_format* format) {
    if (!format) return 0;
    switch (format->image_channel_data_type) {
        case CL_UNORM_SHORT_565:
        case CL_UNORM_SHORT_555:
            return 2;
        case CL_UNORM_INT_101010:
#ifdef CL_UNORM_INT_101010_2
        case CL_UNORM_INT_101010_2:
#endif
        case CL_UNORM_INT24:
            return 4;
        default:
            break;
    }
    uint32_t channel = 1;
    switch (format->image_channel_data_type) {
        case CL_SNORM_INT16:
        case CL_UNORM_INT16:
        case CL_SIGNED_INT16:
        case CL_UNSIGNED_INT16:
        case CL_HALF_FLOAT:
            channel = 2;
            break;
        case CL_SIGNED_INT32:
        case CL_UNSIGNED_INT32:
        case CL_FLOAT:
            channel = 4;
            break;
        default:
            break;
    }
    uint32_t channels = 1;
    switch (format->image_channel_order) {
        case CL_RG:
        case CL_RA:
        case CL_Rx:
            channels = 2;
            break;
        case CL_RGB:
        case CL_RGx:
        case CL_sRGB:
            channels = 3;
            break;
        case CL_RGBA:
        case CL_BGRA:
        case CL_ARGB:
        case CL_RGBx:
        case CL_sRGBA:
        case CL_sBGRA:
        case CL_sRGBx:
        case CL_ABGR:
            channels = 4;
            break;
        default:
            break;
    }
    return channel * channels;
}

uint64_t image_pixels(const cl_image_desc* desc) {
    if (!desc) return 0;
    const uint64_t w = desc->image_width, h = std::max<size_t>(desc->image_height, 1),
                   d = std::max<size_t>(desc->image_depth, 1), a = std::max<size_t>(desc->image_array_size, 1);
    switch (desc->image_type) {
        case CL_MEM_OBJECT_IMAGE1D_ARRAY:
            return w * a;
        case CL_MEM_OBJECT_IMAGE2D:
            return w * h;
        case CL_MEM_OBJECT_IMAGE2D_ARRAY:
            return w * h * a;
        case CL_MEM_OBJECT_IMAGE3D:
            return w * h * d;
        default:
            return w;
    }
}

cl_mem note_image(uint64_t t0, cl_mem m, cl_mem_flags flags, const cl_image_format* format, uint64_t pixels,
                  cl_int status) {
    const uint32_t element = element_size(format);
    return remember_mem(t0, m, pixels * element, flags, "image", status, flags & host_backed_flags, element);
}

cl_mem CL_API_CALL create_image(cl_context context, cl_mem_flags flags, const cl_image_format* format,
                                const cl_image_desc* desc, void* host, cl_int* err) {
    if (!recording()) return next.clCreateImage(context, flags, format, desc, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateImage(context, flags, format, desc, host, st.slot);
    return note_image(t0, m, flags, format, image_pixels(desc), st.of(m));
}

cl_mem CL_API_CALL create_image_with_properties(cl_context context, const cl_mem_properties* props, cl_mem_flags flags,
                                                const cl_image_format* format, const cl_image_desc* desc, void* host,
                                                cl_int* err) {
    if (!recording()) return next.clCreateImageWithProperties(context, props, flags, format, desc, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateImageWithProperties(context, props, flags, format, desc, host, st.slot);
    return note_image(t0, m, flags, format, image_pixels(desc), st.of(m));
}

cl_mem CL_API_CALL create_image_2d(cl_context context, cl_mem_flags flags, const cl_image_format* format, size_t width,
                                   size_t height, size_t row_pitch, void* host, cl_int* err) {
    if (!recording()) return next.clCreateImage2D(context, flags, format, width, height, row_pitch, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreateImage2D(context, flags, format, width, height, row_pitch, host, st.slot);
    return note_image(t0, m, flags, format, uint64_t{width} * height, st.of(m));
}

cl_mem CL_API_CALL create_image_3d(cl_context context, cl_mem_flags flags, const cl_image_format* format, size_t width,
                                   size_t height, size_t depth, size_t row_pitch, size_t slice_pitch, void* host,
                                   cl_int* err) {
    if (!recording())
        return next.clCreateImage3D(context, flags, format, width, height, depth, row_pitch, slice_pitch, host, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m =
        next.clCreateImage3D(context, flags, format, width, height, depth, row_pitch, slice_pitch, host, st.slot);
    return note_image(t0, m, flags, format, uint64_t{width} * height * depth, st.of(m));
}

cl_mem CL_API_CALL create_pipe(cl_context context, cl_mem_flags flags, cl_uint packet_size, cl_uint max_packets,
                               const cl_pipe_properties* props, cl_int* err) {
    if (!recording()) return next.clCreatePipe(context, flags, packet_size, max_packets, props, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_mem m = next.clCreatePipe(context, flags, packet_size, max_packets, props, st.slot);
    return remember_mem(t0, m, uint64_t{packet_size} * max_packets, flags, "pipe", st.of(m), false);
}

cl_int CL_API_CALL retain_mem_object(cl_mem m) {
    const cl_int rc = next.clRetainMemObject(m);
    if (rc == CL_SUCCESS && recording()) {
        std::lock_guard lock(objects().mu);
        const auto it = objects().mems.find(m);
        if (it != objects().mems.end()) ++it->second.refs;
    }
    return rc;
}

cl_int CL_API_CALL release_mem_object(cl_mem m) {
    if (!recording()) return next.clReleaseMemObject(m);
    flush_staged();
    const uint64_t t0 = now_ns();
    // The count is settled before the call: once the driver frees the object it may hand the same
    // handle to another thread's new allocation, which must not be mistaken for this one.
    bool tracked = false, frees = false;
    MemInfo info;
    {
        std::lock_guard lock(objects().mu);
        auto& o = objects();
        const auto it = o.mems.find(m);
        if (it != o.mems.end()) {
            tracked = true;
            frees = it->second.refs <= 1;
            info = it->second;
            if (frees) {
                o.mems.erase(it);
                std::erase_if(o.mapped, [m](const auto& region) { return region.second.mem == m; });
                o.count_host_ranges();
                binding_version.fetch_add(1, std::memory_order_release);
            } else {
                --it->second.refs;
            }
        }
    }
    const cl_int rc = next.clReleaseMemObject(m);
    if (tracked && rc != CL_SUCCESS) {
        std::lock_guard lock(objects().mu);
        if (frees)
            objects().mems.emplace(m, info);
        else if (const auto it = objects().mems.find(m); it != objects().mems.end())
            ++it->second.refs;
    }
    if (frees && rc == CL_SUCCESS) {
        RecordLine line('R');
        line.num(t0).num(now_ns()).handle(m);
        emit(line.line());
    }
    return rc;
}

void* CL_API_CALL svm_alloc(cl_context context, cl_svm_mem_flags flags, size_t size, unsigned int alignment) {
    if (!recording()) return next.clSVMAlloc(context, flags, size, alignment);
    flush_staged();
    const uint64_t t0 = now_ns();
    void* p = next.clSVMAlloc(context, flags, size, alignment);
    if (p) {
        std::lock_guard lock(objects().mu);
        objects().svm[reinterpret_cast<uintptr_t>(p)] = size;
        objects().count_host_ranges();
    }
    note_allocation(t0, p, size, flags, "svm", p ? CL_SUCCESS : -1);
    return p;
}

void CL_API_CALL svm_free(cl_context context, void* p) {
    if (!recording()) return next.clSVMFree(context, p);
    flush_staged();
    const uint64_t t0 = now_ns();
    bool tracked;
    {
        std::lock_guard lock(objects().mu);
        tracked = objects().svm.erase(reinterpret_cast<uintptr_t>(p)) > 0;
        objects().count_host_ranges();
    }
    if (tracked) binding_version.fetch_add(1, std::memory_order_release);
    next.clSVMFree(context, p);
    if (tracked) {
        RecordLine line('R');
        line.num(t0).num(now_ns()).handle(p);
        emit(line.line());
    }
}

// ---------------------------------------------------------------------------------------------
// Programs and builds.

constexpr uint64_t fnv_offset = 14695981039346656037ull;

uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 1099511628211ull;
    }
    return h;
}

void note_program(uint64_t t, cl_program p, const char* origin, uint64_t hash, uint64_t bytes) {
    RecordLine line('P');
    line.num(t).handle(p).word(origin).hex(hash).num(bytes);
    emit(line.line());
}

cl_program CL_API_CALL create_program_with_source(cl_context context, cl_uint count, const char** strings,
                                                  const size_t* lengths, cl_int* err) {
    if (!recording()) return next.clCreateProgramWithSource(context, count, strings, lengths, err);
    flush_staged();
    const uint64_t t = now_ns();
    cl_program p = next.clCreateProgramWithSource(context, count, strings, lengths, err);
    if (p && strings) {
        uint64_t hash = fnv_offset, bytes = 0;
        for (cl_uint i = 0; i < count; ++i) {
            if (!strings[i]) continue;
            // A length of 0 (or no lengths at all) means the string ends at its NUL.
            const size_t n = lengths && lengths[i] ? lengths[i] : std::strlen(strings[i]);
            hash = fnv1a(hash, strings[i], n);
            bytes += n;
        }
        note_program(t, p, "source", hash, bytes);
        if (replay_enabled()) {
            std::string text;
            for (cl_uint i = 0; i < count; ++i)
                if (strings[i]) text.append(strings[i], lengths && lengths[i] ? lengths[i] : std::strlen(strings[i]));
            replay_note_program(p, "source", std::move(text));
        }
    }
    return p;
}

cl_program CL_API_CALL create_program_with_binary(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                                  const size_t* lengths, const unsigned char** binaries,
                                                  cl_int* binary_status, cl_int* err) {
    if (!recording())
        return next.clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status, err);
    flush_staged();
    const uint64_t t = now_ns();
    cl_program p = next.clCreateProgramWithBinary(context, num_devices, devices, lengths, binaries, binary_status, err);
    if (p && lengths && binaries) {
        uint64_t hash = fnv_offset, bytes = 0;
        for (cl_uint i = 0; i < num_devices; ++i) {
            if (!binaries[i]) continue;
            hash = fnv1a(hash, binaries[i], lengths[i]);
            bytes += lengths[i];
        }
        note_program(t, p, "binary", hash, bytes);
        // One device's binary is what a replay on that device needs: the first one given.
        if (replay_enabled() && num_devices > 0 && binaries[0])
            replay_note_program(p, "binary", std::string(reinterpret_cast<const char*>(binaries[0]), lengths[0]));
    }
    return p;
}

cl_program CL_API_CALL create_program_with_il(cl_context context, const void* il, size_t length, cl_int* err) {
    if (!recording()) return next.clCreateProgramWithIL(context, il, length, err);
    flush_staged();
    const uint64_t t = now_ns();
    cl_program p = next.clCreateProgramWithIL(context, il, length, err);
    if (p && il) note_program(t, p, "il", fnv1a(fnv_offset, il, length), length);
    if (p && il && replay_enabled()) replay_note_program(p, "il", std::string(static_cast<const char*>(il), length));
    return p;
}

cl_program CL_API_CALL create_program_with_built_in_kernels(cl_context context, cl_uint num_devices,
                                                            const cl_device_id* devices, const char* names,
                                                            cl_int* err) {
    if (!recording()) return next.clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, err);
    flush_staged();
    const uint64_t t = now_ns();
    cl_program p = next.clCreateProgramWithBuiltInKernels(context, num_devices, devices, names, err);
    if (p) note_program(t, p, "builtin", 0, 0);
    if (p && replay_enabled()) replay_note_program(p, "builtin", {});
    return p;
}

void note_build(uint64_t t0, cl_program p, const char* op, cl_int status) {
    RecordLine line('B');
    line.num(t0).num(now_ns()).handle(p).word(op).snum(status).num(static_cast<uint64_t>(thread_id()));
    emit(line.line());
}

// With a notify callback the driver may return before the build is done; B then times the call
// only, which is all the layer can see without waiting itself.
cl_int CL_API_CALL build_program(cl_program p, cl_uint num_devices, const cl_device_id* devices, const char* options,
                                 void(CL_CALLBACK* notify)(cl_program, void*), void* user) {
    if (!recording()) return next.clBuildProgram(p, num_devices, devices, options, notify, user);
    flush_staged();
    const uint64_t t0 = now_ns();
    const cl_int rc = next.clBuildProgram(p, num_devices, devices, options, notify, user);
    note_build(t0, p, "build", rc);
    if (replay_enabled()) replay_note_build(p, options);
    arm_fatal_signal_flush();
    return rc;
}

cl_int CL_API_CALL compile_program(cl_program p, cl_uint num_devices, const cl_device_id* devices, const char* options,
                                   cl_uint num_headers, const cl_program* headers, const char** header_names,
                                   void(CL_CALLBACK* notify)(cl_program, void*), void* user) {
    if (!recording())
        return next.clCompileProgram(p, num_devices, devices, options, num_headers, headers, header_names, notify,
                                     user);
    flush_staged();
    const uint64_t t0 = now_ns();
    const cl_int rc =
        next.clCompileProgram(p, num_devices, devices, options, num_headers, headers, header_names, notify, user);
    note_build(t0, p, "compile", rc);
    if (replay_enabled()) replay_note_compile(p, options, num_headers);
    arm_fatal_signal_flush();
    return rc;
}

cl_program CL_API_CALL link_program(cl_context context, cl_uint num_devices, const cl_device_id* devices,
                                    const char* options, cl_uint num_programs, const cl_program* programs,
                                    void(CL_CALLBACK* notify)(cl_program, void*), void* user, cl_int* err) {
    if (!recording())
        return next.clLinkProgram(context, num_devices, devices, options, num_programs, programs, notify, user, err);
    flush_staged();
    const uint64_t t0 = now_ns();
    Status st(err);
    cl_program p =
        next.clLinkProgram(context, num_devices, devices, options, num_programs, programs, notify, user, st.slot);
    if (p) note_program(t0, p, "link", 0, 0);
    if (p && replay_enabled()) replay_note_link(p, num_programs, programs, options);
    note_build(t0, p, "link", st.of(p));
    return p;
}

// ---------------------------------------------------------------------------------------------
// Kernels and their buffer arguments.

std::string kernel_name(cl_kernel k) {
    char small[256];
    size_t size = 0;
    if (next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, sizeof small, small, &size) == CL_SUCCESS)
        return std::string(small, size ? size - 1 : 0);
    if (next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, nullptr, &size) != CL_SUCCESS || size == 0) return {};
    std::string name(size, '\0');
    if (next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, size, name.data(), nullptr) != CL_SUCCESS) return {};
    name.resize(size - 1);
    return name;
}

void note_kernel(cl_kernel k, cl_program p, std::string_view name, std::vector<KernelArg> args = {}) {
    {
        std::lock_guard lock(objects().mu);
        objects().kernels[k] = KernelInfo{p, 1, std::move(args)};
    }
    binding_version.fetch_add(1, std::memory_order_release);  // the handle may be a released kernel's
    RecordLine line('K');
    line.handle(k).handle(p).text(name);
    emit(line.line());
}

cl_kernel CL_API_CALL create_kernel(cl_program p, const char* name, cl_int* err) {
    if (!recording()) return next.clCreateKernel(p, name, err);
    flush_staged();
    cl_kernel k = next.clCreateKernel(p, name, err);
    if (k) note_kernel(k, p, name ? name : "");
    if (k && replay_enabled()) replay_note_kernel(k, p, name ? name : "", nullptr);
    return k;
}

cl_int CL_API_CALL create_kernels_in_program(cl_program p, cl_uint num, cl_kernel* kernels, cl_uint* num_ret) {
    if (!recording()) return next.clCreateKernelsInProgram(p, num, kernels, num_ret);
    flush_staged();
    cl_uint own_count = 0;
    cl_uint* count = num_ret ? num_ret : &own_count;
    const cl_int rc = next.clCreateKernelsInProgram(p, num, kernels, count);
    if (rc == CL_SUCCESS && kernels) {
        for (cl_uint i = 0; i < std::min(num, *count); ++i) {
            const std::string name = kernel_name(kernels[i]);
            note_kernel(kernels[i], p, name);
            if (replay_enabled()) replay_note_kernel(kernels[i], p, name, nullptr);
        }
    }
    return rc;
}

cl_kernel CL_API_CALL clone_kernel(cl_kernel source, cl_int* err) {
    if (!recording()) return next.clCloneKernel(source, err);
    flush_staged();
    cl_kernel k = next.clCloneKernel(source, err);
    if (!k) return k;
    cl_program p = nullptr;
    std::vector<KernelArg> args;
    bool known = false;
    {
        std::lock_guard lock(objects().mu);
        const auto it = objects().kernels.find(source);
        if (it != objects().kernels.end()) {
            known = true;
            p = it->second.program;
            args = it->second.args;  // a clone keeps the arguments set so far
        }
    }
    if (!known) next.clGetKernelInfo(k, CL_KERNEL_PROGRAM, sizeof p, &p, nullptr);
    const std::string name = kernel_name(k);
    note_kernel(k, p, name, std::move(args));
    if (replay_enabled()) replay_note_kernel(k, p, name, source);
    return k;
}

cl_int CL_API_CALL retain_kernel(cl_kernel k) {
    const cl_int rc = next.clRetainKernel(k);
    if (rc == CL_SUCCESS && recording()) {
        std::lock_guard lock(objects().mu);
        const auto it = objects().kernels.find(k);
        if (it != objects().kernels.end()) ++it->second.refs;
    }
    return rc;
}

cl_int CL_API_CALL release_kernel(cl_kernel k) {
    if (recording()) {
        // Settled before the call, like memory: a freed handle may come back as another kernel.
        std::lock_guard lock(objects().mu);
        const auto it = objects().kernels.find(k);
        if (it != objects().kernels.end() && --it->second.refs == 0) {
            objects().kernels.erase(it);
            binding_version.fetch_add(1, std::memory_order_release);
        }
    }
    return next.clReleaseKernel(k);
}

void set_tracked_arg(cl_kernel k, cl_uint index, uintptr_t key, bool svm) {
    auto& kernels = objects().kernels;
    const auto it = kernels.find(k);
    if (it == kernels.end()) return;
    auto& args = it->second.args;
    std::erase_if(args, [index](const KernelArg& a) { return a.index == index; });
    if (key) args.push_back({index, key, svm});
    binding_version.fetch_add(1, std::memory_order_release);
}

cl_int CL_API_CALL set_kernel_arg(cl_kernel k, cl_uint index, size_t size, const void* value) {
    const cl_int rc = next.clSetKernelArg(k, index, size, value);
    if (rc != CL_SUCCESS || !recording()) return rc;
    cl_mem m = nullptr;
    if (size == sizeof(cl_mem) && value) std::memcpy(&m, value, sizeof m);
    bool is_buffer;
    {
        std::lock_guard lock(objects().mu);
        // Only a live buffer the layer saw created counts; anything else (a scalar, a local size, a
        // null) clears what the index held.
        is_buffer = m && objects().mems.count(m);
        set_tracked_arg(k, index, is_buffer ? reinterpret_cast<uintptr_t>(m) : 0, false);
    }
    if (replay_enabled()) replay_note_arg(k, index, size, value, is_buffer);
    return rc;
}

cl_int CL_API_CALL set_kernel_arg_svm_pointer(cl_kernel k, cl_uint index, const void* value) {
    const cl_int rc = next.clSetKernelArgSVMPointer(k, index, value);
    if (rc != CL_SUCCESS || !recording()) return rc;
    {
        std::lock_guard lock(objects().mu);
        set_tracked_arg(k, index, objects().svm_allocation(value).base, true);
    }
    if (replay_enabled()) replay_note_svm_arg(k, index);
    return rc;
}

// Samplers matter only to `clprobe trace --replay` (a kernel argument set to one is captured as a
// sampler): nothing is recorded of them.
cl_sampler CL_API_CALL create_sampler(cl_context context, cl_bool normalized, cl_addressing_mode addressing,
                                      cl_filter_mode filter, cl_int* err) {
    cl_sampler s = next.clCreateSampler(context, normalized, addressing, filter, err);
    if (s && replay_enabled()) replay_note_sampler(s);
    return s;
}

cl_sampler CL_API_CALL create_sampler_with_properties(cl_context context, const cl_sampler_properties* props,
                                                      cl_int* err) {
    cl_sampler s = next.clCreateSamplerWithProperties(context, props, err);
    if (s && replay_enabled()) replay_note_sampler(s);
    return s;
}

cl_int CL_API_CALL retain_sampler(cl_sampler s) {
    const cl_int rc = next.clRetainSampler(s);
    if (rc == CL_SUCCESS && replay_enabled()) replay_retain_sampler(s);
    return rc;
}

cl_int CL_API_CALL release_sampler(cl_sampler s) {
    if (!replay_enabled()) return next.clReleaseSampler(s);
    const bool held = replay_release_sampler(s);
    const cl_int rc = next.clReleaseSampler(s);
    if (held && rc != CL_SUCCESS) replay_unrelease_sampler(s);
    return rc;
}

}  // namespace

void install_object_hooks(cl_icd_dispatch& t) {
    hook(t.clCreateCommandQueue, create_command_queue);
    hook(t.clCreateCommandQueueWithProperties, create_command_queue_with_properties);
    hook(t.clGetCommandQueueInfo, get_command_queue_info);
    hook(t.clGetEventProfilingInfo, get_event_profiling_info);
    hook(t.clReleaseCommandQueue, release_command_queue);
    hook(t.clCreateBuffer, create_buffer);
    hook(t.clCreateBufferWithProperties, create_buffer_with_properties);
    hook(t.clCreateSubBuffer, create_sub_buffer);
    hook(t.clCreateImage, create_image);
    hook(t.clCreateImageWithProperties, create_image_with_properties);
    hook(t.clCreateImage2D, create_image_2d);
    hook(t.clCreateImage3D, create_image_3d);
    hook(t.clCreatePipe, create_pipe);
    hook(t.clCreateSampler, create_sampler);
    hook(t.clCreateSamplerWithProperties, create_sampler_with_properties);
    hook(t.clRetainSampler, retain_sampler);
    hook(t.clReleaseSampler, release_sampler);
    hook(t.clRetainMemObject, retain_mem_object);
    hook(t.clReleaseMemObject, release_mem_object);
    hook(t.clSVMAlloc, svm_alloc);
    hook(t.clSVMFree, svm_free);
    hook(t.clCreateProgramWithSource, create_program_with_source);
    hook(t.clCreateProgramWithBinary, create_program_with_binary);
    hook(t.clCreateProgramWithIL, create_program_with_il);
    hook(t.clCreateProgramWithBuiltInKernels, create_program_with_built_in_kernels);
    hook(t.clBuildProgram, build_program);
    hook(t.clCompileProgram, compile_program);
    hook(t.clLinkProgram, link_program);
    hook(t.clCreateKernel, create_kernel);
    hook(t.clCreateKernelsInProgram, create_kernels_in_program);
    hook(t.clCloneKernel, clone_kernel);
    hook(t.clRetainKernel, retain_kernel);
    hook(t.clReleaseKernel, release_kernel);
    hook(t.clSetKernelArg, set_kernel_arg);
    hook(t.clSetKernelArgSVMPointer, set_kernel_arg_svm_pointer);
}

}  // namespace clprobe::layer

// Hooks for every enqueue (E, then T once the command ended) and for the host's waits (W).
//
// Timestamps: each successful enqueue that yields an event leaves the layer holding a reference to
// it. If the program asked for the event, the layer retains it; if not, the layer passes the driver
// an event slot of its own, so the program sees no difference. E and W are staged (command_log.hpp)
// and written in batches; after each batch the layer polls the pending events of the queues it
// touched (never waiting), and also at a queue's release and at exit.
//
// The hooks keep the time between the driver's return and their own to a clock read and a copy:
// see command_log.hpp for why that time matters so much more than its length.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "layer/capture_control.hpp"
#include "layer/command_log.hpp"
#include "layer/hooks.hpp"
#include "layer/layer_state.hpp"
#include "layer/record_line.hpp"
#include "layer/replay_capture.hpp"

namespace clprobe::layer {
namespace {

enum class Command : uint8_t {
    kernel,
    task,
    native_kernel,
    write,
    read,
    copy,
    fill,
    write_rect,
    read_rect,
    copy_rect,
    map,
    unmap,
    write_image,
    read_image,
    copy_image,
    copy_image_to_buffer,
    copy_buffer_to_image,
    map_image,
    fill_image,
    migrate,
    marker,
    barrier,
    svm_memcpy,
    svm_memfill,
    svm_map,
    svm_unmap,
    svm_free,
    svm_migrate,
};

struct CommandName {
    const char* command;  // E's <command>
    const char* wait;     // W's <op> when the enqueue blocked
};

constexpr CommandName command_names[] = {
    {"kernel", "blocking_kernel"},
    {"task", "blocking_task"},
    {"native_kernel", "blocking_native_kernel"},
    {"write", "blocking_write"},
    {"read", "blocking_read"},
    {"copy", "blocking_copy"},
    {"fill", "blocking_fill"},
    {"write_rect", "blocking_write_rect"},
    {"read_rect", "blocking_read_rect"},
    {"copy_rect", "blocking_copy_rect"},
    {"map", "blocking_map"},
    {"unmap", "blocking_unmap"},
    {"write_image", "blocking_write_image"},
    {"read_image", "blocking_read_image"},
    {"copy_image", "blocking_copy_image"},
    {"copy_image_to_buffer", "blocking_copy_image_to_buffer"},
    {"copy_buffer_to_image", "blocking_copy_buffer_to_image"},
    {"map_image", "blocking_map_image"},
    {"fill_image", "blocking_fill_image"},
    {"migrate", "blocking_migrate"},
    {"marker", "blocking_marker"},
    {"barrier", "blocking_barrier"},
    {"svm_memcpy", "blocking_svm_memcpy"},
    {"svm_memfill", "blocking_svm_memfill"},
    {"svm_map", "blocking_svm_map"},
    {"svm_unmap", "blocking_svm_unmap"},
    {"svm_free", "blocking_svm_free"},
    {"svm_migrate", "blocking_svm_migrate"},
};
static_assert(std::size(command_names) == static_cast<size_t>(Command::svm_migrate) + 1);

// The time at a hook's entry, after writing out this thread's staged calls if that is due.
uint64_t entry_time() {
    const uint64_t now = now_ns();
    return flush_staged_if_due(now) ? now_ns() : now;
}

void stage_wait(uint64_t t0, uint64_t t1, const char* op, cl_command_queue q) {
    StagedCall w;
    w.kind = StagedCall::Kind::wait;
    w.t0 = t0;
    w.t1 = t1;
    w.name = op;
    w.queue = q;
    stage(w);
}

// One enqueue: what E says about it, filled in before the call, staged once it returns.
struct Enqueue {
    Enqueue(Command c, cl_command_queue q) : wait_op(command_names[static_cast<size_t>(c)].wait) {
        call.name = command_names[static_cast<size_t>(c)].command;
        call.queue = q;
    }

    StagedCall call;
    const char* wait_op;
    cl_event own_event = nullptr;

    // The event slot the driver gets: the program's, or the layer's own when the program passed none.
    cl_event* slot(cl_event* program_event) { return program_event ? program_event : &own_event; }

    // Calls `driver(slot)`, the driver's entry point, timing it; then stages the call.
    template <typename Driver>
    cl_int run(cl_event* program_event, Driver driver) {
        begin();
        return done(driver(slot(program_event)), program_event);
    }

    // Right before the driver call: the staged calls are written now if due, then the clock starts.
    void begin() { call.t0 = entry_time(); }

    // Stages the call that began at t0 and returned `status`, with the event the layer now holds.
    cl_int done(cl_int status, cl_event* program_event) {
        // Hooks that keep mapping bookkeeping outside a capture window come here too: the call is
        // forwarded, not recorded.
        if (g_capture_gated.load(std::memory_order_relaxed) && !capture_open_slow(call.t0)) {
            if (!program_event && own_event) next.clReleaseEvent(own_event);
            return status;
        }
        call.t1 = now_ns();
        call.status = status;
        if (status == CL_SUCCESS) {
            // The program's event stays the program's: the layer's extra reference goes once T is
            // written. It is taken now, as the program may release its event at once.
            call.event = program_event ? *program_event : own_event;
            if (program_event && call.event) next.clRetainEvent(call.event);
        }
        stage(call);
        if (call.blocking && status == CL_SUCCESS) stage_wait(call.t0, call.t1, wait_op, call.queue);
        return status;
    }
};

uint64_t region_product(const size_t* region) {
    return region ? uint64_t{region[0]} * region[1] * region[2] : 0;
}

// With Objects::mu held.
uint32_t element_size_of(cl_mem image) {
    const auto it = objects().mems.find(image);
    return it == objects().mems.end() ? 0 : it->second.element_size;
}

HostMemory host_memory_of(const void* p) {
    // Most programs map nothing and allocate no SVM: then every host pointer is pageable.
    if (objects().host_ranges.load(std::memory_order_relaxed) == 0) return HostMemory::pageable;
    std::lock_guard lock(objects().mu);
    return objects().host_memory(p);
}

// What every read or write between `mem` and the host pointer `ptr` records.
void host_transfer(Enqueue& e, cl_mem mem, uint64_t bytes, cl_bool blocking, const void* ptr) {
    e.call.mem = mem;
    e.call.bytes = bytes;
    e.call.blocking = blocking;
    e.call.host = host_memory_of(ptr);
}

uint64_t image_bytes(cl_mem image, const size_t* region) {
    std::lock_guard lock(objects().mu);
    return region_product(region) * element_size_of(image);
}

// The distinct buffers bound to a kernel's arguments: their summed sizes and their number.
void compute_footprint(cl_kernel kernel, uint64_t& bytes, uint32_t& buffers) {
    std::lock_guard lock(objects().mu);
    const auto& o = objects();
    const auto it = o.kernels.find(kernel);
    if (it == o.kernels.end()) return;
    const auto& args = it->second.args;
    for (size_t i = 0; i < args.size(); ++i) {
        const KernelArg& a = args[i];
        if (std::any_of(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(i),
                        [&](const KernelArg& b) { return b.key == a.key && b.svm == a.svm; }))
            continue;
        uint64_t size = 0;
        if (a.svm) {
            const auto s = o.svm.find(a.key);
            if (s == o.svm.end()) continue;
            size = s->second;
        } else {
            const auto m = o.mems.find(reinterpret_cast<cl_mem>(a.key));
            if (m == o.mems.end()) continue;  // released since it was bound
            size = m->second.bytes;
        }
        bytes += size;
        ++buffers;
    }
}

// Programs launch the same kernel with the same buffers over and over: the thread remembers its
// last answer until any binding changes (binding_version), so most launches skip the lookup.
void kernel_footprint(Enqueue& e) {
    struct Cached {
        cl_kernel kernel;
        uint64_t version;
        uint64_t bytes;
        uint32_t buffers;
    };
    thread_local Cached cached{};
    const uint64_t version = binding_version.load(std::memory_order_acquire);
    if (cached.kernel != e.call.kernel || cached.version != version) {
        cached = {e.call.kernel, version, 0, 0};
        compute_footprint(e.call.kernel, cached.bytes, cached.buffers);
    }
    e.call.bytes = cached.bytes;
    e.call.buffers = cached.buffers;
}

void mem_list_footprint(Enqueue& e, cl_uint n, const cl_mem* mems) {
    if (!mems) return;
    std::lock_guard lock(objects().mu);
    for (cl_uint i = 0; i < n; ++i) {
        if (std::find(mems, mems + i, mems[i]) != mems + i) continue;
        const auto it = objects().mems.find(mems[i]);
        if (it == objects().mems.end()) continue;
        e.call.bytes += it->second.bytes;
        ++e.call.buffers;
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels.

cl_int nd_range_kernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset, const size_t* global,
                       const size_t* local, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nwait, wait, ev);
    Enqueue e(Command::kernel, q);
    e.call.kernel = k;
    e.call.dims = std::clamp<cl_uint>(dims, 1, 3);
    for (unsigned i = 0; i < e.call.dims && i < dims; ++i) {
        if (global) e.call.global[i] = global[i];
        if (local) e.call.local[i] = local[i];
    }
    e.call.local_auto = !local;
    kernel_footprint(e);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueNDRangeKernel(q, k, dims, offset, global, local, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_nd_range_kernel(cl_command_queue q, cl_kernel k, cl_uint dims, const size_t* offset,
                                           const size_t* global, const size_t* local, cl_uint nwait,
                                           const cl_event* wait, cl_event* ev) {
    if (!replay_enabled() || !recording()) return nd_range_kernel(q, k, dims, offset, global, local, nwait, wait, ev);
    // `clprobe trace --replay`: one launch per kernel is captured around the normal, recorded one.
    return replay_nd_range(NdRange{q, k, dims, offset, global, local, nwait, wait}, ev, [&](cl_event* slot) {
        return nd_range_kernel(q, k, dims, offset, global, local, nwait, wait, slot);
    });
}

cl_int task(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueTask(q, k, nwait, wait, ev);
    Enqueue e(Command::task, q);
    e.call.kernel = k;
    e.call.dims = 1;  // one work-item: sizes 1,1,1
    kernel_footprint(e);
    return e.run(ev, [&](cl_event* slot) { return next.clEnqueueTask(q, k, nwait, wait, slot); });
}

cl_int CL_API_CALL enqueue_task(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!replay_enabled() || !recording()) return task(q, k, nwait, wait, ev);
    // A task is the ND-range of one work-item in one group (OpenCL 1.2, clEnqueueTask): captured
    // as work_dim 1, global and local size 1, and replayed as that ND-range.
    static constexpr size_t one = 1;
    return replay_nd_range(NdRange{q, k, 1, nullptr, &one, &one, nwait, wait}, ev,
                           [&](cl_event* slot) { return task(q, k, nwait, wait, slot); });
}

cl_int CL_API_CALL enqueue_native_kernel(cl_command_queue q, void(CL_CALLBACK* fn)(void*), void* args, size_t cb_args,
                                         cl_uint num_mems, const cl_mem* mems, const void** mem_locs, cl_uint nwait,
                                         const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueNativeKernel(q, fn, args, cb_args, num_mems, mems, mem_locs, nwait, wait, ev);
    Enqueue e(Command::native_kernel, q);
    mem_list_footprint(e, num_mems, mems);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueNativeKernel(q, fn, args, cb_args, num_mems, mems, mem_locs, nwait, wait, slot);
    });
}

// ---------------------------------------------------------------------------------------------
// Buffers.

cl_int CL_API_CALL enqueue_read_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                       void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, nwait, wait, ev);
    Enqueue e(Command::read, q);
    host_transfer(e, b, size, blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueReadBuffer(q, b, blocking, offset, size, ptr, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_write_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, size_t offset, size_t size,
                                        const void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, nwait, wait, ev);
    Enqueue e(Command::write, q);
    host_transfer(e, b, size, blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueWriteBuffer(q, b, blocking, offset, size, ptr, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_copy_buffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset, size_t dst_offset,
                                       size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueCopyBuffer(q, src, dst, src_offset, dst_offset, size, nwait, wait, ev);
    Enqueue e(Command::copy, q);
    e.call.mem = dst;
    e.call.bytes = size;
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueCopyBuffer(q, src, dst, src_offset, dst_offset, size, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_fill_buffer(cl_command_queue q, cl_mem b, const void* pattern, size_t pattern_size,
                                       size_t offset, size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, nwait, wait, ev);
    Enqueue e(Command::fill, q);
    e.call.mem = b;
    e.call.bytes = size;
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueFillBuffer(q, b, pattern, pattern_size, offset, size, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_read_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking, const size_t* buffer_origin,
                                            const size_t* host_origin, const size_t* region, size_t buffer_row_pitch,
                                            size_t buffer_slice_pitch, size_t host_row_pitch, size_t host_slice_pitch,
                                            void* ptr, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueReadBufferRect(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                            buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait, ev);
    Enqueue e(Command::read_rect, q);
    host_transfer(e, b, region_product(region), blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueReadBufferRect(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                            buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait,
                                            slot);
    });
}

cl_int CL_API_CALL enqueue_write_buffer_rect(cl_command_queue q, cl_mem b, cl_bool blocking,
                                             const size_t* buffer_origin, const size_t* host_origin,
                                             const size_t* region, size_t buffer_row_pitch, size_t buffer_slice_pitch,
                                             size_t host_row_pitch, size_t host_slice_pitch, const void* ptr,
                                             cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueWriteBufferRect(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                             buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait,
                                             ev);
    Enqueue e(Command::write_rect, q);
    host_transfer(e, b, region_product(region), blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueWriteBufferRect(q, b, blocking, buffer_origin, host_origin, region, buffer_row_pitch,
                                             buffer_slice_pitch, host_row_pitch, host_slice_pitch, ptr, nwait, wait,
                                             slot);
    });
}

cl_int CL_API_CALL enqueue_copy_buffer_rect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                            const size_t* dst_origin, const size_t* region, size_t src_row_pitch,
                                            size_t src_slice_pitch, size_t dst_row_pitch, size_t dst_slice_pitch,
                                            cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueCopyBufferRect(q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                            dst_row_pitch, dst_slice_pitch, nwait, wait, ev);
    Enqueue e(Command::copy_rect, q);
    e.call.mem = dst;
    e.call.bytes = region_product(region);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueCopyBufferRect(q, src, dst, src_origin, dst_origin, region, src_row_pitch, src_slice_pitch,
                                            dst_row_pitch, dst_slice_pitch, nwait, wait, slot);
    });
}

void note_mapped(void* p, uint64_t bytes, cl_mem m) {
    std::lock_guard lock(objects().mu);
    auto& o = objects();
    const auto it = o.mems.find(m);
    const bool pinned = it != o.mems.end() && it->second.host_backed;
    MappedRegion& region = o.mapped[reinterpret_cast<uintptr_t>(p)];
    region.bytes = std::max(region.bytes, bytes);
    region.pinned = pinned;
    region.mem = m;
    ++region.count;
    o.count_host_ranges();
}

void* CL_API_CALL enqueue_map_buffer(cl_command_queue q, cl_mem b, cl_bool blocking, cl_map_flags flags, size_t offset,
                                     size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev, cl_int* err) {
    if (!recording()) return next.clEnqueueMapBuffer(q, b, blocking, flags, offset, size, nwait, wait, ev, err);
    Enqueue e(Command::map, q);
    e.call.mem = b;
    e.call.bytes = size;
    e.call.blocking = blocking;
    cl_int own_status = CL_SUCCESS;
    cl_int* status = err ? err : &own_status;
    e.begin();
    void* p = next.clEnqueueMapBuffer(q, b, blocking, flags, offset, size, nwait, wait, e.slot(ev), status);
    if (*status == CL_SUCCESS) note_mapped(p, size, b);
    e.done(*status, ev);
    return p;
}

cl_int CL_API_CALL enqueue_unmap_mem_object(cl_command_queue q, cl_mem m, void* p, cl_uint nwait, const cl_event* wait,
                                            cl_event* ev) {
    if (!recording()) return next.clEnqueueUnmapMemObject(q, m, p, nwait, wait, ev);
    Enqueue e(Command::unmap, q);
    e.call.mem = m;
    {
        std::lock_guard lock(objects().mu);
        const auto it = objects().mapped.find(reinterpret_cast<uintptr_t>(p));
        if (it != objects().mapped.end()) e.call.bytes = it->second.bytes;
    }
    e.begin();
    const cl_int status = next.clEnqueueUnmapMemObject(q, m, p, nwait, wait, e.slot(ev));
    if (status == CL_SUCCESS) {
        std::lock_guard lock(objects().mu);
        const auto it = objects().mapped.find(reinterpret_cast<uintptr_t>(p));
        if (it != objects().mapped.end() && --it->second.count == 0) objects().mapped.erase(it);
        objects().count_host_ranges();
    }
    return e.done(status, ev);
}

cl_int CL_API_CALL enqueue_migrate_mem_objects(cl_command_queue q, cl_uint n, const cl_mem* mems,
                                               cl_mem_migration_flags flags, cl_uint nwait, const cl_event* wait,
                                               cl_event* ev) {
    if (!capturing()) return next.clEnqueueMigrateMemObjects(q, n, mems, flags, nwait, wait, ev);
    Enqueue e(Command::migrate, q);
    mem_list_footprint(e, n, mems);
    e.call.buffers = 0;  // E counts buffers for kernels only
    return e.run(ev,
                 [&](cl_event* slot) { return next.clEnqueueMigrateMemObjects(q, n, mems, flags, nwait, wait, slot); });
}

// ---------------------------------------------------------------------------------------------
// Images.

cl_int CL_API_CALL enqueue_read_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                                      const size_t* region, size_t row_pitch, size_t slice_pitch, void* ptr,
                                      cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueReadImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait,
                                       ev);
    Enqueue e(Command::read_image, q);
    host_transfer(e, image, image_bytes(image, region), blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueReadImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait,
                                       slot);
    });
}

cl_int CL_API_CALL enqueue_write_image(cl_command_queue q, cl_mem image, cl_bool blocking, const size_t* origin,
                                       const size_t* region, size_t row_pitch, size_t slice_pitch, const void* ptr,
                                       cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait,
                                        ev);
    Enqueue e(Command::write_image, q);
    host_transfer(e, image, image_bytes(image, region), blocking, ptr);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueWriteImage(q, image, blocking, origin, region, row_pitch, slice_pitch, ptr, nwait, wait,
                                        slot);
    });
}

cl_int CL_API_CALL enqueue_copy_image(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                      const size_t* dst_origin, const size_t* region, cl_uint nwait,
                                      const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueCopyImage(q, src, dst, src_origin, dst_origin, region, nwait, wait, ev);
    Enqueue e(Command::copy_image, q);
    e.call.mem = dst;
    e.call.bytes = image_bytes(src, region);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueCopyImage(q, src, dst, src_origin, dst_origin, region, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_copy_image_to_buffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t* src_origin,
                                                const size_t* region, size_t dst_offset, cl_uint nwait,
                                                const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueCopyImageToBuffer(q, src, dst, src_origin, region, dst_offset, nwait, wait, ev);
    Enqueue e(Command::copy_image_to_buffer, q);
    e.call.mem = dst;
    e.call.bytes = image_bytes(src, region);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueCopyImageToBuffer(q, src, dst, src_origin, region, dst_offset, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_copy_buffer_to_image(cl_command_queue q, cl_mem src, cl_mem dst, size_t src_offset,
                                                const size_t* dst_origin, const size_t* region, cl_uint nwait,
                                                const cl_event* wait, cl_event* ev) {
    if (!capturing())
        return next.clEnqueueCopyBufferToImage(q, src, dst, src_offset, dst_origin, region, nwait, wait, ev);
    Enqueue e(Command::copy_buffer_to_image, q);
    e.call.mem = dst;
    e.call.bytes = image_bytes(dst, region);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueCopyBufferToImage(q, src, dst, src_offset, dst_origin, region, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_fill_image(cl_command_queue q, cl_mem image, const void* color, const size_t* origin,
                                      const size_t* region, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueFillImage(q, image, color, origin, region, nwait, wait, ev);
    Enqueue e(Command::fill_image, q);
    e.call.mem = image;
    e.call.bytes = image_bytes(image, region);
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueFillImage(q, image, color, origin, region, nwait, wait, slot);
    });
}

void* CL_API_CALL enqueue_map_image(cl_command_queue q, cl_mem image, cl_bool blocking, cl_map_flags flags,
                                    const size_t* origin, const size_t* region, size_t* row_pitch, size_t* slice_pitch,
                                    cl_uint nwait, const cl_event* wait, cl_event* ev, cl_int* err) {
    if (!recording())
        return next.clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch, slice_pitch, nwait, wait,
                                      ev, err);
    Enqueue e(Command::map_image, q);
    e.call.mem = image;
    e.call.bytes = image_bytes(image, region);
    e.call.blocking = blocking;
    cl_int own_status = CL_SUCCESS;
    cl_int* status = err ? err : &own_status;
    e.begin();
    void* p = next.clEnqueueMapImage(q, image, blocking, flags, origin, region, row_pitch, slice_pitch, nwait, wait,
                                     e.slot(ev), status);
    if (*status == CL_SUCCESS) {
        // The host sees rows row_pitch apart: the mapped span covers the pitch, not just the pixels.
        uint64_t span = e.call.bytes;
        if (region && row_pitch && *row_pitch) {
            const uint64_t rows = uint64_t{region[1]} * region[2];
            span = std::max(span, *row_pitch * rows);
            if (slice_pitch && *slice_pitch && region[2] > 1) span = std::max(span, *slice_pitch * region[2]);
        }
        note_mapped(p, span, image);
    }
    e.done(*status, ev);
    return p;
}

// ---------------------------------------------------------------------------------------------
// Markers and barriers.

cl_int CL_API_CALL enqueue_marker_with_wait_list(cl_command_queue q, cl_uint nwait, const cl_event* wait,
                                                 cl_event* ev) {
    if (!capturing()) return next.clEnqueueMarkerWithWaitList(q, nwait, wait, ev);
    Enqueue e(Command::marker, q);
    return e.run(ev, [&](cl_event* slot) { return next.clEnqueueMarkerWithWaitList(q, nwait, wait, slot); });
}

cl_int CL_API_CALL enqueue_barrier_with_wait_list(cl_command_queue q, cl_uint nwait, const cl_event* wait,
                                                  cl_event* ev) {
    if (!capturing()) return next.clEnqueueBarrierWithWaitList(q, nwait, wait, ev);
    Enqueue e(Command::barrier, q);
    return e.run(ev, [&](cl_event* slot) { return next.clEnqueueBarrierWithWaitList(q, nwait, wait, slot); });
}

// OpenCL 1.1's marker: its event argument is required, so the program's (even a null one, which
// the driver must refuse) goes to the driver unchanged.
cl_int CL_API_CALL enqueue_marker(cl_command_queue q, cl_event* ev) {
    if (!capturing()) return next.clEnqueueMarker(q, ev);
    Enqueue e(Command::marker, q);
    e.begin();
    return e.done(next.clEnqueueMarker(q, ev), ev);
}

// OpenCL 1.1's barrier has no event: its E gets no T.
cl_int CL_API_CALL enqueue_barrier(cl_command_queue q) {
    if (!capturing()) return next.clEnqueueBarrier(q);
    Enqueue e(Command::barrier, q);
    e.begin();
    return e.done(next.clEnqueueBarrier(q), nullptr);
}

// ---------------------------------------------------------------------------------------------
// Shared virtual memory.

cl_int CL_API_CALL enqueue_svm_free(cl_command_queue q, cl_uint n, void** ptrs,
                                    void(CL_CALLBACK* free_fn)(cl_command_queue, cl_uint, void**, void*), void* user,
                                    cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!recording()) return next.clEnqueueSVMFree(q, n, ptrs, free_fn, user, nwait, wait, ev);
    Enqueue e(Command::svm_free, q);
    e.call.host = HostMemory::svm;
    if (ptrs) {
        std::lock_guard lock(objects().mu);
        for (cl_uint i = 0; i < n; ++i)
            e.call.bytes += objects().svm_allocation(ptrs[i]).bytes;
    }
    const cl_int status =
        e.run(ev, [&](cl_event* slot) { return next.clEnqueueSVMFree(q, n, ptrs, free_fn, user, nwait, wait, slot); });
    // With a callback of its own, the program frees the memory there (through clSVMFree, hooked);
    // otherwise the driver frees it when the command runs, and R dates from the enqueue.
    if (status == CL_SUCCESS && !free_fn && ptrs) {
        const uint64_t t1 = now_ns();
        flush_staged();  // R follows the E of the free
        for (cl_uint i = 0; i < n; ++i) {
            bool tracked;
            {
                std::lock_guard lock(objects().mu);
                tracked = objects().svm.erase(reinterpret_cast<uintptr_t>(ptrs[i])) > 0;
                objects().count_host_ranges();
            }
            if (!tracked) continue;
            binding_version.fetch_add(1, std::memory_order_release);
            RecordLine line('R');
            line.num(e.call.t0).num(t1).handle(ptrs[i]);
            emit(line.line());
        }
    }
    return status;
}

// The side of a copy that is not SVM tells how the host memory behaves.
HostMemory svm_copy_host_memory(const void* dst, const void* src) {
    std::lock_guard lock(objects().mu);
    const HostMemory d = objects().host_memory(dst), s = objects().host_memory(src);
    return d != HostMemory::svm ? d : s;
}

cl_int CL_API_CALL enqueue_svm_memcpy(cl_command_queue q, cl_bool blocking, void* dst, const void* src, size_t size,
                                      cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueSVMMemcpy(q, blocking, dst, src, size, nwait, wait, ev);
    Enqueue e(Command::svm_memcpy, q);
    e.call.bytes = size;
    e.call.blocking = blocking;
    e.call.host = svm_copy_host_memory(dst, src);
    return e.run(
        ev, [&](cl_event* slot) { return next.clEnqueueSVMMemcpy(q, blocking, dst, src, size, nwait, wait, slot); });
}

cl_int CL_API_CALL enqueue_svm_mem_fill(cl_command_queue q, void* p, const void* pattern, size_t pattern_size,
                                        size_t size, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!capturing()) return next.clEnqueueSVMMemFill(q, p, pattern, pattern_size, size, nwait, wait, ev);
    Enqueue e(Command::svm_memfill, q);
    e.call.bytes = size;
    e.call.host = HostMemory::svm;
    return e.run(ev, [&](cl_event* slot) {
        return next.clEnqueueSVMMemFill(q, p, pattern, pattern_size, size, nwait, wait, slot);
    });
}

cl_int CL_API_CALL enqueue_svm_map(cl_command_queue q, cl_bool blocking, cl_map_flags flags, void* p, size_t size,
                                   cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!recording()) return next.clEnqueueSVMMap(q, blocking, flags, p, size, nwait, wait, ev);
    Enqueue e(Command::svm_map, q);
    e.call.bytes = size;
    e.call.blocking = blocking;
    e.call.host = HostMemory::svm;
    const cl_int status =
        e.run(ev, [&](cl_event* slot) { return next.clEnqueueSVMMap(q, blocking, flags, p, size, nwait, wait, slot); });
    if (status == CL_SUCCESS) {
        std::lock_guard lock(objects().mu);
        objects().svm_maps[reinterpret_cast<uintptr_t>(p)] = size;
    }
    return status;
}

cl_int CL_API_CALL enqueue_svm_unmap(cl_command_queue q, void* p, cl_uint nwait, const cl_event* wait, cl_event* ev) {
    if (!recording()) return next.clEnqueueSVMUnmap(q, p, nwait, wait, ev);
    Enqueue e(Command::svm_unmap, q);
    e.call.host = HostMemory::svm;
    {
        std::lock_guard lock(objects().mu);
        const auto it = objects().svm_maps.find(reinterpret_cast<uintptr_t>(p));
        if (it != objects().svm_maps.end()) e.call.bytes = it->second;
    }
    const cl_int status = e.run(ev, [&](cl_event* slot) { return next.clEnqueueSVMUnmap(q, p, nwait, wait, slot); });
    if (status == CL_SUCCESS) {
        std::lock_guard lock(objects().mu);
        objects().svm_maps.erase(reinterpret_cast<uintptr_t>(p));
    }
    return status;
}

cl_int CL_API_CALL enqueue_svm_migrate_mem(cl_command_queue q, cl_uint n, const void** ptrs, const size_t* sizes,
                                           cl_mem_migration_flags flags, cl_uint nwait, const cl_event* wait,
                                           cl_event* ev) {
    if (!capturing()) return next.clEnqueueSVMMigrateMem(q, n, ptrs, sizes, flags, nwait, wait, ev);
    Enqueue e(Command::svm_migrate, q);
    e.call.host = HostMemory::svm;
    if (ptrs) {
        std::lock_guard lock(objects().mu);
        // A size of 0 (or no sizes) means the whole allocation.
        for (cl_uint i = 0; i < n; ++i)
            e.call.bytes += sizes && sizes[i] ? sizes[i] : objects().svm_allocation(ptrs[i]).bytes;
    }
    return e.run(
        ev, [&](cl_event* slot) { return next.clEnqueueSVMMigrateMem(q, n, ptrs, sizes, flags, nwait, wait, slot); });
}

// ---------------------------------------------------------------------------------------------
// Host waits.

cl_int CL_API_CALL finish(cl_command_queue q) {
    if (!capturing()) return next.clFinish(q);
    const uint64_t t0 = entry_time();
    const cl_int rc = next.clFinish(q);
    stage_wait(t0, now_ns(), "finish", q);
    return rc;
}

cl_int CL_API_CALL wait_for_events(cl_uint n, const cl_event* events) {
    if (!capturing()) return next.clWaitForEvents(n, events);
    const uint64_t t0 = entry_time();
    const cl_int rc = next.clWaitForEvents(n, events);
    stage_wait(t0, now_ns(), "wait_events", nullptr);
    return rc;
}

}  // namespace

void install_enqueue_hooks(cl_icd_dispatch& t) {
    hook(t.clEnqueueNDRangeKernel, enqueue_nd_range_kernel);
    hook(t.clEnqueueTask, enqueue_task);
    hook(t.clEnqueueNativeKernel, enqueue_native_kernel);
    hook(t.clEnqueueReadBuffer, enqueue_read_buffer);
    hook(t.clEnqueueWriteBuffer, enqueue_write_buffer);
    hook(t.clEnqueueCopyBuffer, enqueue_copy_buffer);
    hook(t.clEnqueueFillBuffer, enqueue_fill_buffer);
    hook(t.clEnqueueReadBufferRect, enqueue_read_buffer_rect);
    hook(t.clEnqueueWriteBufferRect, enqueue_write_buffer_rect);
    hook(t.clEnqueueCopyBufferRect, enqueue_copy_buffer_rect);
    hook(t.clEnqueueMapBuffer, enqueue_map_buffer);
    hook(t.clEnqueueUnmapMemObject, enqueue_unmap_mem_object);
    hook(t.clEnqueueMigrateMemObjects, enqueue_migrate_mem_objects);
    hook(t.clEnqueueReadImage, enqueue_read_image);
    hook(t.clEnqueueWriteImage, enqueue_write_image);
    hook(t.clEnqueueCopyImage, enqueue_copy_image);
    hook(t.clEnqueueCopyImageToBuffer, enqueue_copy_image_to_buffer);
    hook(t.clEnqueueCopyBufferToImage, enqueue_copy_buffer_to_image);
    hook(t.clEnqueueFillImage, enqueue_fill_image);
    hook(t.clEnqueueMapImage, enqueue_map_image);
    hook(t.clEnqueueMarkerWithWaitList, enqueue_marker_with_wait_list);
    hook(t.clEnqueueBarrierWithWaitList, enqueue_barrier_with_wait_list);
    hook(t.clEnqueueMarker, enqueue_marker);
    hook(t.clEnqueueBarrier, enqueue_barrier);
    hook(t.clEnqueueSVMFree, enqueue_svm_free);
    hook(t.clEnqueueSVMMemcpy, enqueue_svm_memcpy);
    hook(t.clEnqueueSVMMemFill, enqueue_svm_mem_fill);
    hook(t.clEnqueueSVMMap, enqueue_svm_map);
    hook(t.clEnqueueSVMUnmap, enqueue_svm_unmap);
    hook(t.clEnqueueSVMMigrateMem, enqueue_svm_migrate_mem);
    hook(t.clFinish, finish);
    hook(t.clWaitForEvents, wait_for_events);
}

}  // namespace clprobe::layer

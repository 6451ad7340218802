#pragma once
// Capture of kernel launches for replay (`clprobe trace --replay N`; docs/trace.md, "Capture for
// replay"). Off unless clprobe sets, for the layer:
//   CLPROBE_REPLAY_DIR     the folder captures go to (<records>/replay), one <pid>-<n>/ per kernel
//   CLPROBE_REPLAY_BUDGET  bytes of buffer inputs plus outputs one process may keep (default 256 MiB)
//   CLPROBE_REPLAY_AT      which launch of a kernel is captured (default 2: past the first, warm-up)
// The object hooks tell it what programs were made from and built with and what each kernel's
// arguments are; the ND-range hook hands it the launch it chose, which it waits for, reads around
// and writes out (format: replay_format.hpp, clprobe.replay.v1).
#include <CL/cl_layer.h>

#include <atomic>
#include <string>
#include <string_view>
#include <vector>

#include "layer/layer_state.hpp"

namespace clprobe::layer {

extern std::atomic<bool> g_replay_enabled;
inline bool replay_enabled() {
    return g_replay_enabled.load(std::memory_order_relaxed);
}

// Reads the environment above (clInitLayer).
void init_replay_capture();
// In a fork()ed child before anything else runs: the locks made anew.
void reset_replay_after_fork();

// Object hooks, each only when replay_enabled().
void replay_note_program(cl_program p, const char* origin, std::string bytes);
void replay_note_build(cl_program p, const char* options);
// clCompileProgram: the options, like a build's; a compile given embedded headers cannot be
// replayed from its source alone.
void replay_note_compile(cl_program p, const char* options, cl_uint num_headers);
// clLinkProgram of one compiled program (hashcat's way to build): the linked program is that
// source built with the compile and link options; of several programs, it stays "link" (skipped).
void replay_note_link(cl_program linked, cl_uint num_programs, const cl_program* inputs, const char* options);
void replay_note_kernel(cl_kernel k, cl_program p, std::string_view name, cl_kernel cloned_from);
void replay_note_arg(cl_kernel k, cl_uint index, size_t size, const void* value, bool known_mem);
void replay_note_svm_arg(cl_kernel k, cl_uint index);
// Samplers the program holds (clCreateSampler*, clRetainSampler, clReleaseSampler): a kernel
// argument set to one is a sampler whatever the driver's argument info says. The release is
// counted before the driver's call (a freed handle may be reused at once) and undone if it failed.
void replay_note_sampler(cl_sampler s);
void replay_retain_sampler(cl_sampler s);
// Whether the layer held `s`; replay_unrelease_sampler(s) undoes a release the driver refused.
bool replay_release_sampler(cl_sampler s);
void replay_unrelease_sampler(cl_sampler s);

// The ND-range hook: `forward(event_slot)` enqueues the launch through the normal (recorded) path.
// When this launch is the one to capture, waits for what it waits on and the queue, reads its
// buffers, forwards it, waits for it, reads them again and writes the capture; otherwise only
// forwards. What the program sees (status, event) is the forwarded launch's.
struct NdRange {
    cl_command_queue queue;
    cl_kernel kernel;
    cl_uint dims;
    const size_t* offset;
    const size_t* global;
    const size_t* local;
    cl_uint nwait;
    const cl_event* wait;
};
template <typename Forward>
cl_int replay_nd_range(const NdRange& launch, cl_event* program_event, Forward forward);

// Implementation of the above, split so the template stays small: whether to capture this launch
// (null: not this one; else the capture in progress, its inputs read), and what follows the launch.
struct ReplayCapture;
ReplayCapture* replay_begin(const NdRange& launch);
void replay_end(ReplayCapture* capture, cl_int status, cl_event event);

template <typename Forward>
cl_int replay_nd_range(const NdRange& launch, cl_event* program_event, Forward forward) {
    ReplayCapture* capture = replay_begin(launch);
    if (!capture) return forward(program_event);
    cl_event own = nullptr;
    cl_event* slot = program_event ? program_event : &own;
    const cl_int rc = forward(slot);
    replay_end(capture, rc, rc == CL_SUCCESS ? *slot : nullptr);
    // The program asked for no event: the one the layer asked for in its place goes now (the
    // layer's normal path holds its own reference until the launch's timestamps are read).
    if (!program_event && own) next.clReleaseEvent(own);
    return rc;
}

}  // namespace clprobe::layer

#pragma once
// The entry points the trace layer overrides in the dispatch table it hands the loader.
#include <CL/cl_layer.h>

#include <type_traits>

namespace clprobe::layer {

// Overrides `slot` only where the layer below provides the call: a hook must always have a `next`
// to forward to, and a call the driver lacks stays missing for the program too.
template <typename Fn>
void hook(Fn& slot, std::type_identity_t<Fn> fn) {
    if (slot) slot = fn;
}

// Queues, memory, programs, builds, kernels and their arguments (object_hooks.cpp).
void install_object_hooks(cl_icd_dispatch& table);
// Every enqueue, clFinish and clWaitForEvents (enqueue_hooks.cpp).
void install_enqueue_hooks(cl_icd_dispatch& table);

// Registers the exit handler (again): see trace_layer.cpp.
void arm_exit_handler();

// Puts the layer's fatal-signal handler in front of whatever handles those signals now (the
// program's, a driver's compiler's, or the default), chaining to it: see trace_layer.cpp. Called at
// start and after builds, when a driver's compiler (PoCL's LLVM) installs handlers of its own.
void arm_fatal_signal_flush();

}  // namespace clprobe::layer

#pragma once
// Which record stream this process writes. Under `clprobe trace` every process of the job writes
// its own file in one folder (CLPROBE_TRACE_DIR): exec'd children and grandchildren load the layer
// anew from the inherited OPENCL_LAYERS, and a fork()ed child gets a fresh stream of its own on its
// first OpenCL call, so no two processes ever share a stream and none is lost to a lock.
//
// A fork()ed child inherits the layer's state as it was in the forking thread's view: locks other
// threads of the parent held, their staged calls, the parent's pending events and its file mapping.
// on_fork_child() makes that state the child's own (it runs in the only thread the child has),
// without calling the driver: the child may never use OpenCL, or may only exec.
#include <cstdint>

namespace clprobe::layer {

// At clInitLayer: opens the stream of this process (the H and O records). False when the
// environment names no trace or the file cannot be made (the layer then only forwards calls).
bool open_process_stream();

// The slow path of recording() in a fork()ed child: opens the child's stream on its first OpenCL
// call. True when the child records from now on.
bool open_pending_stream();

// The pthread_atfork child handler.
void on_fork_child();

}  // namespace clprobe::layer

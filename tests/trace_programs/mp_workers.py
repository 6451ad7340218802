"""Forked Python workers that each use OpenCL, as multiprocessing makes them (the "fork" start
method): each worker opens the device, launches a tiny kernel STEPS times with a finish after each,
checks the result and returns; multiprocessing then ends it with os._exit, so no exit handler runs.
The parent touches no OpenCL. Prints only deterministic lines; exit 1 when a worker failed.

With "pool" as third argument the workers are a multiprocessing.Pool's, each running one task: the
pool's context manager ends them with terminate() (SIGTERM) once the results are back.

Usage: python3 mp_workers.py [WORKERS] [STEPS] [pool]"""
import multiprocessing
import sys

import numpy as np
import pyopencl as cl

SOURCE = "__kernel void add_one(__global uint *data) { data[get_global_id(0)] += 1u; }"


def work(steps):
    ctx = cl.Context([cl.get_platforms()[0].get_devices()[0]])
    queue = cl.CommandQueue(ctx)
    program = cl.Program(ctx, SOURCE).build()
    host = np.zeros(1024, dtype=np.uint32)
    data = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=host)
    kernel = program.add_one
    kernel.set_arg(0, data)
    for _ in range(steps):
        cl.enqueue_nd_range_kernel(queue, kernel, (host.size,), None)
        queue.finish()
    cl.enqueue_copy(queue, host, data)
    if not (host == steps).all():
        sys.exit(1)
    return 0


def main():
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    context = multiprocessing.get_context("fork")
    if len(sys.argv) > 3 and sys.argv[3] == "pool":
        # One task per worker (chunksize 1, a barrier so that no worker takes two).
        with context.Pool(workers) as pool:
            results = pool.map(work, [steps] * workers, chunksize=1)
        failed = sum(1 for r in results if r != 0)
        print(f"workers {workers}\nkernels {steps} each\nfailed {failed}")
        return 1 if failed else 0
    procs = [context.Process(target=work, args=(steps,)) for _ in range(workers)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    failed = sum(1 for p in procs if p.exitcode != 0)
    print(f"workers {workers}\nkernels {steps} each\nfailed {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

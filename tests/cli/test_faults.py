"""Failing OpenCL, injected by the fault layer (tests/fault_layer): each failure ends the affected
probe with the OpenCL call and error name, the other probes still run, and the report is written."""
import json
import os

from clitest import FAULT_LAYER, expect, load_json, main, run, temp_dir


def faulty(*args, faults, timeout=300):
    return run(*args, env={"OPENCL_LAYERS": FAULT_LAYER, "CLPROBE_FAULTS": faults}, timeout=timeout)


def statuses(doc):
    return {p["id"]: p for p in doc["results"]}


def diagnose_json(faults, *extra):
    d = temp_dir()
    path = os.path.join(d, "r.json")
    # The device ceilings are enough to see each fault's handling; the workloads would only add time.
    r = faulty("diagnose", "--layers", "kernel", "--workloads", "none", "--quick", "--json", path, *extra,
               faults=faults)
    expect(os.path.exists(path), "no report written", r)
    with open(path) as f:
        doc = json.load(f)
    expect(sorted(os.listdir(d)) == ["r.json"], f"temporary files left: {os.listdir(d)}")
    return r, doc


def test_layer_passes_calls_through():
    r = faulty("list", faults="")
    expect(r.rc == 0 and "-d 0:0" in r.stdout, "the layer alone changed behaviour", r)


def test_platform_whose_calls_fail():
    faults = "call=clGetDeviceIDs,error=CL_OUT_OF_HOST_MEMORY"
    r = faulty("list", faults=faults)
    expect(r.rc == 0, "list exit code", r)
    expect("error: clGetDeviceIDs: CL_OUT_OF_HOST_MEMORY (-6)" in r.stdout, "platform error not shown", r)
    r = faulty("info", faults=faults)
    expect(r.rc == 2 and "no OpenCL devices found" in r.stderr and "CL_OUT_OF_HOST_MEMORY" in r.stderr,
           "info without devices", r)


def test_allocation_failure_ends_one_probe():
    r, doc = diagnose_json("call=clCreateBuffer,error=CL_MEM_OBJECT_ALLOCATION_FAILURE,min_bytes=67108864")
    expect(r.rc == 0, "exit code", r)
    s = statuses(doc)
    expect(s["kernel.bandwidth"]["status"] == "error", "bandwidth probe not an error", r)
    expect("clCreateBuffer: CL_MEM_OBJECT_ALLOCATION_FAILURE (-4)" in s["kernel.bandwidth"]["reason"],
           "reason lacks the call and error name", r)
    for other in ("kernel.build", "kernel.launch", "kernel.compute.fp32"):
        expect(s[other]["status"] == "ok", f"{other} was affected: {s[other]['reason']}", r)


def test_build_failure_is_reported_per_probe():
    r, doc = diagnose_json("call=clBuildProgram,error=CL_BUILD_PROGRAM_FAILURE")
    expect(r.rc == 0, "exit code", r)
    s = statuses(doc)
    for probe in ("kernel.build", "kernel.bandwidth", "kernel.compute.fp32"):
        expect(s[probe]["status"] == "error", f"{probe} status", r)
        expect("clBuildProgram: CL_BUILD_PROGRAM_FAILURE (-11)" in s[probe]["reason"], f"{probe} reason", r)
    expect(s["kernel.bandwidth"]["reason"].count("peak/bandwidth.cl"), "reason does not name the kernel file", r)


def test_profiling_refused_falls_back_to_host_clock():
    r, doc = diagnose_json("call=clCreateCommandQueue,error=CL_INVALID_QUEUE_PROPERTIES,profiling=1")
    expect(r.rc == 0, "exit code", r)
    expect("profiling queue refused" in r.stderr, "no warning about the host clock", r)
    expect(doc["device"]["profiling"] is False, "device context still claims profiling")
    s = statuses(doc)
    expect(s["kernel.compute.fp32"]["status"] == "ok", "compute probe failed without profiling", r)
    timers = {m["timer"] for m in s["kernel.compute.fp32"]["measurements"]}
    expect(timers == {"host_steady_clock"}, f"timers: {timers}")
    expect("kernel.timer.host_fallback" in [f["id"] for f in doc["findings"]], "no trust finding")


def test_failed_readback_names_the_call():
    # The ceilings read results back to verify them; a failing read is an error, not a number.
    r, doc = diagnose_json("call=clEnqueueReadBuffer,error=CL_OUT_OF_RESOURCES")
    s = statuses(doc)
    expect(s["kernel.compute.fp32"]["status"] == "error", "compute probe status", r)
    expect("clEnqueueReadBuffer: CL_OUT_OF_RESOURCES (-5)" in s["kernel.compute.fp32"]["reason"], "reason", r)
    expect(not any(m["metric"] == "kernel.peak.fp32" for m in s["kernel.compute.fp32"]["measurements"]),
           "an unverified peak was reported")


def test_slow_kernels_hit_the_probe_budget():
    r, doc = diagnose_json("call=clEnqueueNDRangeKernel,stall_ms=1500", "--probe-timeout", "1")
    expect(r.rc == 0, "exit code", r)
    s = statuses(doc)
    for probe in ("kernel.launch", "kernel.bandwidth", "kernel.compute.fp32"):
        expect(s[probe]["status"] == "error", f"{probe} status: {s[probe]['status']}", r)
        expect("exceeded its time budget of 1 s" in s[probe]["reason"], f"{probe} reason", r)
    # The run went on past each timed-out probe to the last one, which launches no kernel.
    expect(s["kernel.compute.fp16"]["status"] == "unsupported", "the run did not go on after the timeouts", r)


def test_device_that_cannot_be_opened():
    r, doc = diagnose_json("call=clCreateContext,error=CL_OUT_OF_HOST_MEMORY")
    expect(r.rc == 0, "exit code", r)
    for p in doc["results"]:
        expect(p["status"] == "error" and "clCreateContext: CL_OUT_OF_HOST_MEMORY (-6)" in p["reason"],
               f"{p['id']}: {p['status']} {p['reason']}")


if __name__ == "__main__":
    expect(FAULT_LAYER and os.path.exists(FAULT_LAYER), "fault layer library not given")
    main([test_layer_passes_calls_through, test_platform_whose_calls_fail, test_allocation_failure_ends_one_probe,
          test_build_failure_is_reported_per_probe, test_profiling_refused_falls_back_to_host_clock,
          test_failed_readback_names_the_call, test_slow_kernels_hit_the_probe_budget,
          test_device_that_cannot_be_opened])

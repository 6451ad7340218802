"""clprobe diagnose --layers network in a single process, in either build: the network layer's
probes are all there, each reported unsupported with the reason that fits the build (CLPROBE_WITH_MPI,
set by tests/CMakeLists.txt from the build's CLPROBE_HAVE_MPI), and the other layers of the run are
untouched. The two-rank run under mpirun is mpi_two_ranks.py."""
import os

from clitest import expect, load_json, main, run

WITH_MPI = os.environ.get("CLPROBE_WITH_MPI") == "1"
NETWORK_PROBES = {"network.world", "network.p2p", "network.allreduce", "network.device_buffers"}
# A launcher's variables in the test's own environment would make clprobe try MPI.
LAUNCHER_VARIABLES = ("OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "SLURM_NPROCS")
for _name in LAUNCHER_VARIABLES:
    os.environ.pop(_name, None)


def diagnose(layers):
    r = run("diagnose", "--quick", "--layers", layers, "--workloads", "none", "--json", "-")
    expect(r.rc == 0, f"diagnose --layers {layers} failed", r)
    return load_json(r.stdout, r), r


def expected_reason():
    if WITH_MPI:
        return "not started by mpirun/srun with 2 or more ranks"
    return "clprobe was built without MPI (configure with -DCLPROBE_MPI=ON and libopenmpi-dev)"


def test_network_layer_unsupported_with_reason():
    doc, r = diagnose("network")
    network = {p["id"]: p for p in doc["results"] if p["layer"] == "network"}
    expect(NETWORK_PROBES <= set(network), f"network probes missing: {sorted(network)}", r)
    for pid, p in network.items():
        expect(p["status"] == "unsupported", f"{pid} is {p['status']}, not unsupported", r)
        expect(p["reason"] == expected_reason(), f"{pid}: reason {p['reason']!r}", r)
        expect(p["measurements"] == [], f"{pid} has measurements", r)
    expect(not [f for f in doc["findings"] if f["layer"] == "network"], "a network finding without figures", r)


def test_other_layers_intact():
    doc, r = diagnose("topology,network")
    layers = {p["layer"] for p in doc["results"]}
    expect(layers == {"topology", "network"}, f"layers {layers}", r)
    topology = [p for p in doc["results"] if p["layer"] == "topology"]
    expect(topology and all(p["status"] == "ok" for p in topology), "topology probes not ok", r)


def test_world_smaller_than_announced():
    # A launcher variable without a launcher: Open MPI starts a singleton world of 1 rank. The
    # layer is unsupported with the reason, the other layers intact. (Built without MPI the
    # variable changes nothing: the build's reason stands.)
    r = run("diagnose", "--quick", "--layers", "topology,network", "--workloads", "none", "--json", "-",
            env={"OMPI_COMM_WORLD_SIZE": "2", "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"})
    expect(r.rc == 0, "diagnose with OMPI_COMM_WORLD_SIZE=2 but no mpirun failed", r)
    doc = load_json(r.stdout, r)
    for p in doc["results"]:
        if p["layer"] == "topology":
            expect(p["status"] == "ok", f"{p['id']} is {p['status']}", r)
        else:
            expect(p["status"] == "unsupported", f"{p['id']} is {p['status']}", r)
            want = "announced 2" if WITH_MPI else expected_reason()
            expect(want in p["reason"], f"{p['id']}: reason {p['reason']!r}", r)


def test_default_layers_leave_network_out():
    # Without mpirun the network layer is not in the default list: --help names it as opt-in.
    r = run("diagnose", "--help")
    expect(r.rc == 0 and "network" in r.stdout, "--layers help does not name the network layer", r)


if __name__ == "__main__":
    main([test_network_layer_unsupported_with_reason, test_other_layers_intact, test_world_smaller_than_announced,
          test_default_layers_leave_network_out])

"""`srun clprobe diagnose --json '{host}-{rank}.json'` on a one-node Slurm started for the test
(slurmctld and slurmd on this host, auth/none, private ports and state directory): one report per
rank, each recording its launch and node turn. Skipped where Slurm is not installed or the test
does not run as root (slurmd needs root to start job steps as another user)."""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time

from clitest import BINARY, expect, main

DAEMONS = ("srun", "slurmctld", "slurmd", "sinfo")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_conf(d, host):
    conf = os.path.join(d, "slurm.conf")
    ctld, slurmd = free_port(), free_port()
    with open(conf, "w") as f:
        f.write(f"""ClusterName=clprobetest
SlurmctldHost={host}
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld}
SlurmdPort={slurmd}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/slurmctld.log
SlurmdLogFile={d}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
NodeName={host} CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")
    for sub in ("state", "spool"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    return conf


def wait_idle(env, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline:
        p = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, env=env)
        if p.stdout.strip() == "idle":
            return True
        time.sleep(0.5)
    return False


def test_srun_two_ranks_write_two_reports():
    missing = [d for d in DAEMONS if not shutil.which(d)]
    if missing or os.geteuid() != 0:
        print(f"SKIP Slurm not usable here (missing: {missing}, euid {os.geteuid()})")
        return
    d = tempfile.mkdtemp(prefix="clprobe-slurm-")
    host = socket.gethostname().split(".")[0]
    env = dict(os.environ, SLURM_CONF=write_conf(d, host))
    for k in ("SLURM_PROCID", "SLURM_LOCALID", "SLURM_JOB_ID", "CLPROBE_DEVICE"):
        env.pop(k, None)
    daemons = [subprocess.Popen([name, "-D", "-f", env["SLURM_CONF"]] + (["-c"] if name == "slurmctld" else []),
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for name in ("slurmctld", "slurmd")]
    try:
        expect(wait_idle(env), f"the Slurm node did not come up; logs in {d}")
        out = os.path.join(d, "reports")
        os.makedirs(out)
        p = subprocess.run(["srun", "-N1", "-n2", "--overcommit", "--time=10", BINARY, "diagnose", "--quick",
                            "--layers", "system", "--workloads", "none", "-q", "--json",
                            os.path.join(out, "{host}-{rank}.json")],
                           capture_output=True, text=True, env=env, timeout=600)
        expect(p.returncode == 0, f"srun exit code {p.returncode}\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
        names = sorted(os.listdir(out))
        expect(names == [f"{host}-0.json", f"{host}-1.json"], f"one report per rank: {names}")
        for name in names:
            with open(os.path.join(out, name)) as f:
                launch = json.load(f)["launch"]
            expect(launch["launcher"] == "slurm" and launch["took_turns"], f"{name}: {launch}")
            expect(launch["rank"] == name[-6], f"{name}: rank {launch['rank']}")
    finally:
        for daemon in daemons:
            daemon.terminate()
        for daemon in daemons:
            try:
                daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main([test_srun_two_ranks_write_two_reports])

"""What the benchmarks measure with, shared by them: a timestamped log line, this process's peak memory, the
machine's busy and stolen CPU time (/proc/stat), PostgreSQL's CPU for one database (polled while a step runs), a
command run and measured (wall, its own peak RSS, CPU of it, of PostgreSQL and of everything else), waiting for
a quiet machine, VACUUM ANALYZE, a fixed reference workload that tells the VM's speed between runs, the other
processes' load while this one computes (Load), a child's own peak memory (VmHWM) and Django set up from the
project folder. The process tables it reads are benchlib's."""
from __future__ import annotations

import math
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

import benchlib
import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", flush=True)


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def machine_busy() -> tuple[float, float]:
    """CPU seconds the machine's CPUs have been busy (user, system, irq, ...; not idle, iowait, steal) and
    stolen (the hypervisor ran something else while a CPU had work), from /proc/stat."""
    with open("/proc/stat") as handle:
        cpu = [int(x) for x in handle.readline().split()[1:]]
    tick = os.sysconf("SC_CLK_TCK")
    return (sum(cpu[:7]) - cpu[3] - cpu[4]) / tick, cpu[7] / tick


def postgres_cpu(database: str) -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL process that works for `database`: its backends and the
    server's own processes (checkpointer, WAL writer, ...); other databases' backends are left out."""
    return {pid: benchlib.cpu_seconds(fields) for pid, name, fields, cmdline in benchlib.processes()
            if benchlib.works_for_database(name, cmdline, database)}


class CpuMonitor(threading.Thread):
    """Polls PostgreSQL's processes while a step runs (a backend's CPU time vanishes with it when the
    client disconnects), and the machine's busy time, to tell the step's own work from other load."""

    def __init__(self, database: str, interval: float = 0.2):
        super().__init__(daemon=True)
        self.database, self.interval = database, interval
        self.first = postgres_cpu(database)
        self.last = dict(self.first)
        self.busy0 = machine_busy()
        self.self0 = self._self_cpu()
        self.halt = threading.Event()

    @staticmethod
    def _self_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def run(self):
        while not self.halt.wait(self.interval):
            self.last.update(postgres_cpu(self.database))

    def stop(self, child_cpu: float, wall: float) -> dict:
        self.halt.set()
        self.join()
        self.last.update(postgres_cpu(self.database))
        postgres = sum(cpu - self.first.get(pid, 0.0) for pid, cpu in self.last.items())
        busy, steal = (b - a for a, b in zip(self.busy0, machine_busy(), strict=True))
        other = max(0.0, busy - child_cpu - postgres - (self._self_cpu() - self.self0))
        wall = max(wall, 1e-9)
        return {"process_cpu_s": child_cpu, "postgres_cpu_s": postgres, "other_cores": other / wall,
                "steal_cores": steal / wall}


def run_measured(argv: list[str], env: dict, database: str) -> tuple[str, float, float, dict]:
    """Run a command; returns (stdout, wall seconds, the child's own peak RSS in MB via wait4, CPU use):
    CPU seconds of the child and of PostgreSQL, and the cores other processes used on average meanwhile."""
    monitor = CpuMonitor(database)
    monitor.start()
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=err)
        out = proc.stdout.read().decode()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        proc.stdout.close()
        cpu = monitor.stop(usage.ru_utime + usage.ru_stime, wall)
        if proc.returncode:
            err.seek(0)
            raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{out}\n{err.read().decode()[-4000:]}")
    return out, wall, usage.ru_maxrss / 1024, cpu


def cpu_busy(interval: float = 1.0) -> float:
    """Cores busy or stolen machine-wide over `interval` seconds (from /proc/stat)."""
    busy0, steal0 = machine_busy()
    started = time.monotonic()
    time.sleep(interval)
    busy1, steal1 = machine_busy()
    return (busy1 - busy0 + steal1 - steal0) / (time.monotonic() - started)


def wait_until_quiet(limit: float, wait: float) -> float:
    deadline = time.monotonic() + wait
    while True:
        busy = cpu_busy()
        if busy < limit or time.monotonic() >= deadline:
            if busy >= limit:
                log(f"WARNING: other processes use {busy:.2f} cores; timings will be pessimistic")
            return busy
        log(f"other processes use {busy:.2f} cores; waiting for a quieter machine")
        time.sleep(2)


def vacuum_analyze(url: str) -> None:
    import psycopg2

    conn = psycopg2.connect(url)
    try:
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute("VACUUM (ANALYZE)")
    finally:
        conn.close()


def calibrate() -> dict:
    """A fixed CPU-bound reference workload (a pure-Python loop and a numpy sort), timed, to compare the
    machine's speed between runs: on this shared VM it varies by a factor of two to three even when no
    other process shows as busy."""
    rng = np.random.default_rng(0)
    values = rng.random(2_000_000)
    started = time.perf_counter()
    total = 0
    for i in range(2_000_000):
        total += i
    python_s = time.perf_counter() - started
    started = time.perf_counter()
    np.sort(values)
    numpy_s = time.perf_counter() - started
    return {"python_loop_s": python_s, "numpy_sort_s": numpy_s}


class Load:
    """Cores other processes used and the hypervisor stole while this process computed (no polling thread)."""

    def __init__(self):
        self.busy0, self.self0 = machine_busy(), self._self_cpu()

    @staticmethod
    def _self_cpu() -> float:
        usage = resource.getrusage(resource.RUSAGE_SELF)
        return usage.ru_utime + usage.ru_stime

    def stop(self, wall: float) -> dict:
        busy, steal = (b - a for a, b in zip(self.busy0, machine_busy(), strict=True))
        own = self._self_cpu() - self.self0
        wall = max(wall, 1e-9)
        return {"other_cores": max(0.0, busy - own) / wall, "steal_cores": steal / wall}


def own_peak_mb() -> float:
    """Peak RSS of this process's own address space since exec (VmHWM). ru_maxrss also counts the RSS the
    parent had when it forked us, as Linux carries the high-water mark across fork and exec."""
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return math.nan


def setup_django() -> None:
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()

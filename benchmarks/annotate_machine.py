"""The machine under the annotator benchmark (benchmarks/annotate.py): where things are, logging, and the CPU
time of gunicorn, PostgreSQL and everything else from Linux's /proc, so that a run on a shared machine can
say how much of the two cores it had."""
from __future__ import annotations

import os
import random
import resource
import sys
import time
from datetime import datetime
from pathlib import Path

import benchlib

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"

WORDS = (
    "the of and to in a is that for it as was with be by on not he this are or his from at which but have an "
    "they you were her she there been one all we their has would when if so no will more about can out up "
    "what said them some could into than other time only new these two may first then do any like my now "
    "over such our man me even most made after also did many before must through back years where much your "
    "way well down should because each just those people how too little state good very make world still own "
    "see men work long get here between both life being under never day same another know while last might us "
    "great old year off come since against go came right used take three government council minister market "
    "river village school hospital election station museum company weather summer winter morning evening"
).split()


def log(message: str) -> None:
    print(f"[{datetime.now():%H:%M:%S}] {message}", file=sys.stderr, flush=True)


#: The Celery worker the beside-stats mode starts is named WORKER_NAME@<host> (annotate_beside.py); the pids of
#: PostgreSQL backends serving it (by application_name), kept up to date by its recompute loop.
WORKER_NAME = "annotate-bench"
WORKER_BACKENDS: set[int] = set()


def cpu_times(database: str, port: int = 0) -> dict:
    """CPU seconds used so far (Linux /proc): by our gunicorn (the one bound to `port`), by PostgreSQL (the
    bench database's backends and the server's own processes), by the beside-stats Celery worker and its
    backends (when there is one), by this process, and by the whole machine ("busy", from /proc/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    totals: dict = {}
    processes: dict[int, tuple[str, float]] = {}
    with open("/proc/stat") as handle:
        cpu = [int(x) for x in handle.readline().split()[1:]]
    totals["busy"] = (sum(cpu[:7]) - cpu[3] - cpu[4]) / tick  # all but idle, iowait and steal
    totals["steal"] = cpu[7] / tick  # taken by the hypervisor for other machines
    usage = resource.getrusage(resource.RUSAGE_SELF)
    totals["self"] = usage.ru_utime + usage.ru_stime
    worker = f"{WORKER_NAME}@".encode()
    for pid, name, fields, cmdline in benchlib.processes():
        used = benchlib.cpu_seconds(fields)
        if port and b"gunicorn" in cmdline and f"{HOST}:{port}".encode() in cmdline:
            processes[pid] = ("gunicorn", used)
        elif b"celery" in cmdline and worker in cmdline:
            processes[pid] = ("celery", used)
        elif pid in WORKER_BACKENDS:
            processes[pid] = ("postgres_worker", used)
        elif benchlib.works_for_database(name, cmdline, database):
            processes[pid] = ("postgres", used)
    return {**totals, "processes": processes}


def cpu_share(before: dict, after: dict, seconds: float, client_seconds: float = 0.0) -> dict[str, float]:
    """Cores used on average over `seconds`: gunicorn, PostgreSQL, the client (this process and the CPU
    seconds its children reported) and everything else on the machine ("other": other users' work); with a
    beside-stats worker also "celery" and "postgres_worker" (its backends, not in "postgres")."""
    used = {k: after[k] - before[k] for k in ("self", "busy", "steal")}
    groups = ("gunicorn", "postgres", "celery", "postgres_worker")
    for group in groups:  # per process: one that ended in between is left out, not subtracted
        used[group] = sum(t - before["processes"].get(pid, (group, 0.0))[1]
                          for pid, (g, t) in after["processes"].items() if g == group)
    client = used["self"] + client_seconds
    other = max(0.0, used["busy"] - sum(used[g] for g in groups) - client)
    shares = {"gunicorn": round(used["gunicorn"] / seconds, 2), "postgres": round(used["postgres"] / seconds, 2),
              "client": round(client / seconds, 2), "other": round(other / seconds, 2),
              "steal": round(used["steal"] / seconds, 2)}
    for group in groups[2:]:
        if any(g == group for g, _ in after["processes"].values()):
            shares[group] = round(used[group] / seconds, 2)
    return shares


def disturbance(cores: dict) -> float:
    """Cores taken from us: by other processes here, and by the hypervisor for other machines (steal)."""
    return cores["other"] + cores["steal"]


def wait_until_quiet(database: str, port: int, limit: float, wait: float) -> float:
    """Wait (up to `wait` seconds) until other processes use less than `limit` cores; returns their last use."""
    deadline = time.monotonic() + wait
    while True:
        before, t = cpu_times(database, port), time.monotonic()
        time.sleep(2.0)
        cores = cpu_share(before, cpu_times(database, port), time.monotonic() - t)
        if disturbance(cores) < limit or time.monotonic() >= deadline:
            return disturbance(cores)
        log(f"other processes use {cores['other']:.2f} cores and the hypervisor steals {cores['steal']:.2f}; "
            "waiting for a quieter machine")


def calibrate() -> float:
    """Milliseconds of wall clock for a fixed piece of Python that, like a Django request, jumps around
    memory (dicts of strings, objects): how fast this machine runs such code right now. On a shared
    virtual machine that changes from minute to minute with the neighbours' memory traffic; compare
    runs with it."""
    rng = random.Random(0)
    keys = [f"key-{rng.random()}" for _ in range(100_000)]
    t = time.perf_counter()
    table = {k: {"id": i, "text": k} for i, k in enumerate(keys)}
    rng.shuffle(keys)
    total = sum(table[k]["id"] for k in keys)
    del table, total
    return round(1000 * (time.perf_counter() - t), 1)

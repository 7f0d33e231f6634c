#!/usr/bin/env python
"""Load benchmark of the annotator JSON API (docs/api.md, "Annotators") on PostgreSQL + gunicorn.

    .venv/bin/python benchmarks/annotate.py [--mode capacity|pace|both] [--duration S] ...

Run from the project folder with DATABASE_URL pointing at PostgreSQL. The benchmark never
touches that database: it drops and recreates a separate one on the same server
(`mteval_bench` by default), migrates it, imports generated campaigns, starts gunicorn on a
free loopback port, drives simulated annotators through `/c/<slug>/start/` and
`/api/hit/<token>/` only, and then checks in the database that every judgment answered 201
is stored exactly once. gunicorn is stopped at the end, also on errors and Ctrl-C.

- capacity: `--annotators` (50) annotators submit back to back, no pause, for `--duration`
  (20 s); prints judgments stored per second. Target: >= 300/s.
- pace: open-loop. `--pace-annotators` (1,500) annotators each post one judgment every
  `--think` (15 s, jittered) seconds, i.e. 100 judgments/s in total, and fetch the current
  state (GET) once between two posts; for `--duration` (30 s). Latency is measured from the
  scheduled send time, so queueing shows. Target: p95 < 50 ms.

The client runs in a few processes (`--client-procs`) with threads inside, so that it takes
little of the two cores the server and PostgreSQL also use. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import heapq
import http.client
import json
import math
import multiprocessing as mp
import os
import queue
import random
import resource
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import benchlib
from benchlib import bench_database_url, recreate_database

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
BIN = Path(sys.executable).parent
HOST = "127.0.0.1"

CAPACITY_TARGET = 300.0  # judgments stored per second, annotators submitting back to back
PACE_P95_TARGET_MS = 50.0  # p95 latency at 100 judgments/s, GET and POST alike

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
ACCEPT_HEADERS = {"Accept": "application/json"}

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


def cpu_times(database: str, port: int = 0) -> dict:
    """CPU seconds used so far (Linux /proc): by our gunicorn (the one bound to `port`), by PostgreSQL (the
    bench database's backends and the server's own processes), by this process, and by the whole machine
    ("busy", from /proc/stat)."""
    tick = os.sysconf("SC_CLK_TCK")
    totals: dict = {}
    processes: dict[int, tuple[str, float]] = {}
    with open("/proc/stat") as handle:
        cpu = [int(x) for x in handle.readline().split()[1:]]
    totals["busy"] = (sum(cpu[:7]) - cpu[3] - cpu[4]) / tick  # all but idle, iowait and steal
    totals["steal"] = cpu[7] / tick  # taken by the hypervisor for other machines
    usage = resource.getrusage(resource.RUSAGE_SELF)
    totals["self"] = usage.ru_utime + usage.ru_stime
    for pid, name, fields, cmdline in benchlib.processes():
        used = benchlib.cpu_seconds(fields)
        if port and b"gunicorn" in cmdline and f"{HOST}:{port}".encode() in cmdline:
            processes[pid] = ("gunicorn", used)
        elif benchlib.works_for_database(name, cmdline, database):
            processes[pid] = ("postgres", used)
    return {**totals, "processes": processes}


def cpu_share(before: dict, after: dict, seconds: float, client_seconds: float = 0.0) -> dict[str, float]:
    """Cores used on average over `seconds`: gunicorn, PostgreSQL, the client (this process and the CPU
    seconds its children reported) and everything else on the machine ("other": other users' work)."""
    used = {k: after[k] - before[k] for k in ("self", "busy", "steal")}
    for group in ("gunicorn", "postgres"):  # per process: one that ended in between is left out, not subtracted
        used[group] = sum(t - before["processes"].get(pid, (group, 0.0))[1]
                          for pid, (g, t) in after["processes"].items() if g == group)
    client = used["self"] + client_seconds
    other = max(0.0, used["busy"] - used["gunicorn"] - used["postgres"] - client)
    return {"gunicorn": round(used["gunicorn"] / seconds, 2), "postgres": round(used["postgres"] / seconds, 2),
            "client": round(client / seconds, 2), "other": round(other / seconds, 2),
            "steal": round(used["steal"] / seconds, 2)}


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


# ---------------------------------------------------------------------------------------------
# Preparation: a separate database, migrated, with generated campaigns
# ---------------------------------------------------------------------------------------------

def bench_broker_url(broker_url: str, redis_db: int) -> str:
    """The benchmark's own Redis database on the same server, so that the recompute tasks its judgments
    queue never reach a Celery worker of the dev database. Empty (tasks in-process) without Redis."""
    parts = urlsplit(broker_url)
    if parts.scheme not in ("redis", "rediss"):
        return ""
    return parts._replace(path=f"/{redis_db}").geturl()


def flush_redis(url: str) -> None:
    if url:
        import redis

        try:
            redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).flushdb()
        except redis.RedisError as exc:
            log(f"could not empty {url}: {exc}")


def server_env(bench_url: str, broker_url: str, args) -> dict:
    env = dict(os.environ)
    env.update(
        DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
        CONN_MAX_AGE=str(args.conn_max_age), LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
        CELERY_BROKER_URL=broker_url, CACHE_KEY_PREFIX="bench",
        # Plain HTTP on loopback, collected static files (DEBUG is off), and one address for 1,500 simulated
        # annotators: no HTTPS redirect, and the crowd-entry limits off (each annotator has its own worker id).
        SECURE_SSL_REDIRECT="0", STATIC_ROOT=str(Path(tempfile.gettempdir()) / "mteval-bench-static"),
        CROWD_ENTRY_RATE_PER_IP="", CROWD_ENTRY_RATE_PER_CAMPAIGN="", CROWD_MAX_OPEN_HITS_PER_IP="",
    )
    for name in ("DJANGO_SETTINGS_MODULE", "CELERY_RESULT_BACKEND", "CACHE_URL"):
        env.pop(name, None)
    return env


def manage(env: dict, *argv: str) -> str:
    result = subprocess.run([sys.executable, "manage.py", *argv], cwd=ROOT, env=env, capture_output=True, text=True)
    if result.returncode:
        raise RuntimeError(f"manage.py {' '.join(argv)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(8, 30))]
    return " ".join(words).capitalize() + "."


def write_campaign_file(path: Path, segments: int, systems: int, seed: int) -> None:
    rng = random.Random(seed)
    names = [f"system-{chr(65 + k)}" if k < 26 else f"system-{k}" for k in range(systems)]
    with path.open("w", encoding="utf-8") as handle:
        for i in range(segments):
            record = {
                "doc_id": f"doc-{i // 20:04d}", "seg_id": i % 20 + 1,
                "source": sentence(rng), "reference": sentence(rng),
                "systems": {name: sentence(rng) for name in names},
            }
            handle.write(json.dumps(record) + "\n")


def import_campaign(env: dict, path: Path, name: str, redundancy: int, gate: bool = False) -> dict:
    extra = ["--gate"] if gate else []  # the live reliability gate (docs/methods.md §12.1)
    out = manage(env, "import_campaign", str(path), "--name", name, "--protocol", "adequacy",
                 "--redundancy", str(redundancy), "--seed", "1", *extra)
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------

def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


class Server:
    """gunicorn in a session of its own; stop() always ends it (and only it)."""

    def __init__(self, env: dict, args):
        self.port = free_port()
        self.argv = [
            str(BIN / "gunicorn"), args.app, "-b", f"{HOST}:{self.port}",
            "-w", str(args.gunicorn_workers), "-k", args.worker_class, "--threads", str(args.threads),
            "--keep-alive", str(args.keep_alive), "--backlog", "2048", "--timeout", "60",
            "--log-level", "warning", "--error-logfile", "-", *args.gunicorn_arg,
        ]
        self.log_path = OUT / "gunicorn.log"
        self.env = env
        self.proc: subprocess.Popen | None = None

    @property
    def description(self) -> str:
        return " ".join(self.argv[1:]).replace(f"-b {HOST}:{self.port}", f"-b {HOST}:<port>")

    def start(self, timeout: float = 180.0) -> None:
        self.log_file = self.log_path.open("w")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, env=self.env, stdout=self.log_file, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.proc.returncode}; see {self.log_path}")
            try:
                conn = http.client.HTTPConnection(HOST, self.port, timeout=5)
                conn.request("GET", "/api/hit/warm-up/", headers=ACCEPT_HEADERS)
                status = conn.getresponse().status
                conn.close()
                if status == 404:
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError(f"gunicorn did not answer within {timeout:.0f} s; see {self.log_path}")

    def warm_up(self, requests: int = 100) -> None:
        """Make every worker (and thread) open its database connection before measuring."""

        def hit():
            client = Client(self.port)
            for _ in range(requests // 10):
                client.request("GET", "/api/hit/warm-up/")
            client.close()

        threads = [threading.Thread(target=hit) for _ in range(10)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            benchlib.stop_server(self.proc)
        finally:
            self.log_file.close()


# ---------------------------------------------------------------------------------------------
# The client: one keep-alive connection per annotator (capacity) or per thread (pace)
# ---------------------------------------------------------------------------------------------

class Client:
    """A keep-alive HTTP/1.1 connection; reopened when the server closed it or it sat idle.

    A request that fails on a connection the server closed is sent once more on a new one.
    That is safe for the POST too: a repeated POST of the item just saved is answered as
    before and stored once (docs/api.md), and the database check below verifies it.
    """

    def __init__(self, port: int, idle_max: float = 4.0):
        self.port = port
        self.idle_max = idle_max
        self.conn: http.client.HTTPConnection | None = None
        self.last_used = 0.0
        self.retries = 0
        self.connects = 0

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method: str, path: str, body: bytes | None = None) -> tuple[int, bytes, str | None]:
        for attempt in range(2):
            if self.conn is not None and time.monotonic() - self.last_used > self.idle_max:
                self.close()
            if self.conn is None:
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30)
                self.connects += 1
            try:
                self.conn.request(method, path, body=body, headers=JSON_HEADERS if body is not None else ACCEPT_HEADERS)
                response = self.conn.getresponse()
                data = response.read()
            except (OSError, http.client.HTTPException):
                self.close()
                if attempt:
                    raise
                self.retries += 1
                continue
            self.last_used = time.monotonic()
            if response.will_close:
                self.close()
            return response.status, data, response.getheader("Location")
        raise AssertionError("unreachable")


class Stats:
    """What one thread saw; merged per process, then in the parent."""

    def __init__(self):
        self.latency: dict[str, list[float]] = {"start": [], "get": [], "post": []}
        self.service: dict[str, list[float]] = {"start": [], "get": [], "post": []}  # from the actual send
        self.lag: list[float] = []  # pace: actual send time minus scheduled send time
        self.status: Counter = Counter()
        self.errors: Counter = Counter()
        self.accepted: list[tuple[str, int]] = []  # (token, item) answered 201
        self.first_send = math.inf
        self.last_done = 0.0
        self.retries = 0
        self.connects = 0
        self.no_hit = 0
        self.cpu_seconds = 0.0  # CPU used by the client process(es) while measuring
        self.cpu: dict[str, float] = {}  # cores used per group (set by the parent)
        self.window = 0.0  # the seconds over which `cpu` was measured

    def merge(self, other: Stats | dict) -> None:
        other = other if isinstance(other, dict) else other.as_dict()
        for kind, values in other["latency"].items():
            self.latency[kind].extend(values)
        for kind, values in other["service"].items():
            self.service[kind].extend(values)
        self.lag.extend(other["lag"])
        self.status.update(other["status"])
        self.errors.update(other["errors"])
        self.accepted.extend(map(tuple, other["accepted"]))
        self.first_send = min(self.first_send, other["first_send"])
        self.last_done = max(self.last_done, other["last_done"])
        self.retries += other["retries"]
        self.connects += other["connects"]
        self.no_hit += other["no_hit"]
        self.cpu_seconds += other["cpu_seconds"]

    def as_dict(self) -> dict:
        return {"latency": self.latency, "service": self.service, "lag": self.lag, "status": dict(self.status),
                "errors": dict(self.errors),
                "accepted": self.accepted, "first_send": self.first_send, "last_done": self.last_done,
                "retries": self.retries, "connects": self.connects, "no_hit": self.no_hit,
                "cpu_seconds": self.cpu_seconds}


class Annotator:
    """One simulated worker: a worker id, the HIT token, and the last state the API returned."""

    def __init__(self, index: int, prefix: str):
        self.index = index
        self.prefix = prefix
        self.hits = 0
        self.token: str | None = None
        self.state: dict | None = None
        self.lock = threading.Lock()

    def start(self, client: Client, slug: str, stats: Stats, scheduled: float | None = None) -> bool:
        """A new worker id enters the campaign and loads its HIT: start redirect, then GET."""
        worker = f"{self.prefix}-{self.index}" + (f"-{self.hits}" if self.hits else "")
        self.hits += 1
        t = time.monotonic() if scheduled is None else scheduled
        status, data, location = call(client, stats, "start", "GET", f"/c/{slug}/start/?worker_id={worker}", None, t)
        if status != 302 or not location or "/hit/" not in location:
            if status == 200:
                stats.no_hit += 1  # "no more work for you": the campaign is used up
            self.token = self.state = None
            return False
        self.token = location.rstrip("/").rsplit("/", 1)[-1]
        return self.fetch(client, stats, time.monotonic())

    def fetch(self, client: Client, stats: Stats, scheduled: float) -> bool:
        status, data, _ = call(client, stats, "get", "GET", f"/api/hit/{self.token}/", None, scheduled)
        if status != 200:
            self.state = None
            return False
        self.state = json.loads(data)
        return True

    def answer(self, client: Client, stats: Stats, rng: random.Random, scheduled: float) -> bool:
        """POST the current item; keep the state the answer returns. False if the HIT cannot go on."""
        item = self.state["item"]["id"]
        body = b'{"item": %d, "score": %d}' % (item, rng.randint(0, 100))
        status, data, _ = call(client, stats, "post", "POST", f"/api/hit/{self.token}/", body, scheduled)
        if status == 201:
            stats.accepted.append((self.token, item))
            self.state = json.loads(data)
            return True
        if status == 409:
            self.state = json.loads(data).get("state")
            return self.state is not None
        self.state = None
        return False

    @property
    def working(self) -> bool:
        return self.state is not None and not self.state.get("done")


def call(client: Client, stats: Stats, kind: str, method: str, path: str, body: bytes | None,
         scheduled: float) -> tuple[int, bytes, str | None]:
    sent = time.monotonic()
    stats.first_send = min(stats.first_send, sent)
    try:
        status, data, location = client.request(method, path, body)
    except (OSError, http.client.HTTPException) as exc:
        stats.errors[f"{kind} {type(exc).__name__}"] += 1
        return 0, b"", None
    done = time.monotonic()
    stats.last_done = max(stats.last_done, done)
    stats.latency[kind].append(done - scheduled)
    stats.service[kind].append(done - sent)
    stats.status[f"{kind} {status}"] += 1
    return status, data, location


def child_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and ends us
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def finish_thread_stats(per_thread: list[tuple[Client, Stats]], cpu_at_start: float) -> dict:
    total = Stats()
    total.cpu_seconds = process_cpu() - cpu_at_start
    for client, stats in per_thread:
        client.close()
        stats.retries += client.retries
        stats.connects += client.connects
        total.merge(stats)
    return total.as_dict()


# --- capacity: closed loop, back to back ------------------------------------------------------

def capacity_process(proc: int, indices: list[int], cfg: dict, t_start: float, results) -> None:
    child_signals()
    deadline = t_start + cfg["duration"]
    per_thread: list[tuple[Client, Stats]] = []

    def run(index: int) -> None:
        client, stats = Client(cfg["port"]), Stats()
        per_thread.append((client, stats))
        rng = random.Random(index)
        annotator = Annotator(index, cfg["prefix"])
        time.sleep(max(0.0, t_start - time.monotonic()))
        while time.monotonic() < deadline:
            if not annotator.start(client, cfg["slug"], stats):
                if stats.no_hit:
                    return
                time.sleep(0.1)  # an error: do not spin
                continue
            while annotator.working and time.monotonic() < deadline:
                if not annotator.answer(client, stats, rng, time.monotonic()):
                    break

    cpu_at_start = process_cpu()
    threads = [threading.Thread(target=run, args=(i,)) for i in indices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.put(finish_thread_stats(per_thread, cpu_at_start))


# --- pace: open loop, on a schedule -----------------------------------------------------------

class Scheduler:
    """A heap of (send time, seq, annotator, kind); due events go to the worker threads' queue."""

    def __init__(self):
        self.heap: list = []
        self.cond = threading.Condition()
        self.seq = 0
        self.inflight = 0
        self.due: queue.SimpleQueue = queue.SimpleQueue()

    def push(self, when: float, annotator: Annotator, kind: str) -> None:
        with self.cond:
            self.seq += 1
            heapq.heappush(self.heap, (when, self.seq, annotator, kind))
            self.cond.notify()

    def done(self) -> None:
        with self.cond:
            self.inflight -= 1
            self.cond.notify()

    def run(self, workers: int) -> None:
        with self.cond:
            while True:
                if self.heap:
                    wait = self.heap[0][0] - time.monotonic()
                    if wait <= 0:
                        self.inflight += 1
                        self.due.put(heapq.heappop(self.heap))
                    else:
                        self.cond.wait(wait)
                elif self.inflight:
                    self.cond.wait()
                else:
                    break
        for _ in range(workers):
            self.due.put(None)


def pace_process(proc: int, indices: list[int], cfg: dict, ready, go, t0_value, results) -> None:
    child_signals()
    annotators = [Annotator(i, cfg["prefix"]) for i in indices]
    per_thread: list[tuple[Client, Stats]] = []
    setup_stats = Stats()

    # Setting up: every annotator enters the campaign and loads its HIT (not measured).
    todo: queue.SimpleQueue = queue.SimpleQueue()
    for a in annotators:
        todo.put(a)

    def setup() -> None:
        client = Client(cfg["port"])
        while True:
            try:
                a = todo.get_nowait()
            except queue.Empty:
                break
            a.start(client, cfg["slug"], setup_stats)
        client.close()

    threads = [threading.Thread(target=setup) for _ in range(cfg["threads"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ready.put((proc, sum(a.working for a in annotators), setup_stats.as_dict()))
    go.wait()
    # The schedule starts one warm-up period before t0; what is scheduled before t0 is sent (and its
    # judgments checked in the database) but not measured, so the measured window is in steady state.
    t0 = t0_value.value
    begin, end = t0 - cfg["warmup"], t0 + cfg["duration"]
    cpu_mark = [process_cpu()]
    threading.Timer(max(0.0, t0 - time.monotonic()), lambda: cpu_mark.__setitem__(0, process_cpu())).start()
    think, jitter, n = cfg["think"], cfg["jitter"], cfg["annotators"]
    scheduler = Scheduler()
    rng = random.Random(proc)
    for a in annotators:
        if a.working:
            # Posts of the N annotators spread evenly over one think time: a steady N/think per second.
            first = begin + (a.index + rng.random()) * think / n
            if first >= end:
                continue
            scheduler.push(first, a, "post")
            get_at = first - think * rng.uniform(0.3, 0.7)
            if get_at >= begin and rng.random() < cfg["get_ratio"]:
                scheduler.push(get_at, a, "get")

    def work(seed: int) -> None:
        client, measured = Client(cfg["port"]), Stats()
        warming = Stats()
        warming.accepted = measured.accepted  # every judgment answered 201 is checked in the database
        per_thread.append((client, measured))
        rng = random.Random(seed)
        while True:
            event = scheduler.due.get()
            if event is None:
                return
            when, _, a, kind = event
            stats = measured if when >= t0 else warming
            late = time.monotonic() - when
            stats.lag.append(late)
            with a.lock:
                if late > cfg["give_up"]:
                    # The server is that far behind: the request is not sent (an overloaded run still ends
                    # in bounded time) and counts with its lateness, a lower bound of its latency.
                    stats.errors[f"{kind} not sent, >{cfg['give_up']:g} s late"] += 1
                    stats.latency[kind].append(late)
                    if kind == "post":
                        following = when + think * rng.uniform(1 - jitter, 1 + jitter)
                        if following < end:
                            scheduler.push(following, a, "post")
                elif kind == "get":
                    if a.working:
                        a.fetch(client, stats, when)
                elif a.working and a.answer(client, stats, rng, when):
                    if not a.working:  # HIT complete: a new worker id takes this annotator's place
                        a.start(client, cfg["slug"], stats, scheduled=time.monotonic())
                    following = when + think * rng.uniform(1 - jitter, 1 + jitter)
                    if a.working and following < end:
                        scheduler.push(following, a, "post")
                        get_at = when + (following - when) * rng.uniform(0.3, 0.7)
                        if rng.random() < cfg["get_ratio"]:
                            scheduler.push(get_at, a, "get")
            scheduler.done()

    threads = [threading.Thread(target=work, args=(proc * 1000 + k,)) for k in range(cfg["threads"])]
    for t in threads:
        t.start()
    scheduler.run(len(threads))
    for t in threads:
        t.join()
    results.put(finish_thread_stats(per_thread, cpu_mark[0]))


# --- running the processes --------------------------------------------------------------------

CHILDREN: list[mp.Process] = []


def split(n: int, procs: int) -> list[list[int]]:
    return [list(range(p, n, procs)) for p in range(procs)]


def collect(results, procs: list[mp.Process], timeout: float) -> Stats:
    total = Stats()
    for _ in procs:
        try:
            total.merge(results.get(timeout=timeout))
        except queue.Empty:
            raise RuntimeError(f"the load generator did not finish within {timeout:.0f} s") from None
    for p in procs:
        p.join(timeout=10)
    return total


def run_capacity(port: int, slug: str, prefix: str, args) -> tuple[Stats, float]:
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    cfg = {"port": port, "slug": slug, "prefix": prefix, "duration": args.capacity_duration}
    t_start = time.monotonic() + 1.0
    procs = [ctx.Process(target=capacity_process, args=(p, idx, cfg, t_start, results), daemon=True)
             for p, idx in enumerate(split(args.annotators, args.client_procs))]
    CHILDREN.extend(procs)
    for p in procs:
        p.start()
    time.sleep(max(0.0, t_start - time.monotonic()))
    before = cpu_times(args.db_name, port)
    stats = collect(results, procs, timeout=args.capacity_duration + 120)
    stats.window = time.monotonic() - t_start
    stats.cpu = cpu_share(before, cpu_times(args.db_name, port), stats.window, stats.cpu_seconds)
    return stats, t_start


def run_pace(port: int, slug: str, prefix: str, args) -> tuple[Stats, Stats, float, int]:
    ctx = mp.get_context("fork")
    results, ready = ctx.Queue(), ctx.Queue()
    go, t0_value = ctx.Event(), ctx.Value("d", 0.0)
    warmup = args.think if args.warmup is None else args.warmup
    cfg = {"port": port, "slug": slug, "prefix": prefix, "duration": args.pace_duration, "warmup": warmup,
           "think": args.think, "jitter": args.jitter, "annotators": args.pace_annotators,
           "get_ratio": args.get_ratio, "threads": args.client_threads, "give_up": args.give_up}
    procs = [ctx.Process(target=pace_process, args=(p, idx, cfg, ready, go, t0_value, results), daemon=True)
             for p, idx in enumerate(split(args.pace_annotators, args.client_procs))]
    CHILDREN.extend(procs)
    started = time.monotonic()
    for p in procs:
        p.start()
    setup, working = Stats(), 0
    for _ in procs:
        _, n, setup_stats = ready.get(timeout=600)
        working += n
        setup.merge(setup_stats)
    log(f"pace: {working} annotators hold a HIT (set-up took {time.monotonic() - started:.1f} s); "
        f"warming up {warmup:g} s, then measuring {args.pace_duration:g} s")
    t0_value.value = t0 = time.monotonic() + 0.5 + warmup
    go.set()
    time.sleep(max(0.0, t0 - time.monotonic()))
    before = cpu_times(args.db_name, port)
    stats = collect(results, procs, timeout=warmup + args.pace_duration + args.give_up + 120)
    seconds = time.monotonic() - t0
    stats.window = seconds
    stats.cpu = cpu_share(before, cpu_times(args.db_name, port), seconds, stats.cpu_seconds)
    return stats, setup, t0_value.value, working


# ---------------------------------------------------------------------------------------------
# Checking the database
# ---------------------------------------------------------------------------------------------

def check_database(bench_url: str, slug: str, prefix: str, accepted: list[tuple[str, int]]) -> dict:
    """What the database holds of one run: the judgments of the campaign's workers named `prefix-...`."""
    import psycopg2

    worker = "JOIN annotation_annotator w ON w.id = {t}.annotator_id AND w.external_id LIKE %(workers)s"
    conn = psycopg2.connect(bench_url)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT id FROM annotation_campaign WHERE slug = %s", [slug])
            params = {"campaign": cur.fetchone()[0], "workers": prefix + "-%"}
            cur.execute("SELECT a.token, j.item_id FROM annotation_judgment j "
                        "JOIN annotation_assignment a ON a.id = j.assignment_id " + worker.format(t="j") +
                        " WHERE j.campaign_id = %(campaign)s", params)
            rows = cur.fetchall()
            cur.execute("SELECT count(*), coalesce(sum(n - 1), 0) FROM (SELECT count(*) AS n "
                        "FROM annotation_judgment j " + worker.format(t="j") + " WHERE j.campaign_id = %(campaign)s "
                        "GROUP BY j.assignment_id, j.item_id HAVING count(*) > 1) d", params)
            duplicated_pairs, duplicated_rows = cur.fetchone()
            # An assignment's position is the number of its judgments (items are answered in order).
            cur.execute("SELECT count(*) FROM annotation_assignment a " + worker.format(t="a") +
                        " WHERE a.campaign_id = %(campaign)s AND a.position <> "
                        "(SELECT count(*) FROM annotation_judgment j WHERE j.assignment_id = a.id)", params)
            (inconsistent,) = cur.fetchone()
    finally:
        conn.close()
    answered, in_db = set(accepted), set(rows)
    return {
        "stored": len(rows),
        "expected": len(answered),
        "responses_201": len(accepted),
        "lost": len(answered - in_db),
        "stored_without_201": len(in_db - answered),
        "duplicated": int(duplicated_rows),
        "duplicated_pairs": duplicated_pairs,
        "inconsistent_assignments": inconsistent,
    }


# ---------------------------------------------------------------------------------------------
# Reporting
# ---------------------------------------------------------------------------------------------

def percentiles(values: list[float]) -> dict:
    if not values:
        return {"n": 0}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(1000 * ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))], 2)

    return {"n": len(ordered), "p50": at(0.50), "p95": at(0.95), "p99": at(0.99), "max": round(1000 * ordered[-1], 2),
            "mean": round(1000 * sum(ordered) / len(ordered), 2)}


def fmt_latency(name: str, p: dict) -> str:
    if not p.get("n"):
        return f"  {name:<22} (none)"
    return (f"  {name:<22} n={p['n']:<6} p50={p['p50']:7.2f}  p95={p['p95']:7.2f}  p99={p['p99']:7.2f}  "
            f"max={p['max']:8.2f}  mean={p['mean']:7.2f} ms")


def fmt_check(check: dict, label: str = "database") -> list[str]:
    ok = check["lost"] == 0 and check["duplicated"] == 0 and check["inconsistent_assignments"] == 0
    return [
        f"  {label}: stored={check['stored']}  expected={check['expected']} (201 responses: "
        f"{check['responses_201']})  lost={check['lost']}  duplicated={check['duplicated']}  "
        f"stored-without-201={check['stored_without_201']}  inconsistent-assignments="
        f"{check['inconsistent_assignments']}  -> {'OK' if ok else 'FAILED'}",
    ]


def cpu_per_judgment(cores: dict, seconds: float, judgments: int) -> dict:
    """Milliseconds of CPU per stored judgment, per group, and the rate the machine's cores could sustain
    if nothing else ran (a projection from the CPU cost alone, not a measurement)."""
    if not judgments:
        return {}
    ms = {k: round(1000 * cores[k] * seconds / judgments, 2) for k in ("gunicorn", "postgres", "client")}
    ms["total"] = round(sum(ms.values()), 2)
    ms["projected_rate_on_all_cores"] = round(1000 * (os.cpu_count() or 1) / ms["total"], 1) if ms["total"] else None
    return ms


def summarise_capacity(stats: Stats, t_start: float, check: dict, args) -> dict:
    elapsed = max(1e-9, stats.last_done - t_start)
    rate = check["expected"] / elapsed
    db_rate = check["stored"] / elapsed
    return {
        "cpu_ms_per_judgment": cpu_per_judgment(stats.cpu, stats.window, check["stored"]),
        "annotators": args.annotators, "duration": args.capacity_duration, "elapsed": round(elapsed, 2),
        "judgments_per_second": round(rate, 1), "db_judgments_per_second": round(db_rate, 1),
        "status": dict(stats.status), "errors": dict(stats.errors), "retries": stats.retries,
        "connections_opened": stats.connects, "cores_used": stats.cpu,
        "latency_ms": {k: percentiles(v) for k, v in stats.latency.items()}, "check": check,
        "target": CAPACITY_TARGET, "met": db_rate >= CAPACITY_TARGET,
    }


def summarise_pace(stats: Stats, setup: Stats, t0: float, working: int, check: dict, args) -> dict:
    target_rate = args.pace_annotators / args.think
    latency = {k: percentiles(v) for k, v in stats.latency.items()}
    p95s = [latency[k]["p95"] for k in ("get", "post") if latency[k].get("n")]
    return {
        "annotators": args.pace_annotators, "holding_a_hit": working, "think_seconds": args.think,
        "duration": args.pace_duration, "target_rate": round(target_rate, 1),
        "warmup_seconds": args.think if args.warmup is None else args.warmup,
        "achieved_rate": round(stats.status["post 201"] / args.pace_duration, 1),
        "requests_per_second": round(sum(len(v) for v in stats.latency.values()) / args.pace_duration, 1),
        "status": dict(stats.status), "errors": dict(stats.errors), "retries": stats.retries,
        "connections_opened": stats.connects, "cores_used": stats.cpu, "latency_ms": latency,
        "client_lag_ms": percentiles(stats.lag),
        "service_ms": {k: percentiles(v) for k, v in stats.service.items()},
        "cpu_ms_per_judgment": cpu_per_judgment(stats.cpu, stats.window, stats.status["post 201"]),
        "setup_start_ms": percentiles(setup.latency["start"]),
        "setup_errors": dict(setup.errors), "check": check,
        "target_p95_ms": PACE_P95_TARGET_MS, "met": bool(p95s) and max(p95s) < PACE_P95_TARGET_MS,
    }


def print_summary(report: dict) -> None:
    lines = ["", "=" * 100, "ANNOTATOR API BENCHMARK", "=" * 100]
    lines.append(f"command:  {report['command']}")
    lines.append(f"server:   {report['server']}")
    lines.append(f"          DEBUG=0 CONN_MAX_AGE={report['conn_max_age']} database={report['database']} "
                 f"(PostgreSQL) broker/cache={report['broker']}")
    lines.append(f"          {os.cpu_count()} cores shared by server, database and client; calibration loop "
                 f"{report.get('calibration_ms')} ms (lower is faster)")
    after = {mode: report[mode].get("calibration_after_ms") for mode in ("capacity", "pace") if mode in report}
    if any(v is not None for v in after.values()):
        lines.append(f"          calibration loop after the runs: {after} ms (--slow-limit {report['slow_limit']:g})")
    lines.append(f"campaign: {report['campaign']}")
    lines.append(f"client:   {report['client']}")
    cap = report.get("capacity")
    if cap:
        lines += ["", f"CAPACITY  {cap['annotators']} annotators back to back, {cap['duration']:g} s "
                      f"(measured over {cap['elapsed']:.2f} s)"]
        lines.append(f"  judgments/s: {cap['judgments_per_second']:.1f} (201 responses)   "
                     f"{cap['db_judgments_per_second']:.1f} (stored in the database)")
        for kind in ("start", "get", "post"):
            lines.append(fmt_latency(kind + " (closed loop)", cap["latency_ms"][kind]))
        lines.append(f"  responses: {cap['status']}  errors: {cap['errors'] or 'none'}  "
                     f"client retries: {cap['retries']}  connections opened: {cap['connections_opened']}")
        lines.append(f"  cores used on average: {cap['cores_used']}")
        lines.append(f"  CPU ms per judgment: {cap['cpu_ms_per_judgment']}")
        lines += fmt_check(cap["check"])
    pace = report.get("pace")
    if pace:
        lines += ["", f"PACE  {pace['annotators']} annotators ({pace['holding_a_hit']} holding a HIT), one judgment "
                      f"each ~{pace['think_seconds']:g} s, open loop, {pace['duration']:g} s measured after "
                      f"{pace['warmup_seconds']:g} s of warm-up"]
        lines.append(f"  rate: target {pace['target_rate']:.1f} judgments/s, achieved {pace['achieved_rate']:.1f} "
                     f"(201 responses); {pace['requests_per_second']:.1f} requests/s offered")
        lines.append(fmt_latency("GET-next", pace["latency_ms"]["get"]))
        lines.append(fmt_latency("POST", pace["latency_ms"]["post"]))
        if pace["latency_ms"]["start"].get("n"):
            lines.append(fmt_latency("start (new HIT)", pace["latency_ms"]["start"]))
        lines.append(fmt_latency("client send lag", pace["client_lag_ms"]))
        lines.append(fmt_latency("GET-next from send", pace["service_ms"]["get"]))
        lines.append(fmt_latency("POST from send", pace["service_ms"]["post"]))
        lines.append(fmt_latency("set-up start (unmeasured)", pace["setup_start_ms"]))
        lines.append(f"  responses: {pace['status']}  errors: {pace['errors'] or 'none'}  "
                     f"client retries: {pace['retries']}  connections opened: {pace['connections_opened']}")
        lines.append(f"  cores used on average: {pace['cores_used']}")
        lines.append(f"  CPU ms per judgment (GETs included): {pace['cpu_ms_per_judgment']}")
        lines += fmt_check(pace["check"], "database (warm-up included)")
    lines += ["", "TARGETS"]
    if cap:
        lines.append(f"  capacity >= {CAPACITY_TARGET:.0f} judgments/s:    {cap['db_judgments_per_second']:8.1f}   "
                     f"{'MET' if cap['met'] else 'NOT MET'}")
    if pace:
        worst = max((pace["latency_ms"][k].get("p95", math.inf) for k in ("get", "post")), default=math.inf)
        lines.append(f"  pace p95 < {PACE_P95_TARGET_MS:.0f} ms (GET and POST): {worst:8.2f}   "
                     f"{'MET' if pace['met'] else 'NOT MET'}")
    checks = [r["check"] for r in (cap, pace) if r]
    intact = all(c["lost"] == 0 and c["duplicated"] == 0 and c["inconsistent_assignments"] == 0 for c in checks)
    lines.append(f"  zero lost, zero duplicated:          {'MET' if intact else 'NOT MET'}")
    lines.append(f"  report: {report['report_path']}")
    lines.append("=" * 100)
    print("\n".join(lines), flush=True)


# ---------------------------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--mode", choices=["capacity", "pace", "both"], default="both")
    parser.add_argument("--duration", type=float, help="seconds of each mode (default: 20 capacity, 30 pace)")
    parser.add_argument("--annotators", type=int, default=50, help="capacity: annotators submitting back to back")
    parser.add_argument("--pace-annotators", type=int, default=1500, help="pace: annotators at work")
    parser.add_argument("--think", type=float, default=15.0, help="pace: seconds between two posts of an annotator")
    parser.add_argument("--jitter", type=float, default=0.2, help="pace: think time varies by +- this fraction")
    parser.add_argument("--warmup", type=float, help="pace: seconds sent before measuring (default: --think)")
    parser.add_argument("--give-up", type=float, default=10.0,
                        help="pace: a request this many seconds behind its schedule is not sent (counted as late)")
    parser.add_argument("--get-ratio", type=float, default=1.0,
                        help="pace: GETs of the current state per POST (a page load or refresh between answers)")
    parser.add_argument("--segments", type=int, default=2000, help="segments of each generated campaign")
    parser.add_argument("--systems", type=int, default=10, help="systems of each generated campaign")
    parser.add_argument("--redundancy", type=int, help="workers per HIT (default: enough for the run)")
    parser.add_argument("--app", default="config.wsgi", help="the WSGI application gunicorn serves")
    parser.add_argument("--gunicorn-workers", type=int, default=4)
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (sync, gthread)")
    parser.add_argument("--threads", type=int, default=1, help="gunicorn threads per worker (gthread)")
    parser.add_argument("--keep-alive", type=int, default=5, help="gunicorn keep-alive seconds (gthread)")
    parser.add_argument("--gunicorn-arg", action="append", default=[], help="extra gunicorn argument (repeatable)")
    parser.add_argument("--conn-max-age", type=int, default=600, help="CONN_MAX_AGE of the server")
    parser.add_argument("--client-procs", type=int, default=2, help="load generator processes")
    parser.add_argument("--client-threads", type=int, default=32, help="pace: sending threads per process")
    parser.add_argument("--wait-quiet", type=float, default=120.0,
                        help="before each mode, wait up to this many seconds until other processes are idle")
    parser.add_argument("--quiet-limit", type=float, default=0.25,
                        help="cores other processes and the hypervisor (steal) may take on a 'quiet' machine")
    parser.add_argument("--retries", type=int, default=2,
                        help="run a mode again (new worker ids) when other processes disturbed it")
    parser.add_argument("--slow-limit", type=float, default=0.0,
                        help="calibration loop ms above which the (virtual) machine counts as slowed by its "
                             "neighbours: wait for it to drop before each mode, run again if it is above after "
                             "(0: off)")
    parser.add_argument("--redis-db", type=int, default=15,
                        help="the Redis database (of CELERY_BROKER_URL's server) the server uses; flushed")
    parser.add_argument("--db-name", default="mteval_bench", help="the benchmark's database (dropped and recreated)")
    parser.add_argument("--gate", action="store_true",
                        help="import the campaigns with the live reliability gate on (each finished HIT queues it)")
    args = parser.parse_args(argv)
    args.capacity_duration = args.duration or 20.0
    args.pace_duration = args.duration or 30.0
    if min(args.annotators, args.pace_annotators, args.client_procs, args.client_threads) < 1:
        parser.error("counts must be positive")
    if not 0 <= args.jitter < 1 or args.think <= 0:
        parser.error("--think must be positive and --jitter within [0, 1)")
    return args


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


def quiet(report: dict, mode: str, port: int, args) -> None:
    deadline = time.monotonic() + args.wait_quiet
    busy = wait_until_quiet(args.db_name, port, args.quiet_limit, args.wait_quiet)
    calibration = calibrate()
    while args.slow_limit and calibration > args.slow_limit and time.monotonic() < deadline:
        log(f"calibration loop {calibration} ms > --slow-limit {args.slow_limit:g}: waiting for a faster machine")
        time.sleep(10)
        calibration = calibrate()
    report.setdefault("other_load_before", {})[mode] = busy
    report.setdefault("calibration_ms", {})[mode] = calibration
    if busy >= args.quiet_limit:
        log(f"WARNING: other processes and the hypervisor still take {busy:.2f} cores; the figures will be low")


def main(argv=None) -> int:
    args = parse_args(argv)
    bench_url, dev_db = bench_database_url(os.environ.get("DATABASE_URL", ""), args.db_name, "benchmarks/annotate.py")
    OUT.mkdir(parents=True, exist_ok=True)
    modes = ["capacity", "pace"] if args.mode == "both" else [args.mode]
    # Enough places for every run (a disturbed run is repeated on the same campaign with new worker ids):
    # every HIT has ~70 distinct outputs; allow 1,500 judgments/s in capacity mode.
    est_hits = max(1, math.ceil(args.segments * args.systems / 70))
    needed = max(args.annotators + args.capacity_duration * 1500 / 100, args.pace_annotators * 1.2)
    redundancy = args.redundancy or max(2, math.ceil(needed * (1 + args.retries) / est_hits))
    broker_url = bench_broker_url(os.environ.get("CELERY_BROKER_URL", ""), args.redis_db)
    env = server_env(bench_url, broker_url, args)
    server = None
    shown = argv if argv is not None else sys.argv[1:]
    report: dict = {"command": " ".join([".venv/bin/python", "benchmarks/annotate.py", *map(shlex.quote, shown)]),
                    "database": args.db_name, "conn_max_age": args.conn_max_age,
                    "broker": broker_url or "none (tasks in-process)"}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched)")
        recreate_database(os.environ["DATABASE_URL"], args.db_name)
        flush_redis(broker_url)
        manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput", "-v0")
        path = OUT / "campaign.jsonl"
        write_campaign_file(path, args.segments, args.systems, seed=1)
        def new_campaign(mode: str) -> str:
            t = time.monotonic()
            result = import_campaign(env, path, f"bench {mode}", redundancy, args.gate)
            log(f"imported campaign {result['campaign']!r}: {result['hits']} HITs, redundancy {redundancy} "
                f"({time.monotonic() - t:.1f} s)")
            report["campaign"] = (f"adequacy, {args.segments} segments x {args.systems} systems, {result['hits']} "
                                  f"HITs of 100 items, redundancy {redundancy} (one campaign per mode)"
                                  + (", live reliability gate on" if args.gate else ""))
            return result["campaign"]

        slugs = {mode: new_campaign(mode) for mode in modes}
        report["client"] = (f"{args.client_procs} processes; capacity: one thread and keep-alive connection per "
                            f"annotator; pace: {args.client_threads} sending threads per process, each with a "
                            "keep-alive connection")
        server = Server(env, args)
        report["server"] = "gunicorn " + server.description
        log(f"starting {report['server']}")
        server.start()
        server.warm_up()
        for mode in modes:
            for attempt in range(1 + args.retries):
                slug, prefix = slugs[mode], f"bench-{mode[0]}{attempt + 1}"
                quiet(report, mode, server.port, args)
                if mode == "capacity":
                    log(f"capacity: {args.annotators} annotators, {args.capacity_duration:g} s")
                    stats, t_start = run_capacity(server.port, slug, prefix, args)
                    check = check_database(bench_url, slug, prefix, stats.accepted)
                    result = summarise_capacity(stats, t_start, check, args)
                    log(f"capacity: {result['db_judgments_per_second']:.1f} judgments/s; "
                        f"cores used {result['cores_used']}")
                else:
                    log(f"pace: {args.pace_annotators} annotators entering the campaign")
                    stats, setup, t0, working = run_pace(server.port, slug, prefix, args)
                    check = check_database(bench_url, slug, prefix, stats.accepted)
                    result = summarise_pace(stats, setup, t0, working, check, args)
                    lat = result["latency_ms"]
                    log(f"pace: p95 GET {lat['get'].get('p95')} ms, POST {lat['post'].get('p95')} ms; "
                        f"cores used {result['cores_used']}")
                result["attempt"] = attempt + 1
                # The VM may have slowed down during the run (its neighbours, not our processes): look again.
                after = result["calibration_after_ms"] = calibrate() if args.slow_limit else None
                report.setdefault("attempts", []).append({"mode": mode, **result})
                report[mode] = result
                if after is not None and after > args.slow_limit:
                    log(f"WARNING: calibration loop {after} ms after the run (> --slow-limit)"
                        + ("; running again with new workers" if attempt < args.retries else ""))
                    continue
                if disturbance(result["cores_used"]) < args.quiet_limit:
                    break
                log(f"WARNING: other processes and the hypervisor took {disturbance(result['cores_used']):.2f} "
                    "cores during the run"
                    + ("; running again with new workers" if attempt < args.retries else ""))
    finally:
        for child in CHILDREN:
            if child.is_alive():
                child.terminate()
        if server is not None:
            server.stop()
            log("gunicorn stopped")
        flush_redis(broker_url)  # the recompute tasks queued for the bench database
    report["slow_limit"] = args.slow_limit
    report_path = OUT / f"annotate-{datetime.now():%Y%m%d-%H%M%S}.json"
    report["report_path"] = str(report_path.relative_to(ROOT))
    report_path.write_text(json.dumps(report, indent=2))
    print_summary(report)
    checks = [report[m]["check"] for m in modes if m in report]
    intact = all(c["lost"] == 0 and c["duplicated"] == 0 and c["inconsistent_assignments"] == 0 for c in checks)
    return 0 if intact else 1


if __name__ == "__main__":
    sys.exit(main())

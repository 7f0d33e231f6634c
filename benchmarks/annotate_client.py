"""The annotator benchmark's load client (benchmarks/annotate.py): keep-alive connections, simulated
annotators that use only the browser's requests, and the closed-loop capacity run in a few processes."""
from __future__ import annotations

import http.client
import json
import math
import multiprocessing as mp
import queue
import random
import resource
import signal
import threading
import time
from collections import Counter

from annotate_machine import HOST, cpu_share, cpu_times

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json"}
ACCEPT_HEADERS = {"Accept": "application/json"}


class Client:
    """A keep-alive HTTP/1.1 connection; reopened when the server closed it or it sat idle.

    A request that fails on a connection the server closed is sent once more on a new one.
    That is safe for the POST too: a repeated POST of the item just saved is answered as
    before and stored once (docs/api.md), and the database check below verifies it.
    """

    def __init__(self, port: int, idle_max: float = 4.0, source: str | None = None, cookies: bool = False):
        self.port = port
        self.idle_max = idle_max
        self.source = (source, 0) if source else None  # a client address of its own (127.0.0.x), as a browser
        self.cookies: dict[str, str] | None = {} if cookies else None  # kept and sent back, as a browser
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
                self.conn = http.client.HTTPConnection(HOST, self.port, timeout=30, source_address=self.source)
                self.connects += 1
            headers = JSON_HEADERS if body is not None else ACCEPT_HEADERS
            if self.cookies:
                headers = {**headers, "Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
            try:
                self.conn.request(method, path, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                if self.cookies is not None:
                    for header in response.headers.get_all("Set-Cookie") or ():
                        name, _, rest = header.partition("=")
                        self.cookies[name.strip()] = rest.split(";", 1)[0]
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
            self.latency.setdefault(kind, []).extend(values)
        for kind, values in other["service"].items():
            self.service.setdefault(kind, []).extend(values)
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

    def answer(self, client: Client, stats: Stats, rng: random.Random, scheduled: float, batch: int = 1) -> bool:
        """POST the current item (with `batch` > 1, it and the next ones in one `{"batch": [...]}`, docs/api.md
        §8.3; a generated campaign's items have consecutive ids in HIT order); keep the state the answer returns.
        False if the HIT cannot go on."""
        first = self.state["item"]["id"]
        items = list(range(first, first + min(batch, self.state["total"] - self.state["position"] + 1)))
        answers = [b'{"item": %d, "score": %d}' % (item, rng.randint(0, 100)) for item in items]
        body = answers[0] if batch == 1 else b'{"batch": [%s]}' % b", ".join(answers)
        status, data, _ = call(client, stats, "post", "POST", f"/api/hit/{self.token}/", body, scheduled)
        if status == 201:
            stats.accepted.extend((self.token, item) for item in items)
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
    stats.latency.setdefault(kind, []).append(done - scheduled)
    stats.service.setdefault(kind, []).append(done - sent)
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
                if not annotator.answer(client, stats, rng, time.monotonic(), cfg["batch"]):
                    break

    run_threads(run, indices, per_thread, results)


def run_threads(run, indices, per_thread, results) -> None:
    """Run `run(index)` in one thread per annotator index, then put this process's stats (with its CPU) on
    `results`."""
    cpu_at_start = process_cpu()
    threads = [threading.Thread(target=run, args=(i,)) for i in indices]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results.put(finish_thread_stats(per_thread, cpu_at_start))


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


def run_closed_loop(target, annotators: int, port: int, slug: str, prefix: str, args) -> tuple[Stats, float]:
    """`annotators` simulated annotators, each running `target` back to back in the client processes, for
    `--capacity-duration`; their stats with the server's CPU over the measured window."""
    ctx = mp.get_context("fork")
    results = ctx.Queue()
    cfg = {"port": port, "slug": slug, "prefix": prefix, "duration": args.capacity_duration, "batch": args.batch}
    t_start = time.monotonic() + 1.0
    procs = [ctx.Process(target=target, args=(p, idx, cfg, t_start, results), daemon=True)
             for p, idx in enumerate(split(annotators, args.client_procs))]
    CHILDREN.extend(procs)
    for p in procs:
        p.start()
    time.sleep(max(0.0, t_start - time.monotonic()))
    before = cpu_times(args.db_name, port)
    stats = collect(results, procs, timeout=args.capacity_duration + 120)
    stats.window = time.monotonic() - t_start
    stats.cpu = cpu_share(before, cpu_times(args.db_name, port), stats.window, stats.cpu_seconds)
    return stats, t_start


def run_capacity(port: int, slug: str, prefix: str, args) -> tuple[Stats, float]:
    return run_closed_loop(capacity_process, args.annotators, port, slug, prefix, args)

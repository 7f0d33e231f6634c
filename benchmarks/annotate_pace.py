"""The annotator benchmark's open-loop pace run (benchmarks/annotate.py): annotators post on a schedule,
latency counts from the scheduled send time so that queueing shows."""
from __future__ import annotations

import heapq
import multiprocessing as mp
import queue
import random
import threading
import time

from annotate_client import (
    CHILDREN,
    Annotator,
    Client,
    Stats,
    child_signals,
    collect,
    finish_thread_stats,
    process_cpu,
    split,
)
from annotate_machine import cpu_share, cpu_times, log


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
                elif a.working and a.answer(client, stats, rng, when, cfg["batch"]):
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


def run_pace(port: int, slug: str, prefix: str, args) -> tuple[Stats, Stats, float, int]:
    ctx = mp.get_context("fork")
    results, ready = ctx.Queue(), ctx.Queue()
    go, t0_value = ctx.Event(), ctx.Value("d", 0.0)
    warmup = args.think if args.warmup is None else args.warmup
    cfg = {"port": port, "slug": slug, "prefix": prefix, "duration": args.pace_duration, "warmup": warmup,
           "think": args.think, "jitter": args.jitter, "annotators": args.pace_annotators,
           "get_ratio": args.get_ratio, "threads": args.client_threads, "give_up": args.give_up,
           "batch": args.batch}
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

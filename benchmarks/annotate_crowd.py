"""The annotator benchmark's crowd run (benchmarks/annotate.py --mode crowd): `--crowd-annotators` (100)
annotators, each from a client address of its own (127.0.0.<k>: the whole 127/8 is loopback on Linux) and with
its own cookies, enter through `/c/<slug>/start/` with the crowd-entry limits at their defaults (they count per
address, docs/api.md "Annotators"), load the HIT page and its state, then judge back to back; a finished HIT is
followed by a new entry. Entry = start redirect + HIT page + first state GET, timed as one."""
from __future__ import annotations

import random
import time

from annotate_client import (
    Annotator,
    Client,
    Stats,
    call,
    child_signals,
    run_closed_loop,
    run_threads,
)


def source_address(index: int) -> str:
    """127.0.0.2, 127.0.0.3, ... then 127.0.1.0, ...: a loopback address per annotator (not 127.0.0.1, the
    address of every other client of the server)."""
    n = index + 2
    return f"127.0.{n // 256}.{n % 256}"


def enter(annotator: Annotator, client: Client, slug: str, stats: Stats) -> bool:
    """A new worker id enters: start (302 to /hit/<token>/), the HIT page, then the state; timed as "entry"."""
    worker = f"{annotator.prefix}-{annotator.index}" + (f"-{annotator.hits}" if annotator.hits else "")
    annotator.hits += 1
    t = time.monotonic()
    status, _, location = call(client, stats, "start", "GET", f"/c/{slug}/start/?worker_id={worker}", None, t)
    if status != 302 or not location or "/hit/" not in location:
        if status == 200:
            stats.no_hit += 1
        annotator.token = annotator.state = None
        return False
    annotator.token = location.rstrip("/").rsplit("/", 1)[-1]
    status, _, _ = call(client, stats, "page", "GET", f"/hit/{annotator.token}/", None, time.monotonic())
    if status != 200 or not annotator.fetch(client, stats, time.monotonic()):
        annotator.state = None
        return False
    stats.latency.setdefault("entry", []).append(time.monotonic() - t)
    return True


def crowd_process(proc: int, indices: list[int], cfg: dict, t_start: float, results) -> None:
    child_signals()
    deadline = t_start + cfg["duration"]
    per_thread: list[tuple[Client, Stats]] = []

    def run(index: int) -> None:
        client, stats = Client(cfg["port"], source=source_address(index), cookies=True), Stats()
        per_thread.append((client, stats))
        rng = random.Random(index)
        annotator = Annotator(index, cfg["prefix"])
        # Arrivals spread over the first second, not all in one instant.
        time.sleep(max(0.0, t_start + rng.random() - time.monotonic()))
        while time.monotonic() < deadline:
            if not enter(annotator, client, cfg["slug"], stats):
                if stats.no_hit:
                    return
                time.sleep(1.0)  # refused (a 429 names its wait) or an error: do not spin
                continue
            while annotator.working and time.monotonic() < deadline:
                if not annotator.answer(client, stats, rng, time.monotonic()):
                    break

    run_threads(run, indices, per_thread, results)


def run_crowd(port: int, slug: str, prefix: str, args) -> tuple[Stats, float]:
    return run_closed_loop(crowd_process, args.crowd_annotators, port, slug, prefix, args)

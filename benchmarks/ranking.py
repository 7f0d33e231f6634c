#!/usr/bin/env python
"""Benchmark of the relative-ranking statistics at WMT scale: expansion and count scores, one TrueSkill pass,
and TrueSkill's bootstrap runs as Celery subtasks on 1 and on 2 worker processes.

    DATABASE_URL=postgres://... CELERY_BROKER_URL=redis://... .venv/bin/python benchmarks/ranking.py
        [--rankings 200000] [--systems 20] [--judges 1000] [--runs 100] [--workers 1,2] [--skip-celery]
        [--keep-db] [--profile]

Run from the project folder. Generated data (numpy, vectorised): `--rankings` five-way rankings (each of 5
distinct systems out of `--systems`, in a random screen order) by `--judges` judges; system k has quality
3·(1 − k/(S−1)) on a scale where a judge's noise has sd 0.6-1.4 (the judge's own); a judge ranks the rounded
quality + noise, so outputs whose rounded values are equal are tied (about one outcome in five). Each ranking
is of one of rankings/10 segments. 200,000 rankings expand to 2,000,000 pairwise outcomes.

1. Expansion (`evaluation.stats.ranking.expand`) of the slots and `ranking_scores` (≥ others, > others,
   expected wins with both denominators): median of `--repeats`. Target < 2 s.
2. One TrueSkill pass (`evaluation.stats.trueskill.trueskill_pass`) over all the outcomes in a shuffled
   order (the analysis's own shuffle; not timed): median of `--repeats`. Target < 60 s.
3. (Needs PostgreSQL and a Redis broker; `--skip-celery` leaves it out.) The rankings are written as a
   WMT10-16 `wmt-rank` file and imported as an analysis-only campaign with `manage.py import_judgments
   --format wmt-rank` (if that format is registered; otherwise the rows are inserted directly, as the import
   stores them) into a separate database on DATABASE_URL's server (`mteval_ranking_bench`, `--db-name`,
   dropped and recreated; the database of DATABASE_URL is not touched). The whole results task
   (`evaluation.analyses.compute_results`, `--runs` bootstrap runs of the count scores included) runs in this
   process, as the product runs it: the bootstrap subtasks it queues wait on the benchmark's broker (no worker
   runs yet), are counted there and dropped, so that the stored results exist before any worker starts. Then,
   for each of `--workers` (1, then 2; repeat them, e.g. 1,2,1,2, for a second measurement): a real worker
   (`celery -A config worker -c N`) on the benchmark's own Redis database (`--redis-db 14`, emptied before and
   after), and
   `start_trueskill_bootstrap(campaign, last_id, runs)` queues the subtasks (RANKING_BOOTSTRAP_RUNS_PER_TASK
   runs each, 10 by default); timed from queueing until the stored summary says `trueskill.status ==
   "bootstrap"` (the last share has turned all runs into rank ranges). The
   outcomes must be identical (each run is seeded by (seed, run)). Worker start-up is not in the time. A fixed
   Python loop timed alone and two at once tells the most a second process can gain on the machine.
4. Peak memory: this process's ru_maxrss, and each worker process's VmHWM (polled). Target < 1.5 GB each.

Before each timed step it waits (up to `--wait-quiet` s) for other processes to go quiet, and reports the
cores other processes used and the hypervisor stole, and a reference workload's time (the VM's speed varies).
Exit status 1 if a target is missed. A JSON report goes to benchmarks/out/ranking-<time>.json. See
benchmarks/README.md, "Relative ranking".
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import benchlib
import numpy as np
from benchlib import bench_database_url, recreate_database
from measure import CpuMonitor, calibrate, log, machine_busy, peak_mb, run_measured, wait_until_quiet

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
PER_SCREEN = 5
RANKINGS_PER_SEGMENT = 10
TARGETS = {"core_s": 2.0, "pass_s": 60.0, "peak_mb": 1536.0}
WMT10_HEADER = ("srclang,trglang,srcIndex,documentId,segmentId,judgeId,"
                + ",".join(f"system{k}Number,system{k}Id" for k in range(1, PER_SCREEN + 1)) + ","
                + ",".join(f"system{k}rank" for k in range(1, PER_SCREEN + 1)))


# ---------------------------------------------------------------------------------------------
# The generated rankings
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Generated:
    quality: np.ndarray  # (n_systems,) system k's quality, decreasing with k
    system: np.ndarray  # (n_rankings, 5) system codes in screen order
    rank: np.ndarray  # (n_rankings, 5) 1 = best, ties share the better rank
    judge: np.ndarray  # (n_rankings,)
    segment: np.ndarray  # (n_rankings,)

    @property
    def n_rankings(self) -> int:
        return int(self.judge.size)

    def slots(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """One row per ranked slot, as stats.ranking.expand takes them: (ranking, system, rank)."""
        return np.repeat(np.arange(self.n_rankings), PER_SCREEN), self.system.ravel(), self.rank.ravel()


def system_names(n_systems: int) -> list[str]:
    return [f"system-{k:02d}" for k in range(n_systems)]  # name order = code order = quality order


def generate(n_rankings: int, n_systems: int, n_judges: int, seed: int) -> Generated:
    if n_systems < PER_SCREEN:
        raise SystemExit(f"--systems must be at least {PER_SCREEN}")
    rng = np.random.default_rng(seed)
    quality = np.linspace(3.0, 0.0, n_systems)
    system = np.argsort(rng.random((n_rankings, n_systems)), axis=1)[:, :PER_SCREEN]  # 5 distinct, random order
    judge = rng.integers(0, n_judges, n_rankings)
    noise = rng.uniform(0.6, 1.4, n_judges)
    perceived = np.rint(quality[system] + rng.normal(0.0, 1.0, (n_rankings, PER_SCREEN)) * noise[judge][:, None])
    rank = 1 + (perceived[:, None, :] > perceived[:, :, None]).sum(axis=2)  # 1 + outputs seen as better
    segment = rng.integers(0, max(1, n_rankings // RANKINGS_PER_SEGMENT), n_rankings)
    return Generated(quality, system, rank, judge, segment)


def write_wmt_rank(path: Path, g: Generated) -> None:
    """A WMT10-16 ranking file: header, then one ranking a line (srcIndex = segment + 1)."""
    names = system_names(g.quality.size)
    with path.open("w", encoding="utf-8") as handle:
        handle.write(WMT10_HEADER + "\n")
        for seg, judge, systems, ranks in zip(g.segment.tolist(), g.judge.tolist(), g.system.tolist(),
                                              g.rank.tolist(), strict=True):
            slots = ",".join(f"{s},{names[s]}" for s in systems)
            handle.write(f"en,de,{seg + 1},doc{seg // 10},{seg + 1},judge{judge:04d},{slots},"
                         f"{','.join(map(str, ranks))}\n")


def insert_directly(g: Generated, name: str):
    """The rows the wmt-rank import would store (annotation/building/judgment_files.py `_store`): one HIT and
    assignment per judge, one HitItem (payload candidates) and Judgment (ranks by candidate key) per ranking.
    Used only when the wmt-rank format is not registered."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.building.bulk import insert
    from annotation.building.campaign_files import unique_slug
    from annotation.models import (
        Annotator,
        Assignment,
        Campaign,
        Document,
        Hit,
        HitItem,
        Judgment,
        Segment,
        System,
        new_token,
    )

    names = system_names(g.quality.size)
    now = timezone.now()
    with transaction.atomic():
        campaign = Campaign.objects.create(name=name, slug=unique_slug(name), protocol="ranking", analysis_only=True,
                                           status=Campaign.Status.CLOSED, source_language="en",
                                           target_language="de", options={"layout": "wmt10-16", "rows": "RANK"})
        document = Document.objects.create(campaign=campaign, doc_id="imported", position=0)
        segments = np.unique(g.segment).tolist()
        segment_ids = dict(zip(segments, insert(Segment, ["campaign_id", "document_id", "seg_id", "source",
                                                          "reference"],
                                                [(campaign.pk, document.pk, s + 1, "", "") for s in segments]),
                               strict=True))
        System.objects.bulk_create([System(campaign=campaign, name=n) for n in names])
        judges = np.unique(g.judge).tolist()
        labels = [f"judge{j:04d}" for j in judges]
        known = dict(Annotator.objects.filter(external_id__in=labels).values_list("external_id", "pk"))
        Annotator.objects.bulk_create([Annotator(external_id=x, source="imported") for x in labels if x not in known])
        known.update(Annotator.objects.filter(external_id__in=labels).values_list("external_id", "pk"))
        by_judge = np.argsort(g.judge, kind="stable")
        counts = np.bincount(g.judge)
        hit_ids = insert(Hit, ["campaign_id", "number", "size", "external_id"],
                         [(campaign.pk, n + 1, int(counts[j]), "en-de") for n, j in enumerate(judges)])
        assignment_ids = insert(Assignment, ["campaign_id", "hit_id", "annotator_id", "token", "status", "position",
                                             "started_at", "last_activity_at", "completed_at", "completion_code"],
                                [(campaign.pk, h, known[x], new_token(), Assignment.Status.COMPLETED,
                                  int(counts[j]), now, now, now, "")
                                 for h, j, x in zip(hit_ids, judges, labels, strict=True)])
        hit_of = dict(zip(judges, zip(hit_ids, assignment_ids, labels, strict=True), strict=True))
        order = by_judge.tolist()
        judge_of, seg_of = g.judge.tolist(), g.segment.tolist()
        systems, ranks = g.system.tolist(), g.rank.tolist()
        position = np.arange(g.n_rankings) - np.repeat(np.cumsum(counts) - counts, counts)
        item_ids = insert(HitItem, ["hit_id", "position", "set_index", "item_type", "segment_id", "output_id", "text",
                                    "payload"],
                          [(hit_of[judge_of[r]][0], int(p), int(p) // 10, "system", segment_ids[seg_of[r]], None, "",
                            {"candidates": [{"key": str(k + 1), "kind": "system", "system": s, "name": names[s]}
                                            for k, s in enumerate(systems[r])]})
                           for r, p in zip(order, position.tolist(), strict=True)])
        insert(Judgment, ["campaign_id", "assignment_id", "annotator_id", "item_id", "score", "choice", "ranks",
                          "seconds", "created_at"],
               [(campaign.pk, hit_of[judge_of[r]][1], known[hit_of[judge_of[r]][2]], item_id, None, "",
                 {str(k + 1): rk for k, rk in enumerate(ranks[r])}, None, now)
                for r, item_id in zip(order, item_ids, strict=True)])
    return campaign


# ---------------------------------------------------------------------------------------------
# Steps 1 and 2: the core on arrays
# ---------------------------------------------------------------------------------------------

def order_error(score: np.ndarray, quality: np.ndarray) -> int:
    """Pairs of systems the score orders against their true quality."""
    s, q = score[:, None] - score[None, :], quality[:, None] - quality[None, :]
    return int(((s * q) < 0).sum() // 2)


def core_steps(g: Generated, args, report: dict) -> None:
    from evaluation.stats import ranking as rk
    from evaluation.stats import trueskill as ts

    n_systems = g.quality.size
    ranking, system, rank = g.slots()
    report["busy_before"]["core"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
    report["calibration"]["before core"] = calibrate()
    monitor = Load()
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        outcomes = rk.expand(ranking, system, rank, n_systems)
        middle = time.perf_counter()
        scores = rk.ranking_scores(outcomes, n_systems)
        ended = time.perf_counter()
        times.append((ended - started, middle - started, ended - middle))
    load = monitor.stop(sum(t[0] for t in times))
    expected = g.n_rankings * PER_SCREEN * (PER_SCREEN - 1) // 2
    assert outcomes.size == expected, (outcomes.size, expected)
    median = statistics.median(t[0] for t in times)
    report["core"] = {
        "runs_s": [t[0] for t in times], "expand_s": [t[1] for t in times], "scores_s": [t[2] for t in times],
        "median_s": median, "outcomes": outcomes.size, "ties": float((outcomes.result == 0).mean()),
        "other_cores": load["other_cores"], "steal_cores": load["steal_cores"],
        "order_errors": {"expected_wins": order_error(scores.expected_wins_others, g.quality),
                         "geq_others": order_error(scores.geq_others, g.quality),
                         "gt_others": order_error(scores.gt_others, g.quality)},
    }
    log(f"expand + ranking_scores over {outcomes.size:,} outcomes ({report['core']['ties']:.1%} ties): "
        + ", ".join(f"{t[0]:.3f} s (expand {t[1]:.3f} + scores {t[2]:.3f})" for t in times))

    settings = ts.TrueSkillSettings()  # WMT's environment, the analysis's default
    winner, loser, drawn = ts.winner_loser(outcomes.first, outcomes.second, outcomes.result)
    shuffled = np.random.default_rng([0, 2**31]).permutation(winner.size)  # as analyse() shuffles (seed 0)
    winner, loser, drawn = winner[shuffled], loser[shuffled], drawn[shuffled]
    report["busy_before"]["trueskill pass"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
    report["calibration"]["before trueskill pass"] = calibrate()
    monitor = Load()
    times = []
    for _ in range(args.repeats):
        started = time.perf_counter()
        single = ts.trueskill_pass(winner, loser, drawn, n_systems, settings)
        times.append(time.perf_counter() - started)
    load = monitor.stop(sum(times))
    seconds = statistics.median(times)
    report["trueskill_pass"] = {"runs_s": times, "seconds": seconds, "us_per_update": seconds / winner.size * 1e6,
                                "updates": int(winner.size), "order_errors": order_error(single.mu, g.quality),
                                "mu_range": [float(single.mu.min()), float(single.mu.max())],
                                "other_cores": load["other_cores"], "steal_cores": load["steal_cores"]}
    log(f"one TrueSkill pass over {winner.size:,} shuffled outcomes: " + ", ".join(f"{x:.2f}" for x in times)
        + f" s (median {seconds / winner.size * 1e6:.2f} µs per update); μ from {single.mu.min():.3f} to "
        f"{single.mu.max():.3f}; other processes {load['other_cores']:.2f} cores")
    if args.profile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.runcall(ts.trueskill_pass, winner, loser, drawn, n_systems, settings)
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(10)
        print(text.getvalue())
    report["peak_mb_after_core"] = peak_mb()


# ---------------------------------------------------------------------------------------------
# Step 3: the bootstrap as Celery subtasks
# ---------------------------------------------------------------------------------------------

def bench_broker_url(broker_url: str, redis_db: int) -> str:
    parts = urlsplit(broker_url)
    if parts.scheme not in ("redis", "rediss"):
        raise SystemExit("the Celery step needs CELERY_BROKER_URL to point at Redis (redis://host:port/db); got "
                         f"{broker_url!r}. Start the local services with: eval \"$(scripts/start-services.sh)\", "
                         "or pass --skip-celery")
    return parts._replace(path=f"/{redis_db}").geturl()


def flush_redis(url: str) -> None:
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).flushdb()
    except redis.RedisError as exc:
        log(f"could not empty {url}: {exc}")


def queued_tasks(url: str, task: str, queue: str = "celery") -> int:
    """How many messages of `task` (its dotted name) wait in Celery's default queue on the Redis broker `url` (a
    list named after the queue, one JSON message each, the task's name in its headers)."""
    import redis

    messages = redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).lrange(queue, 0, -1)
    return sum(json.loads(message)["headers"]["task"] == task for message in messages)


def bench_env(bench_url: str, broker_url: str) -> dict:
    """Production-like settings on the benchmark database and Redis database; no automatic recomputes."""
    env = dict(os.environ)
    env.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
               RESULTS_AUTO_RECOMPUTE="0", CELERY_BROKER_URL=broker_url, CELERY_RESULT_BACKEND=broker_url,
               CACHE_URL=broker_url, CACHE_KEY_PREFIX="bench", LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
               DJANGO_SETTINGS_MODULE="config.settings")
    return env


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


class TreeWatcher(threading.Thread):
    """Polls a process and its descendants: each one's peak RSS (VmHWM) and CPU seconds, as last seen."""

    def __init__(self, root_pid: int, interval: float = 0.5):
        super().__init__(daemon=True)
        self.root, self.interval = root_pid, interval
        self.seen: dict[int, dict] = {}
        self.halt = threading.Event()

    def poll(self) -> None:
        table = {pid: (name, fields) for pid, name, fields, _ in benchlib.processes()}
        tree, changed = {self.root}, True
        while changed:
            changed = False
            for pid, (_, fields) in table.items():
                if pid not in tree and int(fields[1]) in tree:
                    tree.add(pid)
                    changed = True
        for pid in tree & table.keys():
            try:
                with open(f"/proc/{pid}/status") as handle:
                    hwm = next((int(line.split()[1]) / 1024 for line in handle if line.startswith("VmHWM:")), 0.0)
            except OSError:
                continue
            entry = self.seen.setdefault(pid, {"role": "main" if pid == self.root else "child", "peak_mb": 0.0})
            entry["peak_mb"] = max(entry["peak_mb"], hwm)
            entry["cpu_s"] = benchlib.cpu_seconds(table[pid][1])

    def run(self):
        while not self.halt.wait(self.interval):
            self.poll()

    def stop(self) -> dict[int, dict]:
        self.halt.set()
        self.join()
        self.poll()
        return self.seen


def _spin(n: int, queue) -> None:
    started = time.perf_counter()
    total = 0
    for i in range(n):
        total += i
    queue.put(time.perf_counter() - started)


def parallel_scaling(n: int = 20_000_000) -> dict:
    """The machine's own limit for two processes: a fixed pure-Python loop alone, then two copies at once (each
    in its own process; best of two tries each). 2 x alone / together is the most -c 2 can gain over -c 1."""
    import multiprocessing

    context = multiprocessing.get_context("fork")

    def together(k: int) -> float:
        queue = context.Queue()
        procs = [context.Process(target=_spin, args=(n, queue)) for _ in range(k)]
        for proc in procs:
            proc.start()
        times = [queue.get() for _ in procs]
        for proc in procs:
            proc.join()
        return max(times)

    alone = min(together(1) for _ in range(2))
    pair = min(together(2) for _ in range(2))
    return {"alone_s": alone, "two_at_once_s": pair, "max_speedup": 2 * alone / pair}


def start_worker(concurrency: int, env: dict, log_path: Path) -> subprocess.Popen:
    """`celery -A config worker -c N` (prefork) in its own session, on the benchmark's broker; waits for it."""
    handle = log_path.open("w")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-c", str(concurrency), "-l", "info",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-n",
         f"ranking-bench-{concurrency}-{os.getpid()}@%h"],
        cwd=ROOT, env=env, stdout=handle, stderr=subprocess.STDOUT, start_new_session=True)
    handle.close()
    deadline = time.monotonic() + 120
    while "ready." not in log_path.read_text():
        if worker.poll() is not None or time.monotonic() > deadline:
            benchlib.stop_server(worker)
            raise RuntimeError("the Celery worker did not start:\n" + log_path.read_text()[-4000:])
        time.sleep(0.2)
    return worker


def trueskill_rows(campaign) -> list[dict]:
    from evaluation.models import ResultTable

    table = ResultTable.objects.filter(campaign=campaign, name="systems", variant="trueskill").first()
    return sorted(table.rows, key=lambda r: r["system"]) if table else []


def bootstrap_with_workers(campaign, last_id: int, concurrency: int, args, env: dict, report: dict, step: str) -> dict:
    from evaluation.families.ranking import bootstrap
    from evaluation.models import CampaignResults, ResultTable

    header = CampaignResults.objects.get(campaign=campaign)
    header.summary = {**header.summary, "trueskill": {**header.summary["trueskill"], "runs": 0,
                                                      "status": "single pass"}}
    header.save(update_fields=["summary"])
    ResultTable.objects.filter(campaign=campaign, name=bootstrap.RUNS_TABLE).delete()
    flush_redis(env["CELERY_BROKER_URL"])
    OUT.mkdir(parents=True, exist_ok=True)
    log_path = OUT / f"ranking-worker-c{concurrency}-{len(report['bootstrap']) + 1}.log"
    worker = start_worker(concurrency, env, log_path)
    watcher = TreeWatcher(worker.pid)
    watcher.start()
    try:
        report["busy_before"][step] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
        report["calibration"][f"before {step}"] = calibrate()
        monitor = CpuMonitor(args.db_name)
        monitor.start()
        cpu0 = sum(p.get("cpu_s", 0.0) for p in watcher.seen.values())
        started = time.perf_counter()
        subtasks = bootstrap.start_trueskill_bootstrap(campaign.pk, last_id, args.runs)
        deadline = time.monotonic() + args.celery_timeout
        while True:
            summary = CampaignResults.objects.filter(campaign=campaign).values_list("summary", flat=True).first()
            if summary["trueskill"].get("status") == "bootstrap":
                break
            if worker.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the bootstrap did not finish (worker log {log_path}):\n"
                                   + log_path.read_text()[-4000:])
            time.sleep(0.2)
        wall = time.perf_counter() - started
        processes = watcher.stop()
        cpu = monitor.stop(sum(p.get("cpu_s", 0.0) for p in processes.values()) - cpu0, wall)
    finally:
        watcher.halt.set()
        benchlib.stop_server(worker)
    text = log_path.read_text()
    durations = [float(x) for x in re.findall(r"trueskill_runs\[[^\]]*\] succeeded in ([0-9.]+)s", text)]
    rows = trueskill_rows(campaign)
    result = {
        "concurrency": concurrency, "wall_s": wall, "subtasks": subtasks, "runs": summary["trueskill"].get("runs"),
        "subtask_s": durations, "subtask_sum_s": sum(durations),
        "workers": [{"pid": pid, **p} for pid, p in sorted(processes.items())], **cpu,
        "rows": [{k: r.get(k) for k in ("system", "score", "rank", "rank_range", "cluster", "sd_runs")} for r in rows],
    }
    peak = max((p["peak_mb"] for p in processes.values() if p["role"] == "child"), default=float("nan"))
    log(f"{args.runs} bootstrap runs in {subtasks} subtasks on {concurrency} worker process(es): {wall:.1f} s "
        f"(subtasks {len(durations)}: {sum(durations):.1f} s in all, {min(durations, default=0):.1f}-"
        f"{max(durations, default=0):.1f} s each); pool process peak {peak:.0f} MB; worker CPU "
        f"{cpu['process_cpu_s']:.1f} s, PostgreSQL {cpu['postgres_cpu_s']:.1f} s; other processes "
        f"{cpu['other_cores']:.2f} cores, stolen {cpu['steal_cores']:.2f}")
    return result


def celery_steps(g: Generated, args, report: dict) -> None:
    server_url = os.environ.get("DATABASE_URL", "")
    bench_url, dev_db = bench_database_url(server_url, args.db_name, "benchmarks/ranking.py")
    broker_url = bench_broker_url(os.environ.get("CELERY_BROKER_URL", ""), args.redis_db)
    env = bench_env(bench_url, broker_url)
    report["database"], report["broker"] = args.db_name, broker_url
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched), "
            f"broker {broker_url} (emptied)")
        recreate_database(server_url, args.db_name)
        flush_redis(broker_url)
        run_measured([sys.executable, "manage.py", "migrate", "--noinput"], env, args.db_name)
        os.environ.update(env)
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from annotation.models import Campaign, Judgment
        from annotation.services.judgment_import import JUDGMENT_FORMATS
        from evaluation.analyses import compute_results
        from evaluation.families.common.bootstrap_shares import run_chunks
        from evaluation.families.common.slots import load_slots
        from evaluation.families.ranking import bootstrap
        from evaluation.families.ranking.analysis import counted_outcomes
        from evaluation.families.ranking.options import options_of

        name = "ranking benchmark"
        if "wmt-rank" in JUDGMENT_FORMATS and not args.direct_insert:
            with tempfile.TemporaryDirectory(prefix="ranking-bench-") as tmp:
                path = Path(tmp) / "wmt-rank.csv"
                write_wmt_rank(path, g)
                size_mb = path.stat().st_size / 2**20
                log(f"importing a {size_mb:.0f} MB wmt-rank file with manage.py import_judgments ...")
                out, wall, rss, cpu = run_measured([sys.executable, "manage.py", "import_judgments", str(path),
                                                    "--format", "wmt-rank", "--name", name], env, args.db_name)
            imported = json.loads(out.strip().splitlines()[-1])
            campaign = Campaign.objects.get(slug=imported["campaign"])
            report["import"] = {"route": "manage.py import_judgments --format wmt-rank", "seconds": wall,
                                "peak_mb": rss, "file_mb": size_mb, **cpu}
        else:
            log("the wmt-rank format is not registered (or --direct-insert): inserting the rows directly")
            started = time.perf_counter()
            campaign = insert_directly(g, name)
            report["import"] = {"route": "direct insert (annotation.building.bulk.insert)",
                                "seconds": time.perf_counter() - started}
        stored = Judgment.objects.filter(campaign=campaign).count()
        assert stored == g.n_rankings, (stored, g.n_rankings)
        log(f"imported {stored:,} rankings in {report['import']['seconds']:.1f} s ({report['import']['route']})")
        campaign.options = {**(campaign.options or {}), "bootstrap_runs": args.runs}
        campaign.save(update_fields=["options"])

        # The whole results task in this process, as the product runs it: it queues its bootstrap subtasks on the
        # benchmark's broker, where no worker runs yet; they are counted there and dropped before the timed steps.
        report["busy_before"]["whole task"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
        monitor = CpuMonitor(args.db_name)
        monitor.start()
        cpu0 = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        header = compute_results(campaign)
        wall = time.perf_counter() - started
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        cpu = monitor.stop(0.0, wall)
        if args.profile:
            import cProfile
            import io
            import pstats

            profiler = cProfile.Profile()
            profiler.runcall(compute_results, campaign)
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(30)
            print(text.getvalue())
        # one results task queues its subtasks once (twice with --profile, which runs it again)
        expected = len(run_chunks(args.runs, bootstrap.runs_per_task())) * (2 if args.profile else 1)
        queued = queued_tasks(broker_url, bootstrap.trueskill_runs.name)
        assert queued == expected, f"the results task queued {queued} bootstrap subtasks, expected {expected}"
        flush_redis(broker_url)
        last_id = header.last_judgment_id
        report["whole_task"] = {"seconds": wall, "recorded_seconds": header.seconds,
                                "process_cpu_s": cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime,
                                "postgres_cpu_s": cpu["postgres_cpu_s"], "other_cores": cpu["other_cores"],
                                "steal_cores": cpu["steal_cores"], "peak_mb_after": peak_mb()}
        log(f"whole results task (compute_results, {args.runs} count-score bootstrap runs, {queued} subtasks queued): "
            f"{wall:.1f} s; PostgreSQL CPU {cpu['postgres_cpu_s']:.1f} s")

        # What each subtask repeats before its runs: reload the slots and expand them.
        campaign.refresh_from_db()
        started = time.perf_counter()
        slots = load_slots(campaign, last_id)
        loaded = time.perf_counter()
        counted = counted_outcomes(slots, g.quality.size, options_of(campaign))
        report["subtask_reload"] = {"load_slots_s": loaded - started,
                                    "counted_outcomes_s": time.perf_counter() - loaded,
                                    "outcomes": counted.outcomes.size}
        log(f"a subtask's reload: load_slots {loaded - started:.2f} s + counted_outcomes "
            f"{report['subtask_reload']['counted_outcomes_s']:.2f} s ({counted.outcomes.size:,} outcomes)")
        del slots, counted
        from django.db import connection

        report["busy_before"]["parallel reference"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
        report["parallel"] = parallel_scaling()
        log("two processes at once on this machine: a fixed Python loop takes {alone_s:.2f} s alone, "
            "{two_at_once_s:.2f} s each with two at once: at most {max_speedup:.2f}x from a second process"
            .format(**report["parallel"]))
        report["bootstrap"] = []
        for n, concurrency in enumerate(args.workers):
            step = f"bootstrap -c {concurrency}" + (f" (run {n + 1})" if len(args.workers) > len(set(args.workers))
                                                    else "")
            report["bootstrap"].append(bootstrap_with_workers(campaign, last_id, concurrency, args, env, report, step))
        first = report["bootstrap"][0]["rows"]
        report["bootstrap_identical"] = all(b["rows"] == first for b in report["bootstrap"])
        report["bootstrap_order_errors"] = order_error(
            np.array([r["score"] for r in first]), g.quality[[int(r["system"].split("-")[1]) for r in first]])
        report["bootstrap_clusters"] = max((r["cluster"] or 0) for r in first) if first else 0
        connection.close()
    finally:
        flush_redis(broker_url)
        if not args.keep_db:
            recreate_database(server_url, args.db_name, create=False)


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--rankings", type=int, default=200_000, help="five-way rankings (10 outcomes each)")
    parser.add_argument("--systems", type=int, default=20, help="systems of known quality (at least 5)")
    parser.add_argument("--judges", type=int, default=1000, help="judges, each with their own noise")
    parser.add_argument("--runs", type=int, default=100, help="TrueSkill bootstrap runs (and count-score runs)")
    parser.add_argument("--skip-celery", action="store_true",
                        help="only the core steps on arrays (no database, no broker)")
    parser.add_argument("--workers", default="1,2", help="worker processes to compare, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of expansion + scores and of the pass")
    parser.add_argument("--seed", type=int, default=1, help="of the generated data")
    parser.add_argument("--db-name", default="mteval_ranking_bench", help="the separate database (dropped first)")
    parser.add_argument("--redis-db", type=int, default=14,
                        help="the Redis database (of CELERY_BROKER_URL's server) used as broker; emptied")
    parser.add_argument("--keep-db", action="store_true", help="leave the benchmark database for inspection")
    parser.add_argument("--direct-insert", action="store_true",
                        help="insert the rows directly even if the wmt-rank import is there")
    parser.add_argument("--celery-timeout", type=float, default=3600.0, help="longest wait for one bootstrap, s")
    parser.add_argument("--profile", action="store_true", help="cProfile a TrueSkill pass and the whole results task")
    parser.add_argument("--quiet-limit", type=float, default=0.5,
                        help="before each timed step wait until other processes use fewer cores than this")
    parser.add_argument("--wait-quiet", type=float, default=30.0, help="longest such wait, seconds")
    args = parser.parse_args(argv)
    args.workers = [int(x) for x in args.workers.split(",") if x.strip()]
    if args.rankings < 1 or args.judges < 1 or args.runs < 1 or not args.workers or min(args.workers) < 1:
        parser.error("--rankings, --judges, --runs and --workers must be positive")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    shown = argv if argv is not None else sys.argv[1:]
    report: dict = {"command": " ".join([".venv/bin/python", "benchmarks/ranking.py", *map(shlex.quote, shown)]),
                    "cpus": os.cpu_count(), "busy_before": {}, "calibration": {}}
    started_all = time.perf_counter()
    t = time.perf_counter()
    g = generate(args.rankings, args.systems, args.judges, args.seed)
    report["data"] = {"rankings": g.n_rankings, "systems": args.systems, "judges": args.judges,
                      "segments": int(np.unique(g.segment).size), "generate_s": time.perf_counter() - t}
    log(f"generated {g.n_rankings:,} rankings of {PER_SCREEN} of {args.systems} systems by {args.judges:,} judges "
        f"({report['data']['generate_s']:.2f} s, not timed)")
    sys.path.insert(0, str(ROOT))
    core_steps(g, args, report)
    if not args.skip_celery:
        celery_steps(g, args, report)
    report["peak_mb"] = peak_mb()
    report["wall_s"] = time.perf_counter() - started_all
    print_summary(report)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"ranking-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(report, indent=2, default=float))
    log(f"report written to {path.relative_to(ROOT)}")
    return 0 if report["all_met"] else 1


def print_summary(report: dict) -> None:
    d, core, ts_ = report["data"], report["core"], report["trueskill_pass"]
    checks = [
        (f"expansion + ranking_scores, {core['outcomes']:,} outcomes (median)", core["median_s"], TARGETS["core_s"],
         "s"),
        (f"one TrueSkill pass, {ts_['updates']:,} outcomes (median)", ts_["seconds"], TARGETS["pass_s"], "s"),
        ("peak memory, this process (ru_maxrss)", report["peak_mb"], TARGETS["peak_mb"], "MB"),
    ]
    rows, best = [], {}
    repeated = len(report.get("bootstrap", [])) > len({b["concurrency"] for b in report.get("bootstrap", [])})
    for n, b in enumerate(report.get("bootstrap", [])):
        child_peak = max((w["peak_mb"] for w in b["workers"] if w["role"] == "child"), default=float("nan"))
        main_peak = max((w["peak_mb"] for w in b["workers"] if w["role"] == "main"), default=float("nan"))
        checks.append((f"peak memory, a pool process of -c {b['concurrency']} (VmHWM)"
                       + (f" (run {n + 1})" if repeated else ""), child_peak,
                       TARGETS["peak_mb"], "MB"))
        rows.append((b, main_peak))
    report["all_met"] = all(value < target for _, value, target, _ in checks)
    lines = ["", "=" * 100, "Relative ranking benchmark (benchmarks/ranking.py)",
             f"  command: {report['command']}",
             f"  data: {d['rankings']:,} five-way rankings, {d['systems']} systems, {d['judges']:,} judges, "
             f"{d['segments']:,} segments; {core['outcomes']:,} outcomes, {core['ties']:.1%} ties; "
             f"{report['cpus']} CPUs",
             "  other processes' load before each step (cores): "
             + ", ".join(f"{k} {v:.2f}" for k, v in report["busy_before"].items()),
             "  machine speed, reference workload (2M-step Python loop / 2M-float np.sort; compare between runs): "
             + "; ".join(f"{k} {v['python_loop_s']:.3f} / {v['numpy_sort_s']:.3f} s"
                         for k, v in report["calibration"].items()),
             "  expansion + scores runs: " + ", ".join(f"{x:.3f}" for x in core["runs_s"]) + " s (expand "
             + ", ".join(f"{x:.3f}" for x in core["expand_s"]) + "; scores "
             + ", ".join(f"{x:.3f}" for x in core["scores_s"]) + "); systems out of true order (pairs): "
             + ", ".join(f"{k} {v}" for k, v in core["order_errors"].items()),
             "  TrueSkill pass runs: " + ", ".join(f"{x:.2f}" for x in ts_["runs_s"]) + f" s; median "
             f"{ts_['us_per_update']:.2f} µs per update; pairs out of true order {ts_['order_errors']}; other "
             f"processes {ts_['other_cores']:.2f} cores, stolen {ts_['steal_cores']:.2f}"]
    if "import" in report:
        imp, whole, reload_ = report["import"], report["whole_task"], report["subtask_reload"]
        lines += [
            f"  database {report['database']} (separate, dropped at the end unless --keep-db), broker "
            f"{report['broker']}",
            f"  import: {imp['route']}: {imp['seconds']:.1f} s"
            + (f" ({imp['file_mb']:.0f} MB file, peak {imp['peak_mb']:.0f} MB, importer CPU "
               f"{imp['process_cpu_s']:.1f} s, PostgreSQL {imp['postgres_cpu_s']:.1f} s)" if "file_mb" in imp else ""),
            f"  whole results task in-process (compute_results, {report['bootstrap'][0]['runs']} count-score runs; "
            f"subtasks queued, not run): {whole['seconds']:.1f} s (CPU {whole['process_cpu_s']:.1f} s, PostgreSQL "
            f"{whole['postgres_cpu_s']:.1f} s)",
            f"  a subtask's reload before its runs: load_slots {reload_['load_slots_s']:.2f} s + counted_outcomes "
            f"{reload_['counted_outcomes_s']:.2f} s",
            "  two processes at once: a fixed Python loop {alone_s:.2f} s alone, {two_at_once_s:.2f} s each with two "
            "at once (at most {max_speedup:.2f}x from a second process)".format(**report["parallel"]),
            "",
            "  TrueSkill bootstrap as Celery subtasks (wall from queueing to stored rank ranges; expected = "
            "(runs x one pass + subtasks x reload) / N):",
        ]
        best = {c: min(b["wall_s"] for b in report["bootstrap"] if b["concurrency"] == c)
                for c in {b["concurrency"] for b in report["bootstrap"]}}
        base = best.get(1, report["bootstrap"][0]["wall_s"])
        reload_s = reload_["load_slots_s"] + reload_["counted_outcomes_s"]
        for b, main_peak in rows:
            child = [w for w in b["workers"] if w["role"] == "child"]
            expected = (b["runs"] * ts_["seconds"] + b["subtasks"] * reload_s) / b["concurrency"]
            lines.append(
                f"    -c {b['concurrency']}: {b['wall_s']:7.1f} s  speed-up {base / b['wall_s']:.2f}x  expected "
                f"{expected:.0f} s; {b['subtasks']} subtasks, " + " ".join(f"{x:.0f}" for x in b["subtask_s"])
                + f" s ({b['subtask_sum_s']:.0f} s in all); worker CPU {b['process_cpu_s']:.0f} s, PostgreSQL "
                f"{b['postgres_cpu_s']:.1f} s; other processes {b['other_cores']:.2f} cores, stolen "
                f"{b['steal_cores']:.2f}; peak main {main_peak:.0f} MB, pool "
                + ", ".join(f"{w['peak_mb']:.0f}" for w in child) + " MB")
        lines.append(f"    same rank ranges and μ with every worker count: {report['bootstrap_identical']}; "
                     f"pairs out of true order by mean μ: {report['bootstrap_order_errors']}; "
                     f"{report['bootstrap_clusters']} clusters")
    lines += ["", f"  {'figure':<62} {'value':>10}  {'target':>10}  result"]
    for label, value, target, unit in checks:
        lines.append(f"  {label:<62} {value:>7.2f} {unit:<2} {'< ' + format(target, 'g'):>7} {unit:<2}  "
                     f"{'PASS' if value < target else 'FAIL'}")
    for n, (b, _) in enumerate(rows):
        label = f"{b['runs']} bootstrap runs, Celery -c {b['concurrency']}" + (f" (run {n + 1})" if repeated else "")
        lines.append(f"  {label:<62} {b['wall_s']:>7.1f} s  {'(no target)':>9}")
    if 1 in best and len(best) > 1:
        for c in sorted(best):
            if c != 1:
                label = f"speed-up, -c {c} vs -c 1 (best runs)"
                lines.append(f"  {label:<62} {best[1] / best[c]:>7.2f} x  {'(no target)':>9}")
        label = "the machine's own limit, two Python loops at once vs one"
        lines.append(f"  {label:<62} {report['parallel']['max_speedup']:>7.2f} x  {'(reference)':>9}")
    lines += [f"  all targets met: {report['all_met']}; benchmark wall time {report['wall_s']:.0f} s", "=" * 100]
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())

"""Step 3 of benchmarks/ranking.py: TrueSkill's bootstrap as Celery subtasks on real workers (`celery -A config
worker -c N`), on the benchmark's own database and Redis database; what a second worker process can gain on the
machine; each worker's peak memory. Its docstring says what is measured."""
from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlsplit

import benchlib
import numpy as np
from benchlib import bench_database_url, recreate_database
from measure import CpuMonitor, calibrate, log, peak_mb, run_measured, wait_until_quiet
from ranking_data import Generated, insert_directly, order_error, write_wmt_rank

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
PER_SCREEN = 5
RANKINGS_PER_SEGMENT = 10


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

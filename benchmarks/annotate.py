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
- beside-stats: pace at 200 judgments/s (3,000 annotators, 15 s) on a campaign with the live gate on, while a
  Celery worker on the same machine recomputes a second campaign of 1,000,000 DA judgments on a loop
  (annotate_beside.py). Reports p50/p95/p99 of GET and POST and the recomputes finished. Target: p99 < 50 ms.
  `--worker-cpu-max CORES` / `--worker-cpu-weight W` run the worker in a CPU cgroup of its own (annotate_cgroup.py).
- `--batch K` (capacity, pace, beside-stats): each POST carries K answers, `{"batch": [...]}` (docs/api.md §8.3).
- `--media N`: any mode on a campaign whose every line carries an image (N files), imported as a bundle: the
  annotator path must keep its statements per request and its capacity within 10 % of a text campaign.
- crowd: `--crowd-annotators` (100) annotators, each from its own 127.0.0.x address, enter through
  `/c/<slug>/start/` with the crowd-entry limits on and judge back to back (annotate_crowd.py).

Every mode prints CPU milliseconds per stored judgment (gunicorn and PostgreSQL from /proc).

The client runs in a few processes (`--client-procs`) with threads inside, so that it takes
little of the two cores the server and PostgreSQL also use. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys
import time
from datetime import datetime

from annotate_beside import CeleryWorker, RecomputeLoop, prepare
from annotate_client import CHILDREN, run_capacity
from annotate_crowd import run_crowd
from annotate_machine import OUT, ROOT, calibrate, disturbance, log, wait_until_quiet
from annotate_pace import run_pace
from annotate_report import (
    check_database,
    print_summary,
    summarise_beside,
    summarise_capacity,
    summarise_crowd,
    summarise_pace,
)
from annotate_server import (
    Server,
    bench_broker_url,
    flush_redis,
    import_campaign,
    manage,
    server_env,
    write_campaign_file,
)
from benchlib import bench_database_url, recreate_database
from media_bundle import write_bundle


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--mode", choices=["capacity", "pace", "both", "beside-stats", "crowd"], default="both",
                        help="both = capacity then pace; beside-stats and crowd run alone (see above)")
    parser.add_argument("--duration", type=float, help="seconds of each mode (default: 20 capacity, 30 pace)")
    parser.add_argument("--annotators", type=int, default=50, help="capacity: annotators submitting back to back")
    parser.add_argument("--pace-annotators", type=int,
                        help="pace: annotators at work (default: 1500, i.e. 100/s; beside-stats 3000, 200/s)")
    parser.add_argument("--crowd-annotators", type=int, default=100,
                        help="crowd: annotators, each with its own client address")
    parser.add_argument("--stats-judgments", type=int, default=1_000_000,
                        help="beside-stats: judgments of the campaign the worker recomputes")
    parser.add_argument("--stats-template", default="",
                        help="beside-stats: a database to copy the bench database from when it exists (made by a "
                             "previous run with this flag: migrated, the big campaign imported), to skip the import")
    parser.add_argument("--worker-concurrency", type=int, default=2, help="beside-stats: Celery worker processes")
    parser.add_argument("--worker-nice", type=int, default=0, help="beside-stats: nice level of the Celery worker")
    parser.add_argument("--worker-cpu-max", type=float, default=0.0, metavar="CORES",
                        help="beside-stats: run the worker in a CPU cgroup with this quota (cpu.max; v1: "
                             "cpu.cfs_quota_us), e.g. 0.5 (0: no quota)")
    parser.add_argument("--worker-cpu-weight", type=int, default=0, metavar="W",
                        help="beside-stats: run the worker in a CPU cgroup with this weight (cpu.weight, 1-10000, "
                             "100 = default; v1: cpu.shares W*1024/100) (0: unchanged)")
    parser.add_argument("--worker-db-nice", type=int, default=0,
                        help="beside-stats: nice level given to the PostgreSQL backends serving the worker (root)")
    parser.add_argument("--worker-db-options", default="",
                        help="beside-stats: libpq options of the worker's connections, e.g. '-c work_mem=64MB'")
    parser.add_argument("--batch", type=int, default=1, metavar="K",
                        help="each POST carries K answers ({\"batch\": [...]}, docs/api.md §8.3), as a document page "
                             "sends (capacity, pace, beside-stats: judgments/s = annotators / think x K)")
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
    parser.add_argument("--worker-class", default="gthread",
                        help="gunicorn worker class (gthread as config/gunicorn.conf.py ships; sync)")
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
    parser.add_argument("--media", type=int, default=0, metavar="N",
                        help="a media campaign: every line carries an image (N distinct files), imported as a .zip "
                             "bundle (docs/api.md §2.1); the payloads then carry the HIT's media URLs")
    parser.add_argument("--gate", action="store_true",
                        help="import the campaigns with the live reliability gate on (each finished HIT queues it)")
    args = parser.parse_args(argv)
    args.capacity_duration = args.duration or 20.0
    args.pace_duration = args.duration or 30.0
    if args.pace_annotators is None:
        args.pace_annotators = 3000 if args.mode == "beside-stats" else 1500
    counts = (args.annotators, args.batch, args.pace_annotators, args.crowd_annotators, args.client_procs,
              args.client_threads)
    if min(counts) < 1:
        parser.error("counts must be positive")
    if not 0 <= args.jitter < 1 or args.think <= 0:
        parser.error("--think must be positive and --jitter within [0, 1)")
    return args


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
    args.gate = args.gate or args.mode == "beside-stats"  # the live gate's tasks run beside the statistics
    # Enough places for every run (a disturbed run is repeated on the same campaign with new worker ids):
    # every HIT has ~70 distinct outputs; allow 1,500 judgments/s in capacity mode.
    est_hits = max(1, math.ceil(args.segments * args.systems / 70))
    needed = max(max(args.annotators, args.crowd_annotators) + args.capacity_duration * 1500 / 100,
                 args.pace_annotators * 1.2)
    redundancy = args.redundancy or max(2, math.ceil(needed * (1 + args.retries) / est_hits))
    broker_url = bench_broker_url(os.environ.get("CELERY_BROKER_URL", ""), args.redis_db)
    env = server_env(bench_url, broker_url, args)
    server = worker = loop = None
    shown = argv if argv is not None else sys.argv[1:]
    report: dict = {"command": " ".join([".venv/bin/python", "benchmarks/annotate.py", *map(shlex.quote, shown)]),
                    "database": args.db_name, "conn_max_age": args.conn_max_age,
                    "broker": broker_url or "none (tasks in-process)"}
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched)")
        flush_redis(broker_url)
        if args.mode == "beside-stats":
            big = prepare(os.environ["DATABASE_URL"], bench_url, env, args, lambda: manage(env, "migrate", "--noinput"))
            report["stats_campaign"] = f"{big['slug']!r}, {big['judgments']:,} DA judgments, recomputed on a loop"
        else:
            recreate_database(os.environ["DATABASE_URL"], args.db_name)
            manage(env, "migrate", "--noinput")
        manage(env, "collectstatic", "--noinput", "-v0")
        path = OUT / "campaign.jsonl"
        write_campaign_file(path, args.segments, args.systems, seed=1, media=args.media)
        if args.media:
            path = write_bundle(path, OUT / "campaign.zip", args.media)
        def new_campaign(mode: str) -> str:
            t = time.monotonic()
            result = import_campaign(env, path, f"bench {mode}", redundancy, args.gate)
            log(f"imported campaign {result['campaign']!r}: {result['hits']} HITs, redundancy {redundancy} "
                f"({time.monotonic() - t:.1f} s)")
            report["campaign"] = (f"adequacy, {args.segments} segments x {args.systems} systems, {result['hits']} "
                                  f"HITs of 100 items, redundancy {redundancy} (one campaign per mode)"
                                  + (", live reliability gate on" if args.gate else "")
                                  + (f", an image on every line ({args.media} files, a bundle)" if args.media else ""))
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
        if args.mode == "beside-stats":
            worker = CeleryWorker(env, bench_url, args)
            report["worker"] = worker.description + (f"; its backends at nice {args.worker_db_nice}"
                                                     if args.worker_db_nice else "")
            log(f"starting {report['worker']}, and the recompute loop")
            worker.start()
            loop = RecomputeLoop(broker_url, bench_url, big["id"], args.worker_db_nice)
            loop.start()
        for mode in modes:
            for attempt in range(1 + args.retries):
                slug, prefix = slugs[mode], f"bench-{mode[0]}{attempt + 1}"
                quiet(report, mode, server.port, args)
                if mode == "capacity":
                    log(f"capacity: {args.annotators} annotators, {args.capacity_duration:g} s, "
                        f"{args.batch} answer(s) per POST")
                    stats, t_start = run_capacity(server.port, slug, prefix, args)
                    check = check_database(bench_url, slug, prefix, stats.accepted)
                    result = summarise_capacity(stats, t_start, check, args)
                    log(f"capacity: {result['db_judgments_per_second']:.1f} judgments/s; "
                        f"cores used {result['cores_used']}")
                elif mode == "crowd":
                    log(f"crowd: {args.crowd_annotators} annotators from their own addresses, "
                        f"{args.capacity_duration:g} s")
                    stats, t_start = run_crowd(server.port, slug, prefix, args)
                    check = check_database(bench_url, slug, prefix, stats.accepted)
                    result = summarise_crowd(stats, t_start, check, args)
                    log(f"crowd: {result['db_judgments_per_second']:.1f} judgments/s; "
                        f"cores used {result['cores_used']}")
                else:
                    log(f"pace: {args.pace_annotators} annotators entering the campaign")
                    stats, setup, t0, working = run_pace(server.port, slug, prefix, args)
                    check = check_database(bench_url, slug, prefix, stats.accepted)
                    result = summarise_pace(stats, setup, t0, working, check, args)
                    if mode == "beside-stats":
                        result = summarise_beside(result, loop.during(t0, t0 + args.pace_duration), loop.finished,
                                                  loop.queued)
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
        if loop is not None:
            loop.stop()
        if worker is not None:
            worker.stop()
            log("celery worker stopped")
            if worker.cgroup is not None:
                report["worker_cgroup_stat"] = worker.throttled
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

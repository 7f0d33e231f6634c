#!/usr/bin/env python
"""Benchmark of the results page (`GET /results/<slug>/`) of a 100,000-judgment DA campaign, on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/results_page.py [--requests 20] [--keep-db]

Run from the project folder. DATABASE_URL only names the server: the benchmark drops and
recreates a separate database on it (`mteval_results_bench`, `--db-name`), migrates it, and never
touches the database of DATABASE_URL (nor Redis: tasks in-process, local cache). The benchmark
database is dropped at the end unless `--keep-db`.

1. Writes a wmt-da file (docs/api.md) to a temporary folder: 1,000 workers × one 100-item HIT
   each (200 HIT designs done by 5 workers), 10 systems, 2,000 segments; every HIT has 70 system
   outputs, 10 bad references, 10 repeats and 10 references. ~80 % of the workers are careful,
   ~3 % half-hearted (small bad-reference drop), 15 % click at random, a few give one constant
   score. Imports it with `import_judgments` (as `manage.py import_judgments` does), spreads the
   judgments over ~40 hours (each HIT its own working session, as collected judgments would be:
   an import gives them all one time), and computes the results once (`compute_results`).
2. Counts the queries of one page request in-process (Django's test Client,
   `CaptureQueriesContext`), after one warm-up request.
3. Runs `collectstatic` (into the git-ignored staticfiles/, as the Dockerfile does; removed again
   if it was not there before), starts gunicorn on a free loopback port with DEBUG=0 and stops it at
   the end, also on errors and Ctrl-C; logs in through the admin login form with a real HTTP client
   (urllib, keeping the session cookie), waits for a quiet machine (`--wait-quiet`, `--quiet-limit`)
   and times `--requests` (20) sequential page loads after `--warmup` (4) untimed ones:
   min/median/p95/max milliseconds, page size, gunicorn's CPU per request, other processes' load.
   Target: p95 < 1 s.

A JSON report goes to benchmarks/out/results-page-<time>.json, gunicorn's log to
benchmarks/out/results-page-gunicorn.log. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import shutil
import signal
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

from benchlib import bench_database_url, recreate_database
from results_page_http import (
    HOST,
    PASSWORD,
    USERNAME,
    Server,
    fetch,
    log,
    logged_in_opener,
    machine_busy,
    percentile,
    self_cpu,
    session_cpu,
    wait_until_quiet,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TARGET_MS = 1000.0
HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"
# Ten systems of a WMT-like news task, best first, in near pairs (so that the clusters are not trivial).
SYSTEMS = {"online-B": 75.0, "uedin-nmt": 74.0, "KIT": 69.0, "NRC": 68.0, "online-A": 63.0, "CUNI": 62.0,
           "LMU": 57.0, "RWTH": 55.5, "PROMT-rbmt": 50.0, "TALP-UPC": 46.0}


# ---------------------------------------------------------------------------------------------
# The synthetic campaign
# ---------------------------------------------------------------------------------------------

def write_wmt_da(path: Path, workers: int, hit_size: int, redundancy: int, segments: int, seed: int) -> dict:
    """One HIT per worker; HIT design d is done by workers d, d + D, d + 2D, ... (D = workers / redundancy).
    Returns the number of judgments and of workers of each kind."""
    if hit_size != 100:
        raise SystemExit("the HIT layout (70 + 10 + 10 + 10) needs --hit-size 100")
    rng = random.Random(seed)
    designs = workers // redundancy
    names = list(SYSTEMS)
    difficulty = [rng.gauss(0, 8) for _ in range(segments)]
    layouts = []
    for _ in range(designs):
        segs = rng.sample(range(segments), 70)
        systems = [rng.choice(names) for _ in range(70)]
        # (type, system, segment, index of the system item it copies or None)
        items = [("SYSTEM", systems[k], segs[k], None) for k in range(70)]
        items += [("BAD_REF", systems[k], segs[k], k) for k in range(10)]
        items += [("REPEAT", systems[k], segs[k], k) for k in range(10, 20)]
        items += [("REF", "_ref", segs[k], None) for k in range(20, 30)]
        order = list(range(hit_size))
        rng.shuffle(order)
        layouts.append((items, order))

    kinds = {"careful": 0, "half-hearted": 0, "random": 0, "constant": 0}
    judgments = 0
    with path.open("w", encoding="utf-8") as handle:
        handle.write(HEADER + "\n")
        for w in range(workers):
            draw = rng.random()
            kind = ("constant" if draw < 0.005 else "random" if draw < 0.155 else "half-hearted" if draw < 0.185
                    else "careful")
            kinds[kind] += 1
            bias, scale, noise = rng.gauss(0, 8), min(1.6, max(0.6, rng.lognormvariate(0, 0.2))), rng.uniform(6, 14)
            drop = {"careful": (25, 8), "half-hearted": (5, 4)}.get(kind)
            speed = {"careful": 18.0, "half-hearted": 8.0, "random": 3.0, "constant": 2.5}[kind]
            constant = rng.choice([50, 75, 100])
            design = w % designs
            items, order = layouts[design]
            hit, worker = f"3HIT{design:05d}", f"A{w:05d}W{rng.randrange(16**6):06X}"
            scores: list[float] = [0.0] * hit_size
            for k, (item_type, system, seg, copies) in enumerate(items):  # in design order: originals first
                if kind == "random":
                    scores[k] = rng.randint(0, 100)
                    continue
                if kind == "constant":
                    scores[k] = constant
                    continue
                if item_type == "REF":
                    truth = 84 + 0.5 * difficulty[seg]
                elif item_type == "BAD_REF":
                    truth = scores[copies] - max(0.0, rng.gauss(*drop))
                elif item_type == "REPEAT":
                    truth = scores[copies] + rng.gauss(0, 0.5 * noise)
                else:
                    truth = SYSTEMS[system] + difficulty[seg] + rng.gauss(0, 6)
                value = truth if copies is not None else 50 + scale * (truth - 50) + bias + rng.gauss(0, noise)
                scores[k] = min(100, max(0, round(value)))
            lines = []
            for position, k in enumerate(order):
                item_type, system, seg, _ = items[k]
                seconds = round(speed * rng.lognormvariate(0, 0.45), 1)
                lines.append(f"{hit} {worker} de en {position + 1} {design + 1} {system} {judgments + position + 1} "
                             f"{item_type} {seg + 1} {int(scores[k])} {seconds}\n")
            handle.write("".join(lines))
            judgments += hit_size
    return {"judgments": judgments, "workers": workers, "hit_designs": designs, "segments": segments,
            "systems": len(SYSTEMS), "worker_kinds": kinds}


# ---------------------------------------------------------------------------------------------
# Database plumbing
# ---------------------------------------------------------------------------------------------

def bench_env(bench_url: str) -> dict:
    """Production settings (DEBUG=0) on the benchmark database; tasks in-process, local cache (no Redis).
    The cookies are not marked Secure and plain HTTP is not redirected to HTTPS: the site is reached over plain
    HTTP on the loopback here, where production has a TLS proxy in front (with SECURE_SSL_REDIRECT on, every
    request measured was a 301 to https://)."""
    env = dict(os.environ)
    env.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
               SESSION_COOKIE_SECURE="0", CSRF_COOKIE_SECURE="0", SECURE_SSL_REDIRECT="0", RESULTS_AUTO_RECOMPUTE="0",
               CELERY_BROKER_URL="", CELERY_RESULT_BACKEND="", CACHE_URL="", CACHE_KEY_PREFIX="results-bench",
               PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")
    return env


def spread_over_time(campaign_id: int, hours: float, seed: int) -> None:
    """Give each assignment its own working session within the last `hours`: its judgments follow one
    another by their recorded seconds, and the assignment completes with its last judgment."""
    from django.db import connection

    from annotation.models import Assignment, Judgment

    judgment, assignment = Judgment._meta.db_table, Assignment._meta.db_table
    with connection.cursor() as cur:
        cur.execute("SELECT setseed(%s)", [(seed % 1000) / 1000])
        cur.execute(f"""
            WITH starts AS (
                SELECT id, now() - (%s + 2) * interval '1 hour' + random() * %s * interval '1 hour' AS t0
                FROM {assignment} WHERE campaign_id = %s),
            times AS (
                SELECT j.id, s.t0 + make_interval(secs => SUM(COALESCE(j.seconds, 10))
                                                 OVER (PARTITION BY j.assignment_id ORDER BY j.id)) AS t
                FROM {judgment} j JOIN starts s ON s.id = j.assignment_id WHERE j.campaign_id = %s)
            UPDATE {judgment} j SET created_at = times.t FROM times WHERE j.id = times.id""",
                    [hours, hours, campaign_id, campaign_id])
        cur.execute(f"""
            UPDATE {assignment} a SET started_at = m.first, last_activity_at = m.last, completed_at = m.last
            FROM (SELECT assignment_id, MIN(created_at) AS first, MAX(created_at) AS last FROM {judgment}
                  WHERE campaign_id = %s GROUP BY assignment_id) m
            WHERE a.id = m.assignment_id""", [campaign_id])


def prepare(args, env: dict, data_file: Path) -> dict:
    """In this process, on the benchmark database: migrate, import, spread, compute, a staff user, and one
    page request through the test Client to count its queries."""
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from annotation.services.judgment_import import import_judgments
    from evaluation.analyses import compute_results

    report: dict = {}
    started = time.perf_counter()
    call_command("migrate", interactive=False, verbosity=0)
    report["migrate_s"] = round(time.perf_counter() - started, 1)
    call_command("collectstatic", interactive=False, verbosity=0)  # DEBUG=0: pages name the hashed files

    started = time.perf_counter()
    with data_file.open("rb") as handle:
        result = import_judgments(handle, fmt="wmt-da", name="Results benchmark: news de-en, 100k judgments")
    campaign = result.campaign
    campaign.payment_per_hit = "1.00"
    campaign.save(update_fields=["payment_per_hit"])
    report["import_s"] = round(time.perf_counter() - started, 1)
    report["judgments_stored"] = result.judgments
    log(f"imported {result.judgments:,} judgments in {report['import_s']} s: campaign {campaign.slug}")

    spread_over_time(campaign.pk, args.hours, args.seed)
    started = time.perf_counter()
    header = compute_results(campaign)
    report["compute_s"] = round(time.perf_counter() - started, 1)
    if header is None:
        raise RuntimeError("compute_results stored no results")
    log(f"computed the results in {report['compute_s']} s")

    user = get_user_model().objects.create_user(USERNAME, password=PASSWORD, is_staff=True)
    # The researcher owns the campaign (an imported campaign has no owner, and only superusers would see it:
    # another researcher gets a 404, annotation/ownership.py).
    campaign.owner = user
    campaign.save(update_fields=["owner"])
    client = Client(HTTP_HOST=HOST)
    client.force_login(user)
    url = f"/results/{campaign.slug}/"
    counts = []
    for _ in range(2):  # the first request also fills per-process caches (content types, templates)
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(url)
            elapsed = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            raise RuntimeError(f"GET {url} in-process answered {response.status_code}")
        counts.append((len(queries), round(elapsed, 1)))
    report["queries_first_request"], report["in_process_first_ms"] = counts[0]
    report["queries"], report["in_process_ms"] = counts[1]
    report["query_sql"] = [q["sql"][:300] for q in queries.captured_queries]
    report["slug"] = campaign.slug
    report["workers_on_page"] = response.content.decode().count('<tr class="ok">') + \
        response.content.decode().count('<tr class="bad">')

    connection.close()
    return report


# ---------------------------------------------------------------------------------------------

def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db-name", default="mteval_results_bench")
    parser.add_argument("--workers", type=int, default=1000, help="crowd workers, one HIT each")
    parser.add_argument("--hit-size", type=int, default=100)
    parser.add_argument("--redundancy", type=int, default=5, help="workers per HIT design")
    parser.add_argument("--segments", type=int, default=2000)
    parser.add_argument("--hours", type=float, default=40.0, help="the judgments are spread over this many hours")
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=4, help="untimed page loads first (each gunicorn worker)")
    parser.add_argument("--gunicorn-workers", type=int, default=2)
    parser.add_argument("--quiet-limit", type=float, default=0.25,
                        help="cores other processes may use before the timing starts")
    parser.add_argument("--wait-quiet", type=float, default=120.0, help="seconds to wait for that, at most")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-db", action="store_true")
    args = parser.parse_args(argv)

    database_url = os.environ.get("DATABASE_URL", "")
    bench_url, _ = bench_database_url(database_url, args.db_name, "benchmarks/results_page.py")
    env = bench_env(bench_url)
    OUT.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # run the clean-up below on SIGTERM too

    report: dict = {"started": datetime.now().isoformat(timespec="seconds"), "args": vars(args)}
    server: Server | None = None
    staticfiles = ROOT / "staticfiles"
    staticfiles_existed = staticfiles.exists()
    try:
        recreate_database(database_url, args.db_name)
        with tempfile.TemporaryDirectory(prefix="mteval-results-bench-") as tmp:
            data_file = Path(tmp) / "wmt-da.txt"
            started = time.perf_counter()
            report["campaign"] = write_wmt_da(data_file, args.workers, args.hit_size, args.redundancy,
                                              args.segments, args.seed)
            log(f"wrote {report['campaign']['judgments']:,} judgments ({data_file.stat().st_size / 1e6:.1f} MB) "
                f"in {time.perf_counter() - started:.1f} s; workers: {report['campaign']['worker_kinds']}")
            report.update(prepare(args, env, data_file))

        server = Server(env, args.gunicorn_workers)
        server.start()
        base = f"http://{HOST}:{server.port}"
        url = f"{base}/results/{report['slug']}/"
        opener = logged_in_opener(base)
        warm = [fetch(opener, url)[0] for _ in range(args.warmup)]
        report["other_cores_before"] = round(wait_until_quiet(args.quiet_limit, args.wait_quiet), 2)
        busy0, server0, self0, wall0 = machine_busy(), session_cpu(server.proc.pid), self_cpu(), time.perf_counter()
        timings, sizes = [], set()
        for _ in range(args.requests):
            elapsed, body = fetch(opener, url)
            timings.append(elapsed)
            sizes.add(len(body))
        server_cpu, client_cpu = session_cpu(server.proc.pid) - server0, self_cpu() - self0
        wall = time.perf_counter() - wall0
        busy_cores = (machine_busy() - busy0) / wall
        other_cores = max(0.0, busy_cores - (server_cpu + client_cpu) / wall)
        report.update({
            "server": " ".join(server.argv[1:]).replace(f"-b {HOST}:{server.port}", f"-b {HOST}:<port>"),
            "warmup_ms": [round(t, 1) for t in warm],
            "timings_ms": [round(t, 1) for t in timings],
            "min_ms": round(min(timings), 1), "median_ms": round(statistics.median(timings), 1),
            "p95_ms": round(percentile(timings, 95), 1), "max_ms": round(max(timings), 1),
            "page_bytes": sorted(sizes), "page_gzip_bytes": len(gzip.compress(body, 6)),
            "machine_busy_cores": round(busy_cores, 2), "other_cores": round(other_cores, 2),
            "server_cpu_ms_per_request": round(1000 * server_cpu / args.requests, 1),
        })
    finally:
        if server is not None:
            server.stop()
        if not staticfiles_existed and staticfiles.exists():
            shutil.rmtree(staticfiles)
        if not args.keep_db:
            try:
                recreate_database(database_url, args.db_name, create=False)
            except Exception as exc:  # noqa: BLE001 - report, but do not hide the run's own error
                log(f"could not drop {args.db_name}: {exc}")

    path = OUT / f"results-page-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(report, indent=2))
    ok = report["p95_ms"] < TARGET_MS
    campaign = report["campaign"]
    print(f"campaign: {campaign['judgments']:,} judgments, {campaign['workers']:,} workers, "
          f"{campaign['systems']} systems; import {report['import_s']} s, compute {report['compute_s']} s")
    print(f"GET /results/<slug>/ as a logged-in staff user, {args.requests} requests "
          f"(after {args.warmup} warm-up: {', '.join(f'{t:.0f}' for t in report['warmup_ms'])} ms), "
          f"{report['server']}")
    print(f"  min {report['min_ms']:.0f} ms, median {report['median_ms']:.0f} ms, p95 {report['p95_ms']:.0f} ms, "
          f"max {report['max_ms']:.0f} ms; page {max(report['page_bytes']) / 1024:.0f} KiB, "
          f"{report['page_gzip_bytes'] / 1024:.0f} KiB gzipped ({report['workers_on_page']:,} worker rows)")
    print(f"  gunicorn CPU {report['server_cpu_ms_per_request']:.0f} ms per request; other processes used "
          f"{report['other_cores']:.2f} of the machine's cores meanwhile (PostgreSQL included)"
          + ("  <- disturbed: the times are upper bounds" if report["other_cores"] > args.quiet_limit else ""))
    print(f"  queries per request (in-process, test Client): {report['queries']} "
          f"(first request of the process: {report['queries_first_request']}); "
          f"in-process render {report['in_process_ms']:.0f} ms")
    print(f"  target p95 < {TARGET_MS:.0f} ms: {'met' if ok else 'MISSED'}; report {path.relative_to(ROOT)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

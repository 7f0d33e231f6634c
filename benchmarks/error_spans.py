#!/usr/bin/env python
"""Benchmark of the error-span statistics (ESA, MQM) at WMT scale, on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/error_spans.py
        [--judgments 500000] [--spans 1500000] [--segments 33000] [--systems 15] [--raters 100] [--repeats 3]
        [--skip-import] [--keep-db] [--profile] [--seed 1]

Run from the project folder. DATABASE_URL only names the server: the benchmark drops and recreates a separate
database on it (`mteval_bench_spans`, `--db-name`), migrates it, and drops it at the end unless `--keep-db`; its
subprocesses use Redis database `--redis-db` (5) of CELERY_BROKER_URL's server as cache and broker (emptied before
and after; nothing is queued), or a local cache without Redis.

1. Generated with numpy: 15 systems of known quality (a random permutation over the names), 33,000 segments in
   documents of 5-15 segments, each document in one of 3 domains (45/35/20 %), 100 raters (5 of them score at
   random). Every (system, segment) is judged once, 2,500 of them by a second rater, and 2,500 judgments are
   perturbed copies (`bad_ref`, paired by partner_position with the original in the same HIT): 500,000 judgments
   in HITs of about 100 items, 1,500,000 spans in all (0-6 a judgment, mean 3, more and more often major for
   worse systems; non-overlapping, inside a target of 70-90 characters). ESA score: the system's quality + domain +
   segment + rater bias + noise − 1 per minor − 4 per major, rounded and clipped to 0-100; a perturbed copy has the
   original's errors and a major omission more and scores 15-40 lower (a random rater's: anything). Stored in
   bulk (annotation.building.bulk.insert: COPY) as two analysis-only campaigns with the same judgments: `esa`,
   and `mqm` with a category per span from the default taxonomy (minor Fluency/Punctuation and Non-translation
   included), both with options {"statistics_preset": "wmt24-esa"}.
   Then VACUUM (ANALYZE), as autovacuum would soon do.
2. `compute_error_spans(campaign)` (evaluation.families.error_spans.storage), database to stored results, in a
   fresh subprocess per configuration, `--repeats` times: ESA under wmt24-esa (per-domain Wilcoxon + Stouffer,
   WMT clusters), ESA under wmt25-esa, MQM under wmt24-esa. The functions it calls are wrapped with timers from
   the outside (nothing edited): load_observations, span_counts, add_counts, analyse (and inside it
   counted_rows, the significance tests, the clusters and the workers' test), spans_of, agreement,
   replace_results; "other" is the rest (the aggregate queries, the table rows). Target < 10 s. Peak memory of
   each subprocess (resource.getrusage ru_maxrss, and VmHWM). The stored ranking must recover the known order.
3. If `annotation/protocols/error_spans/mqm_tsv.py` registers `mqm-tsv`: the MQM judgments of the system items written
   as a Google MQM TSV (one row per error, a `No-error` row per judgment without one; about 1.5 million rows) and
   imported with `import_judgments(lines, fmt="mqm-tsv", name=..., pair="en-de")` in a subprocess. Target < 120 s.
   Then `compute_error_spans` on the imported campaign once.

Before each timed step it waits (up to `--wait-quiet` s) for other processes to go quiet and reports the cores
other processes used, the hypervisor's steal and a reference workload's time (stats.py's). Exit status 1 if a
target is missed or the ranking is wrong. JSON report in benchmarks/out/error-spans-<time>.json. See
benchmarks/README.md, "Error spans".
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from error_spans_children import child_build, child_compute, child_import
from measure import calibrate, log, run_measured, vacuum_analyze, wait_until_quiet

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TARGETS = {"compute_s": 10.0, "import_s": 120.0, "peak_mb": 1536.0}
CONFIGS = (("esa", "wmt24-esa"), ("esa", "wmt25-esa"), ("mqm", "wmt24-esa"))


# ---------------------------------------------------------------------------------------------
# Parent: orchestration
# ---------------------------------------------------------------------------------------------

def bench_env(bench_url: str, redis_url: str) -> dict:
    env = dict(os.environ)
    env.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
               RESULTS_AUTO_RECOMPUTE="0", CELERY_BROKER_URL=redis_url, CELERY_RESULT_BACKEND=redis_url,
               CACHE_URL=redis_url, CACHE_KEY_PREFIX="bench-spans", LOG_LEVEL="WARNING", PYTHONUNBUFFERED="1",
               DJANGO_SETTINGS_MODULE="config.settings")
    return env


def redis_url_of(args) -> str:
    broker = os.environ.get("CELERY_BROKER_URL", "")
    parts = urlsplit(broker)
    if parts.scheme not in ("redis", "rediss"):
        return ""
    return parts._replace(path=f"/{args.redis_db}").geturl()


def flush_redis(url: str) -> None:
    if not url:
        return
    import redis

    try:
        redis.Redis.from_url(url, socket_timeout=10, socket_connect_timeout=10).flushdb()
    except redis.RedisError as exc:
        log(f"could not empty {url}: {exc}")


def child(args, mode: str, extra: list[str], env: dict, step: str, report: dict) -> dict:
    """Run this script as a child (`--child mode`) after waiting for quiet; returns its JSON with the CPU of
    PostgreSQL and of other processes meanwhile."""

    report["busy_before"][step] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
    report["calibration"][step] = calibrate()
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", mode, "--seed", str(args.seed), *extra]
    out, wall, rss, cpu = run_measured(argv, env, args.db_name)
    lines = out.strip().splitlines()
    result = json.loads(lines[-1])
    for line in lines[:-1]:
        print(line)
    result.update(wall_s=wall, wait4_maxrss_mb=rss, **{f"{k}_during": v for k, v in cpu.items()})
    return result


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child == "build":
        child_build(args)
        return 0
    if args.child == "compute":
        child_compute(args)
        return 0
    if args.child == "import":
        child_import(args)
        return 0
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from benchlib import bench_database_url, recreate_database

    shown = argv if argv is not None else sys.argv[1:]
    report: dict = {"command": " ".join([".venv/bin/python", "benchmarks/error_spans.py", *map(shlex.quote, shown)]),
                    "cpus": os.cpu_count(), "busy_before": {}, "calibration": {}, "started": datetime.now().isoformat()}
    server_url = os.environ.get("DATABASE_URL", "")
    bench_url, dev_db = bench_database_url(server_url, args.db_name, "benchmarks/error_spans.py")
    redis_url = redis_url_of(args)
    env = bench_env(bench_url, redis_url)
    report["database"], report["redis"] = args.db_name, redis_url or "(none: local cache)"
    started_all = time.perf_counter()
    tmp = tempfile.TemporaryDirectory(prefix="error-spans-bench-")
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched), Redis "
            f"{report['redis']} (emptied)")
        recreate_database(server_url, args.db_name)
        flush_redis(redis_url)
        run_measured([sys.executable, "manage.py", "migrate", "--noinput"], env, args.db_name)

        have_import = False
        try:
            sys.path.insert(0, str(ROOT))
            have_import = (ROOT / "annotation" / "protocols" / "error_spans" / "mqm_tsv.py").exists() and \
                "parse_mqm_tsv" in (ROOT / "annotation" / "protocols" / "error_spans" / "mqm_tsv.py").read_text()
        except OSError:
            pass
        have_import = have_import and not args.skip_import
        tsv = str(Path(tmp.name) / "mqm.tsv") if have_import else ""
        log(f"generating {args.judgments:,} judgments with {args.spans:,} spans and building the ESA and MQM "
            "campaigns (bulk COPY)" + (" and the MQM TSV" if tsv else "") + " ...")
        built = child(args, "build", [*data_args(args), *(["--tsv", tsv] if tsv else [])], env, "build", report)
        report["build"] = built
        for protocol, c in built["campaigns"].items():
            log(f"built {protocol}: {c['judgments']:,} judgments, {c['hits']:,} HITs, {c['outputs']:,} outputs in "
                f"{c['seconds']:.1f} s (" + ", ".join(f"{k} {v:.1f}" for k, v in c["parts_s"].items()) + ")")
        d = built["data"]
        log(f"data: {d['judgments']:,} judgments ({d['bad_ref']:,} bad_ref, {d['second_ratings']:,} second ratings), "
            f"{d['spans']:,} spans (max {d['spans_max']} a judgment, {d['major_share']:.1%} major), "
            f"{d['documents']:,} documents, segments per domain {d['domain_segments']}")
        t = time.perf_counter()
        vacuum_analyze(bench_url)
        report["vacuum_analyze_s"] = time.perf_counter() - t
        log(f"VACUUM (ANALYZE) {report['vacuum_analyze_s']:.1f} s")

        expected = json.dumps(built["expected_order"])
        report["computes"] = []
        for protocol, preset in CONFIGS:
            step = f"{protocol} {preset}"
            extra = ["--slug", built["campaigns"][protocol]["slug"], "--preset", preset, "--repeats",
                     str(args.repeats), "--expected", expected, *(["--profile"] if args.profile else [])]
            result = child(args, "compute", extra, env, step, report)
            result.update(protocol=protocol, preset=preset)
            if result.get("profile"):
                print(f"---- cProfile, compute_error_spans, {step} ----\n{result['profile']}")
            report["computes"].append(result)
            times = [r["seconds"] for r in result["runs"]]
            check = result["check"] or {}
            log(f"compute_error_spans {step}: " + ", ".join(f"{x:.2f}" for x in times) + f" s (median "
                f"{statistics.median(times):.2f}); peak {result['peak_mb']:.0f} MB; PostgreSQL CPU "
                f"{result['postgres_cpu_s_during']:.1f} s; ranking recovered: {check.get('same_order')}")

        if have_import:
            result = child(args, "import", ["--tsv", tsv], env, "import mqm-tsv", report)
            result.update(rows=built["tsv"]["rows"], file_mb=built["tsv"]["mb"])
            report["import"] = result
            log(f"import_judgments mqm-tsv, {result['rows']:,} rows ({result['file_mb']:.0f} MB): "
                f"{result['seconds']:.1f} s ({result['judgments']:,} judgments; peak {result['peak_mb']:.0f} MB)")
            extra = ["--slug", result["slug"], "--preset", "wmt24-esa", "--repeats", "1", "--expected", expected]
            report["imported_compute"] = child(args, "compute", extra, env, "compute imported mqm-tsv", report)
            vacuum_analyze(bench_url)
            report["imported_compute_analyzed"] = child(args, "compute", extra, env,
                                                        "compute imported mqm-tsv after VACUUM (ANALYZE)", report)
        else:
            report["import"] = None
            log("the mqm-tsv import is not available (annotation/protocols/error_spans/mqm_tsv.py) or --skip-import")
    finally:
        tmp.cleanup()
        flush_redis(redis_url)
        if not args.keep_db:
            recreate_database(server_url, args.db_name, create=False)
    report["wall_s"] = time.perf_counter() - started_all
    print_summary(report)
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"error-spans-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(report, indent=2, default=float))
    log(f"report written to {path.relative_to(ROOT)}")
    return 0 if report["all_met"] else 1


def median_parts(runs: list[dict]) -> dict[str, float]:
    labels = list(dict.fromkeys(k for r in runs for k in r["parts_s"]))
    labels = [k for k in labels if not k.startswith("of all")] + [k for k in labels if k.startswith("of all")]
    parts = {k: statistics.median(r["parts_s"].get(k, 0.0) for r in runs) for k in labels}
    return {k: v for k, v in parts.items() if not k.startswith("of all")} | {
        "other": statistics.median(r["other_s"] for r in runs)} | {
        k: v for k, v in parts.items() if k.startswith("of all")}


def print_summary(report: dict) -> None:
    d = report["build"]["data"]
    lines = ["", "=" * 110, "Error-span statistics benchmark (benchmarks/error_spans.py)",
             f"  command: {report['command']}",
             f"  data: {d['judgments']:,} judgments ({d['system_judgments']:,} of system outputs, "
             f"{d['second_ratings']:,} of them second ratings; {d['bad_ref']:,} perturbed copies), "
             f"{d['spans']:,} spans "
             f"(0-{d['spans_max']} a judgment, {d['judgments_without_spans']:,} without, {d['major_share']:.1%} "
             f"major), {d['systems']} systems, {d['segments']:,} segments in {d['documents']:,} documents, 3 domains "
             f"{d['domain_segments']}, {d['raters']} raters, {d['hits']:,} HITs; {report['cpus']} CPUs",
             f"  database {report['database']} (separate), Redis {report['redis']}",
             "  other processes' load before each step (cores): "
             + ", ".join(f"{k} {v:.2f}" for k, v in report["busy_before"].items()),
             "  machine speed, reference workload (2M-step Python loop / 2M-float np.sort): "
             + "; ".join(f"{k} {v['python_loop_s']:.3f} / {v['numpy_sort_s']:.3f} s"
                         for k, v in report["calibration"].items())]
    for protocol, c in report["build"]["campaigns"].items():
        lines.append(f"  build {protocol} (bulk COPY, not a target): {c['seconds']:.1f} s = "
                     + " + ".join(f"{k} {v:.1f}" for k, v in c["parts_s"].items()))
    checks = []
    for c in report["computes"]:
        times = [r["seconds"] for r in c["runs"]]
        median = statistics.median(times)
        parts = median_parts(c["runs"])
        check = c["check"] or {}
        label = f"compute_error_spans, {c['protocol'].upper()} {c['preset']} (median of {len(times)})"
        checks.append((label, median, TARGETS["compute_s"], "s"))
        checks.append((f"peak memory, {c['protocol'].upper()} {c['preset']} subprocess (ru_maxrss)",
                       c["ru_maxrss_mb"], TARGETS["peak_mb"], "MB"))
        lines += [
            "",
            f"  {c['protocol'].upper()} under {c['preset']}: runs " + ", ".join(f"{x:.2f}" for x in times)
            + f" s; process CPU {statistics.median(r['process_cpu_s'] for r in c['runs']):.2f} s a run, PostgreSQL "
            f"{c['postgres_cpu_s_during'] / len(times):.2f} s a run; other processes {c['other_cores_during']:.2f} "
            f"cores, stolen {c['steal_cores_during']:.2f}; peak {c['ru_maxrss_mb']:.0f} MB (VmHWM "
            f"{c['peak_mb']:.0f}, {c['base_mb']:.0f} after start-up)",
            "    phases (median s): " + ", ".join(f"{k} {v:.2f}" for k, v in parts.items()),
            f"    ranking ({check.get('score_name')}): expected  " + " > ".join(check.get("expected", [])),
            "                       recovered " + " > ".join(check.get("recovered", []))
            + f"  -> same order: {check.get('same_order')}, pairs out of order by score "
            f"{check.get('pairs_out_of_order')}, per domain {check.get('domain_pairs_out_of_order')}",
            f"    {check.get('clusters')} clusters; {check.get('significant_pairs')} of "
            f"{check.get('significance_rows')} ordered pairs p < 0.05; "
            f"{sum(1 for r in check.get('rank_ranges', {}).values() if r and r[0] != r[1])} systems with a range "
            f"wider than one rank; unreliable workers {check.get('unreliable_workers')} (generated random raters "
            f"{report['build']['random_raters']}); agreement "
            + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in (check.get("agreement") or {}).items()),
        ]
        if not check.get("same_order"):
            checks.append((f"ranking {c['protocol'].upper()} {c['preset']}: pairs out of known order",
                           float(check.get("pairs_out_of_order") or 99), 0.5, ""))
    imp = report.get("import")
    if imp:
        checks.append((f"import_judgments mqm-tsv, {imp['rows']:,} rows", imp["seconds"], TARGETS["import_s"], "s"))
        checks.append(("peak memory, import subprocess (ru_maxrss)", imp["ru_maxrss_mb"], TARGETS["peak_mb"], "MB"))
        ic, ia = report["imported_compute"], report["imported_compute_analyzed"]
        lines += ["", f"  import mqm-tsv: {imp['rows']:,} rows, {imp['file_mb']:.0f} MB, {imp['judgments']:,} "
                  f"judgments: {imp['seconds']:.1f} s (importer CPU {imp['process_cpu_s']:.1f} s, PostgreSQL "
                  f"{imp['postgres_cpu_s_during']:.1f} s; other processes {imp['other_cores_during']:.2f} cores); "
                  f"peak {imp['ru_maxrss_mb']:.0f} MB",
                  f"  compute_error_spans on the imported campaign: {ic['runs'][0]['seconds']:.2f} s right after the "
                  f"import, {ia['runs'][0]['seconds']:.2f} s after VACUUM (ANALYZE) ("
                  + ", ".join(f"{k} {v:.2f}" for k, v in median_parts(ia["runs"]).items()) + "); "
                  + (f"{ic['observations']:,} observations; same order: {(ic['check'] or {}).get('same_order')}; "
                     f"{len((ic['check'] or {}).get('unreliable_workers', []))} of {(ic['check'] or {}).get('workers')}"
                     " workers flagged unreliable (no perturbed items in the file)"
                     if ic["returned"] else "returned None (no observations loaded)")]
    else:
        lines += ["", "  import mqm-tsv: not available (annotation/protocols/error_spans/mqm_tsv.py) or --skip-import"]
    report["all_met"] = all(value < target for _, value, target, _ in checks)
    lines += ["", f"  {'figure':<72} {'value':>9}  {'target':>9}  result"]
    for label, value, target, unit in checks:
        lines.append(f"  {label:<72} {value:>7.2f} {unit:<2} {'< ' + format(target, 'g'):>7} {unit:<2}  "
                     f"{'PASS' if value < target else 'FAIL'}")
    lines += [f"  all targets met: {report['all_met']}; benchmark wall time {report['wall_s']:.0f} s", "=" * 110]
    print("\n".join(lines), flush=True)


def data_args(args) -> list[str]:
    return ["--judgments", str(args.judgments), "--spans", str(args.spans), "--segments", str(args.segments),
            "--systems", str(args.systems), "--raters", str(args.raters), "--double", str(args.double),
            "--random-raters", str(args.random_raters)]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n")[0].split()))
    parser.add_argument("--judgments", type=int, default=500_000,
                        help="in all: systems x segments first ratings + --double second ratings + perturbed copies")
    parser.add_argument("--spans", type=int, default=1_500_000, help="error spans in all (0-6 a judgment)")
    parser.add_argument("--segments", type=int, default=33_000, help="segments (each judged for every system)")
    parser.add_argument("--systems", type=int, default=15, help="systems of known quality")
    parser.add_argument("--raters", type=int, default=100, help="raters")
    parser.add_argument("--random-raters", type=int, default=5, help="raters who score at random")
    parser.add_argument("--double", type=int, default=2_500, help="system outputs judged by a second rater")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each statistics configuration")
    parser.add_argument("--seed", type=int, default=1, help="of the generated data")
    parser.add_argument("--db-name", default="mteval_bench_spans", help="the separate database (dropped first)")
    parser.add_argument("--redis-db", type=int, default=5,
                        help="the Redis database (of CELERY_BROKER_URL's server) for cache and broker; emptied")
    parser.add_argument("--keep-db", action="store_true", help="leave the benchmark database for inspection")
    parser.add_argument("--skip-import", action="store_true", help="leave out the mqm-tsv import")
    parser.add_argument("--profile", action="store_true", help="cProfile one more run of each configuration")
    parser.add_argument("--quiet-limit", type=float, default=0.5,
                        help="before each timed step wait until other processes use fewer cores than this")
    parser.add_argument("--wait-quiet", type=float, default=30.0, help="longest such wait, seconds")
    parser.add_argument("--child", choices=("build", "compute", "import"), help=argparse.SUPPRESS)
    parser.add_argument("--slug", help=argparse.SUPPRESS)
    parser.add_argument("--preset", help=argparse.SUPPRESS)
    parser.add_argument("--expected", help=argparse.SUPPRESS)
    parser.add_argument("--tsv", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if min(args.judgments, args.spans, args.segments, args.systems, args.raters, args.repeats) < 1 \
            or args.raters < 2 or args.random_raters >= args.raters:
        parser.error("counts must be positive, --raters at least 2 and above --random-raters")
    return args


if __name__ == "__main__":
    sys.exit(main())

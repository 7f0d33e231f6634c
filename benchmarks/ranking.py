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
import json
import os
import shlex
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

import numpy as np
from measure import Load, calibrate, log, peak_mb, wait_until_quiet
from ranking_celery import celery_steps
from ranking_data import PER_SCREEN, Generated, generate, order_error

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TARGETS = {"core_s": 2.0, "pass_s": 60.0, "peak_mb": 1536.0}



# ---------------------------------------------------------------------------------------------
# Steps 1 and 2: the core on arrays
# ---------------------------------------------------------------------------------------------

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

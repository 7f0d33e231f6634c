#!/usr/bin/env python
"""Benchmark of the DA statistics end to end on a WMT-sized campaign, on PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/stats.py [--seed 1] [--keep-db] [--profile]

Run from the project folder. DATABASE_URL only names the server: the benchmark drops and
recreates a separate database on it (`mteval_stats_bench`, `--db-name`), migrates it, and never
touches the database of DATABASE_URL (nor Redis: its processes run Celery tasks in-process with
a local cache). The benchmark database is dropped at the end unless `--keep-db`.

1. Generates a campaign of 1,000,000 DA judgments (10,000 HITs of 100 items: 2,000 HIT designs
   done by 5 workers each; 2,000 workers, 20 systems, 3,000 segments). Each HIT has 70 system
   outputs (70 distinct segments), 10 bad references, 10 exact repeats and 10 reference
   translations (docs/methods.md §2); a BAD_REF or REPEAT row pairs with the SYSTEM row of the same
   worker, HIT, sys_id and sid. Diligent workers have a personal bias, scale and noise; ~15 %
   click at random; a few give one constant score. Written as a wmt-da file (docs/api.md) in a
   temporary folder and imported with `manage.py import_judgments FILE --format wmt-da`.
   Timed (wall clock of the command, Django start-up included). Target: < 120 s.
2. Whole task, database to stored results: the Celery task `compute_campaign_results` run
   in-process (`.apply()`), each run in a fresh subprocess: once right after the import, then
   (after a VACUUM ANALYZE, what autovacuum would soon do) `--repeats` recomputes that replace
   the stored results. `load_judgments`, `analyse`, `store` and the progress timeline are
   wrapped with timers from the outside (nothing edited) to split the time. Peak memory is the
   subprocess's own high-water mark (VmHWM; ru_maxrss is shown too, it also counts the parent's
   RSS at the fork, which is why these runs come before this process loads anything big).
   Targets: < 10 s, peak < 1.5 GB.
3. Statistics core: the judgments are loaded into arrays once (`load_judgments`), then
   `evaluation.families.direct_assessment.analysis.analyse()` is timed (median of `--repeats`). Target: < 2 s.
4. A straightforward per-judgment Python implementation of the same statistics (stats_campaign.py, with the
   generator of step 1: loops and dicts, scipy's ttest_rel per worker and mannwhitneyu per system pair, as
   Appraise's ComputeZScores does it) on a 100,000-judgment sample (1,000 whole HITs), read from the
   generated rows with the file's string ids; `analyse()` on the database arrays of the same
   HITs (and the vectorised core doing only the same work). Asserts that both give the same
   p-values per worker, the same reliable workers, the same per-system means (z and raw) and
   counts and the same significance matrix (rtol 1e-9), and prints the speed-up.

Before each timed step it waits (up to `--wait-quiet` s) for other processes to go quiet, and
it reports the cores other processes used and the hypervisor stole during each step, and a
reference workload's time (the machine's speed varies between runs). Exit status 1 if a target
is missed. A JSON report goes to benchmarks/out/stats-<time>.json. See benchmarks/README.md.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import shlex
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np
from benchlib import bench_database_url, recreate_database
from measure import (
    CpuMonitor,
    calibrate,
    log,
    own_peak_mb,
    peak_mb,
    run_measured,
    setup_django,
    vacuum_analyze,
    wait_until_quiet,
)
from stats_campaign import (
    HIT_SIZE,
    N_SEGMENTS,
    N_SYSTEMS,
    REDUNDANCY,
    Generated,
    generate,
    hit_label,
    per_judgment_statistics,
    sample_rows,
    worker_label,
    write_wmt_da,
)

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"

TARGETS = {"import_s": 120.0, "core_s": 2.0, "task_s": 10.0, "task_peak_mb": 1536.0}


# ---------------------------------------------------------------------------------------------
# Database and subprocess plumbing
# ---------------------------------------------------------------------------------------------

def bench_env(bench_url: str) -> dict:
    """Production-like settings on the benchmark database; tasks in-process, local cache (no Redis)."""
    env = dict(os.environ)
    env.update(DATABASE_URL=bench_url, DEBUG="0", SECRET_KEY="bench", ALLOWED_HOSTS="127.0.0.1,localhost",
               RESULTS_AUTO_RECOMPUTE="0", CELERY_BROKER_URL="", CELERY_RESULT_BACKEND="", CACHE_URL="",
               PYTHONUNBUFFERED="1", DJANGO_SETTINGS_MODULE="config.settings")
    return env


# ---------------------------------------------------------------------------------------------
# Child process: the whole task, database to stored results
# ---------------------------------------------------------------------------------------------

def child_whole_task(slug: str, profile: bool) -> None:
    setup_django()
    from annotation.models import Campaign
    from evaluation.families.direct_assessment import storage as da_results
    from evaluation.models import CampaignResults
    from evaluation.tasks import compute_campaign_results

    parts: dict[str, float] = {}

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                parts[name] = parts.get(name, 0.0) + time.perf_counter() - started
        return wrapper

    # compute_da (and compute_results) look these names up in their modules at call time: timers from the
    # outside, nothing edited.
    from evaluation import analyses

    da_results.load_judgments = timed("load", da_results.load_judgments)
    da_results.analyse = timed("analyse", da_results.analyse)
    da_results.store = timed("store", da_results.store)
    if hasattr(analyses, "progress_timeline"):  # the progress timeline stored with the results
        analyses.progress_timeline = timed("progress", analyses.progress_timeline)
    campaign_id = Campaign.objects.get(slug=slug).pk  # also opens the connection, as a Celery worker keeps it
    base = own_peak_mb()
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    started = time.perf_counter()
    result = compute_campaign_results.apply(args=(campaign_id,))
    total = time.perf_counter() - started
    if profiler:
        import io
        import pstats

        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(18)
        print(text.getvalue())
    if result.status != "SUCCESS":
        raise SystemExit(f"task failed: {result.status} {result.result!r}")
    header = CampaignResults.objects.get(campaign_id=campaign_id)
    print(json.dumps({
        "total_s": total, "parts_s": parts, "task_result": result.result, "recorded_seconds": header.seconds,
        "base_mb": base, "peak_mb": own_peak_mb(), "ru_maxrss_mb": peak_mb(), "profile": profile,
    }))


def same_work(data, threshold: float):
    """Only what `per_judgment_statistics` computes, with the vectorised core: z-scores, paired-t reliability,
    system scores and the significance matrix over the reliable workers (analyse() also does the table over
    all workers, Assumption A and agreement)."""
    from evaluation import stats as core
    from evaluation.families.direct_assessment.analysis import BAD_REF, REPEAT, SYSTEM, match_pairs

    _, worker = np.unique(data.annotator_id, return_inverse=True)
    n_workers = int(worker.max()) + 1
    z = core.standardise(worker, data.score, n_workers)
    ((bad, original),) = match_pairs(data, (BAD_REF,))
    rel = core.reliability(worker[bad], data.score[bad], data.score[original], n_workers, threshold=threshold)
    rows = np.flatnonzero(np.isin(data.item_type, [SYSTEM, REPEAT]) & (rel.reliable & ~z.constant)[worker])
    _, segment = np.unique(data.segment[rows], return_inverse=True)
    n_systems = len(data.system_names)
    scores = core.system_scores(data.system[rows], segment, data.score[rows], z.z[rows], n_systems)
    return core.significance(scores.translation_system, scores.translation_z, n_systems)


def compare_with_per_judgment(g: Generated, data, campaign, sample: int, seed: int, repeats: int) -> dict:
    """Step 4: the per-judgment implementation on the file rows of `sample` / 100 random HITs, analyse() on
    the same HITs' database arrays; asserts equal results, returns the timings."""
    from annotation.models import Annotator, Assignment
    from evaluation.families.direct_assessment.analysis import analyse

    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(g.design.size, size=max(1, sample // HIT_SIZE), replace=False))
    rows = sample_rows(g, chosen)
    wanted = {(hit_label(int(g.design[a])), worker_label(int(g.worker[a]))) for a in chosen.tolist()}
    assignment_ids = [pk for pk, hit, worker in Assignment.objects.filter(campaign=campaign)
                      .values_list("pk", "hit__external_id", "annotator__external_id")
                      if (hit, worker) in wanted]
    assert len(assignment_ids) == chosen.size
    # In file order (the import numbers judgments in file order), as the per-judgment code reads them:
    # floating-point sums then add up in the same order on both sides, so translation means that tie
    # in one tie in the other, and the rank-sum tests see the same ties.
    taken = np.flatnonzero(np.isin(data.assignment, assignment_ids))
    taken = taken[np.argsort(data.judgment_id[taken], kind="stable")]
    # Every per-judgment array cut to those rows; the system names, and an optional array the campaign leaves
    # None (it has no such data), stay as they are.
    subset = dataclasses.replace(data, **{f.name: value[taken] for f in dataclasses.fields(data)
                                          if f.name != "system_names" and (value := getattr(data, f.name)) is not None})
    assert len(subset) == len(rows)
    t = time.perf_counter()
    naive = per_judgment_statistics(rows, threshold=campaign.qc_threshold)
    naive_s = time.perf_counter() - t
    vector_times = []
    for _ in range(repeats):
        t = time.perf_counter()
        small = analyse(subset, test=campaign.qc_test, threshold=campaign.qc_threshold)
        vector_times.append(time.perf_counter() - t)
    vector_s = statistics.median(vector_times)
    same_times = []
    for _ in range(repeats):
        t = time.perf_counter()
        same_work(subset, campaign.qc_threshold)
        same_times.append(time.perf_counter() - t)
    same_s = statistics.median(same_times)

    labels = dict(Annotator.objects.filter(pk__in=small.annotator_ids.tolist()).values_list("pk", "external_id"))
    names = [labels[int(a)] for a in small.annotator_ids]
    np.testing.assert_allclose([naive["p_value"][w] for w in names], small.p_value, rtol=1e-9, atol=1e-300,
                               equal_nan=True, err_msg="p-values per worker")
    assert [naive["reliable"][w] for w in names] == small.reliable.tolist(), "reliable workers"
    st = small.systems["reliable"]
    for field, attr in (("mean_z", "mean_z"), ("mean_raw", "mean_raw"), ("translations", "n_segments"),
                        ("judgments", "n_judgments")):
        np.testing.assert_allclose([naive["systems"][s][field] for s in st.names], getattr(st.scores, attr),
                                   rtol=1e-9, err_msg=f"per-system {field}")
    expected = np.array([[naive["significance"][(a, b)] if a != b else np.nan for b in st.names]
                         for a in st.names])
    np.testing.assert_allclose(expected, st.significance.p, rtol=1e-9, atol=1e-300, equal_nan=True,
                               err_msg="significance matrix")
    log(f"per-judgment implementation {naive_s:.2f} s vs analyse() {vector_s:.3f} s on {len(rows):,} "
        f"judgments: same numbers, {naive_s / vector_s:.0f}x faster ({naive_s / same_s:.0f}x for the same work "
        f"only, {same_s:.3f} s)")
    return {
        "judgments": len(rows), "hits": int(chosen.size), "workers": len(names),
        "workers_with_p": int(np.isfinite(small.p_value).sum()), "reliable": int(small.reliable.sum()),
        "systems": len(st.names), "per_judgment_s": naive_s, "vectorised_runs_s": vector_times,
        "vectorised_s": vector_s, "speedup": naive_s / vector_s, "same_work_runs_s": same_times,
        "same_work_s": same_s, "same_work_speedup": naive_s / same_s,
        "checked": "p per worker, reliable flags, per-system mean z / mean raw / translations / judgments, "
                   "20x20 significance p (all rtol 1e-9)",
    }


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------

def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db-name", default="mteval_stats_bench", help="the separate database (dropped first)")
    parser.add_argument("--judgments", type=int, default=1_000_000, help="campaign size (multiple of 500)")
    parser.add_argument("--sample", type=int, default=100_000, help="judgments in the per-judgment comparison")
    parser.add_argument("--repeats", type=int, default=3,
                        help="timed runs of analyse(), and of the whole task after VACUUM ANALYZE")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep-db", action="store_true", help="leave the benchmark database for inspection")
    parser.add_argument("--profile", action="store_true", help="cProfile analyse() and a third whole-task run")
    parser.add_argument("--quiet-limit", type=float, default=0.5,
                        help="before each timed step wait until other processes use fewer cores than this")
    parser.add_argument("--wait-quiet", type=float, default=30.0, help="longest such wait, seconds")
    parser.add_argument("--child", choices=["whole-task"], help=argparse.SUPPRESS)
    parser.add_argument("--campaign", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.child == "whole-task":
        child_whole_task(args.campaign, args.profile)
        return 0

    shown = argv if argv is not None else sys.argv[1:]
    command = " ".join(["DATABASE_URL=...", ".venv/bin/python", "benchmarks/stats.py", *map(shlex.quote, shown)])
    server_url = os.environ.get("DATABASE_URL", "")
    bench_url, dev_db = bench_database_url(server_url, args.db_name, "benchmarks/stats.py")
    env = bench_env(bench_url)
    report: dict = {"command": command, "database": args.db_name, "cpus": os.cpu_count(), "busy_before": {}}
    OUT.mkdir(parents=True, exist_ok=True)
    started_all = time.perf_counter()
    try:
        log(f"preparing database {args.db_name!r} (dropped and recreated; {dev_db!r} is not touched)")
        recreate_database(server_url, args.db_name)
        run_measured([sys.executable, "manage.py", "migrate", "--noinput"], env, args.db_name)

        t = time.perf_counter()
        g = generate(args.judgments, args.seed)
        n_workers = g.worker_type.size
        report["campaign"] = {
            "judgments": g.n_judgments, "hits": int(g.design.size), "hit_designs": int(g.system.shape[0]),
            "workers": int(n_workers), "random_clickers": int((g.worker_type == 1).sum()),
            "constant_clickers": int((g.worker_type == 2).sum()), "systems": N_SYSTEMS, "segments": N_SEGMENTS,
        }
        with tempfile.TemporaryDirectory(prefix="stats-bench-") as tmp:
            path = Path(tmp) / "wmt-da.txt"
            write_wmt_da(path, g)
            size_mb = path.stat().st_size / 2**20
            log(f"generated and wrote {g.n_judgments:,} judgments ({size_mb:.0f} MB wmt-da file, "
                f"{time.perf_counter() - t:.1f} s, not timed)")

            # -- 1. import -------------------------------------------------------------------
            report["busy_before"]["import"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
            report["calibration"] = {"before import": calibrate()}
            log("importing with manage.py import_judgments ...")
            out, wall, rss, cpu = run_measured([sys.executable, "manage.py", "import_judgments", str(path),
                                                "--format", "wmt-da", "--name", "stats benchmark"], env, args.db_name)
        imported = json.loads(out.strip().splitlines()[-1])
        report["import"] = {"seconds": wall, "peak_mb": rss, "file_mb": size_mb, **cpu, **imported}
        log(f"imported {imported['judgments']:,} judgments into {imported['campaign']!r} in {wall:.1f} s "
            f"(peak {rss:.0f} MB; CPU: importer {cpu['process_cpu_s']:.1f} s, PostgreSQL "
            f"{cpu['postgres_cpu_s']:.1f} s; other processes {cpu['other_cores']:.2f} cores, stolen "
            f"{cpu['steal_cores']:.2f})")

        # -- 3. the whole task, each run in a fresh process ------------------------------------
        # Run from here, before this process loads a million judgments itself: a child's ru_maxrss starts
        # from its parent's RSS at the fork (the child reports its own VmHWM as well).
        report["task"] = []
        child = [sys.executable, str(Path(__file__).resolve()), "--child", "whole-task",
                 "--campaign", imported["campaign"]]

        def whole_task(run: str) -> None:
            report["busy_before"][f"task {run}"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
            out, wall, rss, cpu = run_measured(child, env, args.db_name)
            result = json.loads(out.strip().splitlines()[-1])
            result.update(run=run, process_wall_s=wall, wait4_peak_mb=rss, **cpu)
            report["task"].append(result)
            log(f"whole task ({run}): {parts_text(result)}; peak {result['peak_mb']:.0f} MB "
                f"(ru_maxrss {result['ru_maxrss_mb']:.0f} MB); other processes {cpu['other_cores']:.2f} cores, "
                f"stolen {cpu['steal_cores']:.2f}")

        whole_task("right after the import")
        # What autovacuum would soon do anyway: table statistics for the planner, hint bits and the
        # visibility map set, so that later runs neither wait for nor race with it.
        t = time.perf_counter()
        vacuum_analyze(bench_url)
        report["vacuum_analyze_s"] = time.perf_counter() - t
        log(f"VACUUM (ANALYZE) of the benchmark database: {report['vacuum_analyze_s']:.1f} s (not timed in a step)")
        for k in range(args.repeats):
            whole_task(f"recompute {k + 1} after VACUUM ANALYZE")
        if args.profile:
            out, _, _, _ = run_measured(child + ["--profile"], env, args.db_name)
            print("\n".join(out.strip().splitlines()[:-1]))

        os.environ.update(env)
        setup_django()
        from annotation.models import Annotator, Campaign, Judgment
        from evaluation.families.direct_assessment.analysis import analyse
        from evaluation.families.direct_assessment.storage import load_judgments
        from evaluation.models import SystemResult, WorkerResult

        campaign = Campaign.objects.get(slug=imported["campaign"])
        stored = Judgment.objects.filter(campaign=campaign).count()
        assert stored == g.n_judgments == imported["judgments"], (stored, imported)

        # -- 2. the statistics core on arrays --------------------------------------------------
        t = time.perf_counter()
        data = load_judgments(campaign)
        report["core_load_s"] = time.perf_counter() - t
        assert len(data) == g.n_judgments
        report["busy_before"]["core"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
        report["calibration"]["before core"] = calibrate()
        times = []
        monitor = CpuMonitor(args.db_name)
        monitor.start()
        for _ in range(args.repeats):
            t = time.perf_counter()
            analysis = analyse(data, test=campaign.qc_test, threshold=campaign.qc_threshold)
            times.append(time.perf_counter() - t)
        load = monitor.stop(0.0, sum(times))
        report["core"] = {"runs_s": times, "median_s": statistics.median(times), "first_s": times[0],
                          "other_cores": load["other_cores"], "steal_cores": load["steal_cores"]}
        log(f"analyse() on {len(data):,} judgments: " + ", ".join(f"{x:.2f}" for x in times) + " s")
        if args.profile:
            import cProfile
            import io
            import pstats

            profiler = cProfile.Profile()
            profiler.runcall(analyse, data, test=campaign.qc_test, threshold=campaign.qc_threshold)
            text = io.StringIO()
            pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(15)
            print(text.getvalue())
        summary = analysis.summary
        caught = ~analysis.reliable  # annotator ids -> worker codes of the generator
        labels = dict(Annotator.objects.filter(pk__in=analysis.annotator_ids.tolist()).values_list("pk",
                                                                                                     "external_id"))
        code = np.array([int(labels[int(a)][3:]) for a in analysis.annotator_ids])
        report["quality"] = {
            "reliable_workers": summary["reliable_workers"], "workers": summary["workers"],
            "constant_workers": summary["constant_workers"],
            "random_clickers_caught": float(caught[g.worker_type[code] == 1].mean()),
            "diligent_reliable": float(analysis.reliable[g.worker_type[code] == 0].mean()),
            "top5": [analysis.systems["reliable"].names[i] for i in analysis.systems["reliable"].clusters.order[:5]],
            "clusters": int(analysis.systems["reliable"].clusters.cluster.max()),
        }

        # the stored results equal the in-process analysis
        stored_z = dict(SystemResult.objects.filter(campaign=campaign, workers="reliable")
                        .values_list("system", "mean_z"))
        table = analysis.systems["reliable"]
        for i, name in enumerate(table.names):
            assert math.isclose(stored_z[name], table.scores.mean_z[i], rel_tol=1e-12), name
        assert WorkerResult.objects.filter(campaign=campaign).count() == n_workers

        # -- 4. per-judgment implementation vs the vectorised core on a sample ----------------
        report["busy_before"]["comparison"] = wait_until_quiet(args.quiet_limit, args.wait_quiet)
        report["comparison"] = compare_with_per_judgment(g, data, campaign, args.sample, args.seed + 1, args.repeats)
        from django.db import connection

        connection.close()
    finally:
        if not args.keep_db:
            recreate_database(server_url, args.db_name, create=False)
    report["wall_s"] = time.perf_counter() - started_all
    print_summary(report)
    path = OUT / f"stats-{datetime.now():%Y%m%d-%H%M%S}.json"
    path.write_text(json.dumps(report, indent=2, default=float))
    log(f"report written to {path.relative_to(ROOT)}")
    return 0 if report["all_met"] else 1


def parts_text(task: dict) -> str:
    parts = task["parts_s"]
    text = " + ".join(f"{name} {seconds:.2f}" for name, seconds in parts.items())
    return f"{task['total_s']:.2f} s = {text} + other {task['total_s'] - sum(parts.values()):.2f}"


def print_summary(report: dict) -> None:
    c, imp, core, cmp_ = report["campaign"], report["import"], report["core"], report["comparison"]
    tasks = report["task"]
    cold, warm = tasks[0], [t["total_s"] for t in tasks[1:]]
    checks = [
        (f"import {c['judgments']:,}-row wmt-da file", imp["seconds"], TARGETS["import_s"], "s"),
        ("statistics core, analyse() (median)", core["median_s"], TARGETS["core_s"], "s"),
        ("whole task, right after the import", cold["total_s"], TARGETS["task_s"], "s"),
        (f"whole task, recompute (median of {len(warm)})", statistics.median(warm), TARGETS["task_s"], "s"),
        ("whole task peak memory (VmHWM, max)", max(t["peak_mb"] for t in tasks), TARGETS["task_peak_mb"], "MB"),
    ]
    report["all_met"] = all(value < target for _, value, target, _ in checks)
    q = report["quality"]
    lines = [
        "",
        "=" * 100,
        "DA statistics benchmark (benchmarks/stats.py)",
        f"  command: {report['command']}",
        f"  database: {report['database']} (separate; dropped and recreated), {report['cpus']} CPUs; other "
        "processes' load before each step (cores): "
        + ", ".join(f"{k} {v:.2f}" for k, v in report["busy_before"].items()),
        "  machine speed, reference workload (2M-step Python loop / 2M-float np.sort; lower is faster, compare "
        "between runs): " + "; ".join(f"{k} {v['python_loop_s']:.3f} s / {v['numpy_sort_s']:.3f} s"
                                          for k, v in report["calibration"].items()),
        f"  campaign: {c['judgments']:,} judgments, {c['hits']:,} HITs of 100 ({c['hit_designs']:,} designs x "
        f"{REDUNDANCY} workers), {c['workers']:,} workers ({c['random_clickers']} random, "
        f"{c['constant_clickers']} constant clickers), {c['systems']} systems, {c['segments']:,} segments",
        f"  reliability: {q['reliable_workers']}/{q['workers']} workers reliable; random clickers caught "
        f"{q['random_clickers_caught']:.1%}; diligent reliable {q['diligent_reliable']:.1%}; constant "
        f"{q['constant_workers']}; {q['clusters']} clusters; top 5 {', '.join(q['top5'])}",
        "",
        f"  import (manage.py import_judgments, {imp['file_mb']:.0f} MB file, wall incl. start-up)"
        f"   {imp['seconds']:7.2f} s   peak {imp['peak_mb']:.0f} MB",
        f"      CPU: importer {imp['process_cpu_s']:.1f} s, PostgreSQL {imp['postgres_cpu_s']:.1f} s; meanwhile other "
        f"processes used {imp['other_cores']:.2f} cores and the hypervisor stole {imp['steal_cores']:.2f}",
        f"  load_judgments, in-process (one query -> arrays)                {report['core_load_s']:7.2f} s",
        "  analyse() on the arrays, runs: " + ", ".join(f"{x:.3f}" for x in core["runs_s"])
        + f" s; median {core['median_s']:.3f} s; other processes {core['other_cores']:.2f} cores, stolen "
        f"{core['steal_cores']:.2f}",
    ]
    for t in tasks:
        lines.append(
            f"  whole task, {t['run']}: {parts_text(t)}; peak RSS {t['peak_mb']:.0f} MB (ru_maxrss "
            f"{t['ru_maxrss_mb']:.0f}; {t['base_mb']:.0f} after start-up); other processes {t['other_cores']:.2f} "
            f"cores, stolen {t['steal_cores']:.2f}"
        )
        if t is cold:
            lines.append(f"  VACUUM (ANALYZE) of the benchmark database, between these runs: "
                         f"{report['vacuum_analyze_s']:.1f} s")
    lines += [
        f"  per-judgment Python vs analyse() on {cmp_['judgments']:,} judgments ({cmp_['hits']} HITs, "
        f"{cmp_['workers']} workers, {cmp_['workers_with_p']} with a p-value): {cmp_['per_judgment_s']:.2f} s vs "
        f"{cmp_['vectorised_s']:.3f} s -> speed-up {cmp_['speedup']:.0f}x (the same work only: "
        f"{cmp_['same_work_s']:.3f} s, {cmp_['same_work_speedup']:.0f}x); identical numbers: {cmp_['checked']}",
        "",
        f"  {'target':<46}{'value':>12}{'limit':>12}   ",
    ]
    for name, value, target, unit in checks:
        lines.append(f"  {name:<46}{value:>10.2f} {unit:<2}{target:>9.0f} {unit:<2} "
                     f"{'PASS' if value < target else 'MISSED'}")
    lines += [f"  whole benchmark run: {report['wall_s']:.0f} s", "=" * 100]
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    sys.exit(main())

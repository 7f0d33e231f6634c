"""The free-HIT lookup of a hand-out (annotation/services/assignment.py `_free_hits`) on large campaigns:
EXPLAIN ANALYZE of each statement it runs, and its milliseconds per call, for campaigns of 10,000 and 100,000 HITs.

Run from the project folder with DATABASE_URL pointing at PostgreSQL:
`.venv/bin/python benchmarks/free_hit_lookup.py [--hits 10000 100000] [--redundancy 3] [--idle 200]`.
It drops and recreates its own database (`--db-name`, default `mteval_free_hit_bench`) on that server and fills
each campaign with bulk SQL (no HIT items: the lookup never reads them): every HIT holds one finished
assignment, the first 40 % a second one, and `--idle` HITs (default 200, whatever the size: abandoned tabs) an
open assignment idle past the timeout (a place that counts as free). It prints one JSON line per campaign size:
the statements' planning and execution milliseconds from EXPLAIN ANALYZE, their plans' top nodes, and the median
milliseconds of a whole lookup.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.benchlib import bench_database_url, recreate_database  # noqa: E402


def build(hits: int, redundancy: int, idle: int):
    """A campaign of `hits` HITs, filled as the module docstring says, by set-based SQL."""
    from django.db import connection
    from django.utils import timezone

    from annotation.models import Annotator, Assignment, Campaign, Hit

    campaign = Campaign.objects.create(name=f"Free HIT lookup {hits}", slug=f"free-hit-{hits}",
                                       protocol="adequacy", redundancy=redundancy, status="active")
    hit_t, ann_t, asg_t = Hit._meta.db_table, Annotator._meta.db_table, Assignment._meta.db_table
    second = int(hits * 0.4)
    workers = hits + second + idle
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(f"INSERT INTO {hit_t} (campaign_id, number, size, external_id, exposure) "
                       "SELECT %s, n, 100, '', '{}'::jsonb FROM generate_series(1, %s) n", [campaign.pk, hits])
        cursor.execute(f"INSERT INTO {ann_t} (external_id, source, native_language, country, created_at) "
                       "SELECT %s || n, 'prolific', '', '', %s FROM generate_series(1, %s) n",
                       [f"w{hits}-", now, workers])
        # worker k: HIT k (finished) for k ≤ hits; then a second finished place on the first 40 %; then idle ones
        cursor.execute(
            f"INSERT INTO {asg_t} (campaign_id, hit_id, annotator_id, token, status, position, started_at, "
            "last_activity_at, completed_at, completion_code, browser_key, entry) "
            "SELECT %s, h.id, a.id, md5(a.external_id), CASE WHEN k <= %s THEN 'completed' ELSE 'active' END, 0, "
            "%s, CASE WHEN k <= %s THEN %s ELSE %s - interval '1 day' END, NULL, '', '', '{}'::jsonb "
            f"FROM generate_series(1, %s) k JOIN {ann_t} a ON a.external_id = %s || k "
            f"JOIN {hit_t} h ON h.campaign_id = %s AND h.number = CASE WHEN k <= %s THEN k "
            "WHEN k <= %s THEN k - %s ELSE (k - %s) * 97 %% %s + 1 END",
            [campaign.pk, hits + second, now, hits + second, now, now, workers, f"w{hits}-", campaign.pk, hits,
             hits + second, hits, hits + second, hits])
        cursor.execute("ANALYZE")
    return campaign


def explain(sql: str, params) -> dict:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
    node, top = plan["Plan"], []
    while node and len(top) < 4:
        top.append(node["Node Type"] + (f" {node['Index Name']}" if "Index Name" in node else ""))
        node = (node.get("Plans") or [None])[0]
    scans, stack = [], [plan["Plan"]]
    while stack:  # every scan of a table or an index: rows returned and removed by a filter, over its loops
        node = stack.pop()
        if "Relation Name" in node:
            read = node["Actual Rows"] * node.get("Actual Loops", 1) + node.get("Rows Removed by Filter", 0)
            scans.append(f"{node['Node Type']} {node.get('Index Name') or node['Relation Name']}: {read}")
        stack += node.get("Plans", [])
    return {"planning_ms": round(plan["Planning Time"], 3), "execution_ms": round(plan["Execution Time"], 3),
            "plan": " > ".join(top), "rows_read": scans}


def measure(campaign, calls: int) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from annotation.services.assignment import _free_hits, idle_cutoff

    cutoff = idle_cutoff(campaign)
    with CaptureQueriesContext(connection) as captured:
        found = _free_hits(campaign, [], cutoff)
    statements = []
    for query in captured.captured_queries:
        raw = query["sql"]
        statements.append({"sql": raw[:120], **explain_captured(raw)})
    millis = []
    for _ in range(calls):
        started = time.perf_counter()
        _free_hits(campaign, [], idle_cutoff(campaign))
        millis.append((time.perf_counter() - started) * 1000)
    return {"hits": campaign.hits.count(), "found": len(found), "first": found[0][0] if found else None,
            "lookup_ms_median": round(statistics.median(millis), 3), "statements": statements}


def explain_captured(sql: str) -> dict:
    """EXPLAIN ANALYZE of a captured statement (Django captures it with its parameters already in place)."""
    return explain(sql, None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hits", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--redundancy", type=int, default=3)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--idle", type=int, default=200, help="HITs with a place idle past the timeout")
    parser.add_argument("--db-name", default="mteval_free_hit_bench")
    args = parser.parse_args()
    url, _ = bench_database_url(os.environ.get("DATABASE_URL", ""), args.db_name, "free_hit_lookup.py")
    original = os.environ["DATABASE_URL"]
    recreate_database(original, args.db_name)
    os.environ.update(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="1")
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connections

    try:
        call_command("migrate", verbosity=0)
        for hits in args.hits:
            print(json.dumps(measure(build(hits, args.redundancy, args.idle), args.calls)), flush=True)
    finally:
        connections.close_all()
        recreate_database(original, args.db_name, create=False)


if __name__ == "__main__":
    main()

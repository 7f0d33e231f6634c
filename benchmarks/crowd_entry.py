"""Crowd entry (`GET /c/<slug>/start/`) under a large campaign: SQL statements, cache calls and time per entry.

Run from the project folder with DATABASE_URL pointing at PostgreSQL:
`.venv/bin/python benchmarks/crowd_entry.py [--annotators 2000] [--hits 500] [--entries 200]`.
It drops and recreates its own database (`--db-name`, default `mteval_entry_bench`) on that server, builds a
campaign of `--hits` HITs whose places are partly held by `--annotators` workers (half finished, half open),
then enters it in-process (Django's test client, every protection on, one address per entry) as new workers
and as returning ones from their own browser, and prints statements, cache calls and milliseconds per entry.
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.benchlib import bench_database_url, recreate_database  # noqa: E402


def campaign_file(path: Path) -> None:
    lines = [json.dumps({"doc_id": f"d{i // 7}", "seg_id": i, "source": f"source {i}", "reference": f"ref {i}",
                         "systems": {"A": f"a output {i}", "B": f"b output {i}"}}) for i in range(35)]
    path.write_text("\n".join(lines) + "\n")


def build(args):
    """A campaign of `args.hits` HITs (the extra ones without items: entry never reads items) with
    `args.annotators` workers holding places, one per worker, half of them finished."""
    from django.core.management import call_command
    from django.db import connection
    from django.utils import timezone

    from annotation.models import Annotator, Assignment, Campaign, Hit

    path = Path(f"/tmp/crowd-entry-{os.getpid()}.jsonl")
    campaign_file(path)
    call_command("import_campaign", str(path), "--name", "Entry bench", "--protocol", "adequacy",
                 "--redundancy", str(args.redundancy), stdout=open(os.devnull, "w"))
    path.unlink()
    campaign = Campaign.objects.get(name="Entry bench")
    have = list(campaign.hits.values_list("number", flat=True))
    Hit.objects.bulk_create([Hit(campaign=campaign, number=max(have) + 1 + i, size=100)
                             for i in range(args.hits - len(have))])
    hits = list(campaign.hits.values_list("pk", flat=True))
    annotators = Annotator.objects.bulk_create([Annotator(external_id=f"old{i}", source="prolific")
                                                for i in range(args.annotators)])
    now = timezone.now()
    rows = []
    for i, annotator in enumerate(annotators):
        done = i % 2 == 0
        rows.append(Assignment(campaign=campaign, hit_id=hits[i % len(hits)], annotator=annotator,
                               status=Assignment.Status.COMPLETED if done else Assignment.Status.ACTIVE,
                               completion_code="CODE" if done else "", completed_at=now if done else None,
                               entry_ip=f"10.{i // 65536 % 256}.{i // 256 % 256}.{i % 256}",
                               browser_key=secrets.token_urlsafe(32), entry={"worker_id": f"old{i}"}))
    Assignment.objects.bulk_create(rows)
    with connection.cursor() as cursor:  # the statistics autovacuum would gather soon after such a bulk load
        cursor.execute("ANALYZE")
    return campaign, rows


class CountingCache:
    """Counts the default cache's calls (django-ratelimit's bookkeeping)."""

    def __init__(self):
        from django.core.cache import cache

        self.calls = 0
        for name in ("get", "set", "add", "incr", "get_many", "set_many", "delete", "touch"):
            original = getattr(cache, name)

            def counted(*a, _original=original, **k):
                self.calls += 1
                return _original(*a, **k)

            setattr(cache, name, counted)


def measure(label: str, requests, show: bool = False) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    cache = CountingCache()
    statements, calls, millis, statuses = [], [], [], {}
    for client, path, params in requests:
        before = cache.calls
        with CaptureQueriesContext(connection) as queries:
            started = time.perf_counter()
            response = client.get(path, params)
            millis.append((time.perf_counter() - started) * 1000)
        statements.append(len(queries))
        calls.append(cache.calls - before)
        statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
    report = {"entries": len(millis), "status": statuses, "statements_mean": statistics.mean(statements),
              "statements_max": max(statements), "cache_calls_mean": statistics.mean(calls),
              "ms_p50": round(statistics.median(millis), 2), "ms_mean": round(statistics.mean(millis), 2),
              "ms_p95": round(sorted(millis)[int(0.95 * len(millis)) - 1], 2)}
    print(label, json.dumps(report))
    if show:  # the last entry's statements, with their milliseconds
        for query in queries.captured_queries:
            print(f"  {float(query['time']) * 1000:7.2f} ms  {query['sql'][:160]}")
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--annotators", type=int, default=2000)
    parser.add_argument("--hits", type=int, default=500)
    parser.add_argument("--redundancy", type=int, default=5)
    parser.add_argument("--entries", type=int, default=200)
    parser.add_argument("--db-name", default="mteval_entry_bench")
    parser.add_argument("--keep", action="store_true", help="keep the database afterwards (to EXPLAIN queries)")
    parser.add_argument("--show", action="store_true", help="print the statements of the last entry of each kind")
    args = parser.parse_args()
    url, _ = bench_database_url(os.environ.get("DATABASE_URL", ""), args.db_name, "crowd_entry.py")
    original = os.environ["DATABASE_URL"]
    recreate_database(original, args.db_name)
    os.environ.update(DATABASE_URL=url, DJANGO_SETTINGS_MODULE="config.settings", DEBUG="1",
                      ALLOWED_HOSTS="testserver", CACHE_KEY_PREFIX=f"entry-bench-{secrets.token_hex(4)}")
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from annotation.views.pages import BROWSER_COOKIE

    try:
        call_command("migrate", verbosity=0)
        campaign, rows = build(args)
        path = f"/c/{campaign.slug}/start/"
        fresh = [(Client(REMOTE_ADDR=f"172.16.{i // 256}.{i % 256}"), path, {"PROLIFIC_PID": f"new{i}"})
                 for i in range(args.entries)]
        measure("new workers:", fresh, args.show)
        back = []
        for row in rows[1:2 * args.entries:2]:  # open HITs, from the browser that holds them
            client = Client(REMOTE_ADDR=row.entry_ip)
            client.cookies[BROWSER_COOKIE] = row.browser_key
            back.append((client, path, {"PROLIFIC_PID": row.annotator.external_id}))
        measure("returning workers:", back, args.show)
    finally:
        from django.db import connections

        connections.close_all()
        if not args.keep:
            recreate_database(original, args.db_name, create=False)


if __name__ == "__main__":
    main()

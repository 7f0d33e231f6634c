"""Times the import of a large campaign file (issue: 10,000 segments × 10 systems in well under a minute).

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/import_campaign.py [--segments 10000] [--systems 10]

Runs against the database in DATABASE_URL (SQLite by default) inside a transaction that is
rolled back, so nothing is left behind. Prints the seconds for parsing and validating, for
planning the HITs and for the whole import, and the rows written.
"""
import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")

import django  # noqa: E402

django.setup()

from django.db import transaction  # noqa: E402

from annotation.models import HitItem, SystemOutput  # noqa: E402
from annotation.services.campaign_import import import_campaign, parse_campaign_lines  # noqa: E402

WORDS = "the a of to in and is that for it with as was on be by at this from are or have an they which".split()


def make_lines(segments: int, systems: int) -> list[bytes]:
    lines = []
    for i in range(segments):
        def text(salt, i=i):
            return " ".join(WORDS[(i * 7 + salt * 13 + k * 5) % len(WORDS)] for k in range(12 + (i + salt) % 15))
        lines.append(json.dumps({
            "doc_id": f"doc-{i // 20}", "seg_id": i % 20 + 1, "source": text(1), "reference": text(2),
            "systems": {f"system-{s:02d}": text(s + 3) for s in range(systems)},
        }).encode() + b"\n")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=10000)
    parser.add_argument("--systems", type=int, default=10)
    args = parser.parse_args()
    lines = make_lines(args.segments, args.systems)
    started = time.perf_counter()
    parse_campaign_lines(lines, requires_reference=True)
    parsed = time.perf_counter() - started

    class Rollback(Exception):
        pass

    started = time.perf_counter()
    try:
        with transaction.atomic():
            result = import_campaign(lines, name="benchmark import", protocol="adequacy", redundancy=3, seed=1)
            total = time.perf_counter() - started
            outputs = SystemOutput.objects.filter(campaign=result.campaign).count()
            items = HitItem.objects.filter(hit__campaign=result.campaign).count()
            raise Rollback
    except Rollback:
        pass
    engine = django.db.connection.vendor
    print(f"import benchmark ({engine}): {args.segments} segments × {args.systems} systems")
    print(f"  parse + validate:  {parsed:6.2f} s")
    print(f"  whole import:      {total:6.2f} s  ({outputs} outputs, {result.hits} HITs, {items} items)")
    print("  target: well under 60 s")


if __name__ == "__main__":
    main()

"""Time and memory of importing a large campaign file (issue "Hardening" 7: a 50 MB file took 58 s and 985 MB).

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/import_campaign.py [--megabytes 50] [--systems 10]
    .venv/bin/python benchmarks/import_campaign.py --segments 10000     # a number of segments instead

Writes a campaign file of the given size (short segments of 12-26 words, `--systems` translations each) to
a temporary folder, then imports it in a child process, so that the child's peak resident memory is the
import's (and the Django process it runs in; its resident memory before the import is printed too). The
import runs against the database in DATABASE_URL (SQLite by default) inside a transaction that is rolled
back, so nothing is left behind; on PostgreSQL the foreign keys, which are checked at commit, are checked
before the rollback (SET CONSTRAINTS ALL IMMEDIATE) and timed as the commit. Prints the seconds of each
stage the import reports, the rows written and the peak resident memory.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = "the a of to in and is that for it with as was on be by at this from are or have an they which".split()


def text(i: int, salt: int) -> str:
    return " ".join(WORDS[(i * 7 + salt * 13 + k * 5) % len(WORDS)] for k in range(12 + (i + salt) % 15))


def line(i: int, systems: int) -> bytes:
    return json.dumps({
        "doc_id": f"doc-{i // 20}", "seg_id": i % 20 + 1, "source": text(i, 1), "reference": text(i, 2),
        "systems": {f"system-{s:02d}": text(i, s + 3) for s in range(systems)},
    }).encode() + b"\n"


def write_file(path: Path, systems: int, megabytes: float | None, segments: int | None) -> tuple[int, int]:
    """Write the file a line at a time; (segments, bytes)."""
    size, i = 0, 0
    with path.open("wb") as out:
        while (segments is not None and i < segments) or (segments is None and size < megabytes * 1024 * 1024):
            data = line(i, systems)
            out.write(data)
            size += len(data)
            i += 1
    return i, size


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def child(path: str, protocol: str, redundancy: int) -> None:
    """Import `path` and print what it took, as JSON."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.db import connection, transaction

    from annotation.models import HitItem, SystemOutput
    from annotation.services.campaign_import import import_campaign

    baseline = rss_mb()
    stages: dict[str, float] = {}
    started = last = time.perf_counter()
    current = None

    def progress(stage: str, lines_read: int | None = None) -> None:
        nonlocal last, current
        name = stage.split(":")[0]
        if name != current:
            now = time.perf_counter()
            if current is not None:
                stages[current] = stages.get(current, 0.0) + now - last
            current, last = name, now

    class Rollback(Exception):
        pass

    try:
        with transaction.atomic():
            result = import_campaign(path, name="benchmark import", protocol=protocol, redundancy=redundancy, seed=1,
                                     progress=progress)
            progress("commit (foreign keys checked)")
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            progress("end")
            total = time.perf_counter() - started
            outputs = SystemOutput.objects.filter(campaign=result.campaign).count()
            items = HitItem.objects.filter(hit__campaign=result.campaign).count()
            raise Rollback
    except Rollback:
        pass
    print(json.dumps({"engine": connection.vendor, "baseline_mb": baseline, "peak_mb": peak_mb(), "total": total,
                      "stages": stages, "hits": result.hits, "outputs": outputs, "items": items}))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=float, default=50.0, help="the file's size (default 50)")
    parser.add_argument("--segments", type=int, help="a number of segments instead of a size")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--protocol", default="adequacy")
    parser.add_argument("--redundancy", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.protocol, args.redundancy)
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "campaign.jsonl"
        segments, size = write_file(path, args.systems, args.megabytes, args.segments)
        started = time.perf_counter()
        run = subprocess.run([sys.executable, __file__, "--child", str(path), "--protocol", args.protocol,
                              "--redundancy", str(args.redundancy)], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - started
    if run.returncode:
        sys.exit(run.stderr)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"import benchmark ({report['engine']}, {args.protocol}): {size / 2**20:.1f} MB, {segments} segments × "
          f"{args.systems} systems")
    for stage, seconds in report["stages"].items():
        print(f"  {stage + ':':32} {seconds:6.2f} s")
    print(f"  {'whole import:':32} {report['total']:6.2f} s  ({report['outputs']} outputs, {report['hits']} HITs, "
          f"{report['items']} items); child process {wall:.1f} s with Django's start-up")
    print(f"  peak resident memory:            {report['peak_mb']:6.0f} MB (the process before the import: "
          f"{report['baseline_mb']:.0f} MB)")
    print("  target: well under 1 GB for 50 MB (before: 1.35 GB and 138 s here, 985 MB and 58 s in the issue)")


if __name__ == "__main__":
    main()

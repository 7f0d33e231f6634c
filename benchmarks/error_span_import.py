"""Speed of importing a large MQM file (`mqm-tsv`, docs/api.md §5.4): target 1,500,000 rows in under 2 minutes on
PostgreSQL.

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/error_span_import.py [--rows 1500000]

Writes a synthetic file in Google's layout (documents of 20 segments, 10 systems, 3 raters per translation;
about a third of the ratings `No-error`, the others 1-4 errors marked in the target, some in the source, some
without marks), migrates the database of DATABASE_URL (SQLite by default), then imports the file in a child
process inside a transaction that is rolled back, so nothing is left behind; on PostgreSQL the foreign keys,
checked at commit, are checked before the rollback (SET CONSTRAINTS ALL IMMEDIATE) and timed as the commit.
Prints the seconds of parsing, storing and the commit (wall time, and the CPU time of the importing process and
of its PostgreSQL backend), rows/s, and the peak resident memory.
"""
import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = ("the a of to in and is that for it with as was on be by at this from are or have an they which über "
         "Straße naïve café 東京 😀").split()
HEADER = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\tcomment\n"
CATEGORIES = ("Accuracy/Mistranslation", "Fluency/Grammar", "Fluency/Punctuation", "Style/Awkward", "Terminology",
              "Accuracy/Omission", "Non-translation!", "Source error")
SEVERITIES = ("Major", "Minor", "minor", "Neutral")


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(10, 30)))


def marked(text: str, rng: random.Random) -> str:
    start = rng.randrange(len(text))
    end = min(len(text), start + rng.randint(1, 12))
    return f"{text[:start]}<v>{text[start:end]}</v>{text[end:]}"


def write_file(path: Path, rows: int, seed: int = 1) -> int:
    """Write about `rows` rows (whole segments: one more segment may run over); the number written."""
    rng = random.Random(seed)
    written, segment = 0, 0
    systems = [f"system-{s:02d}" for s in range(10)]
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        while written < rows:
            doc, position = f"doc-{segment // 20}", segment % 20 + 1
            source = sentence(rng)
            segment += 1
            for system in systems:
                target = sentence(rng)
                for rater in rng.sample(range(12), 3):
                    head = f"{system}\t{doc}\t{position}\t{segment}\trater{rater}\t"
                    if rng.random() < 0.35:
                        out.write(f"{head}{source}\t{target}\tNo-error\tNo-error\t\n")
                        written += 1
                        continue
                    for _ in range(rng.randint(1, 4)):
                        category, severity = rng.choice(CATEGORIES), rng.choice(SEVERITIES)
                        where = rng.random()
                        if where < 0.1:
                            shown = (marked(source, rng), target)
                        elif where < 0.15:
                            shown = (source, target)
                        else:
                            shown = (source, marked(target, rng))
                        out.write(f"{head}{shown[0]}\t{shown[1]}\t{category}\t{severity}\t\n")
                        written += 1
    return written


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux


def child(path: str) -> None:
    """Import `path` and print what it took, as JSON."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DEBUG", "1")
    import django

    django.setup()
    from django.db import connection, transaction

    from annotation.models import Judgment
    from annotation.protocols.error_spans.mqm_tsv import parse_mqm_tsv

    class Rollback(Exception):
        pass

    backend = None
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            backend = cursor.fetchone()[0]

    def cpu() -> tuple[float, float]:
        """CPU seconds of this process and of its PostgreSQL backend (0 elsewhere)."""
        return time.process_time(), backend_cpu(backend)

    marks = [("start", time.perf_counter(), cpu())]
    with open(path, "rb") as handle:
        parsed = parse_mqm_tsv(handle)
    marks.append(("parse", time.perf_counter(), cpu()))
    try:
        with transaction.atomic():
            result = parsed.store("benchmark import")
            marks.append(("store", time.perf_counter(), cpu()))
            if connection.vendor == "postgresql":
                with connection.cursor() as cursor:
                    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            marks.append(("commit", time.perf_counter(), cpu()))
            judgments = Judgment.objects.filter(campaign=result.campaign).count()
            raise Rollback
    except Rollback:
        pass
    stages = {name: {"wall": wall - marks[i][1], "python": used[0] - marks[i][2][0],
                     "database": used[1] - marks[i][2][1]}
              for i, (name, wall, used) in enumerate(marks[1:])}
    print(json.dumps({"engine": connection.vendor, "stages": stages, "total": marks[-1][1] - marks[0][1],
                      "judgments": judgments, "peak_mb": peak_mb()}))


def backend_cpu(pid: int | None) -> float:
    if pid is None:
        return 0.0
    with open(f"/proc/{pid}/stat", "rb") as handle:
        stat = handle.read()
    fields = stat[stat.rindex(b")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_500_000)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, check=True,
                   env={**os.environ, "DEBUG": os.environ.get("DEBUG", "1")})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "mqm.tsv"
        rows = write_file(path, args.rows)
        size = path.stat().st_size
        run = subprocess.run([sys.executable, __file__, "--child", str(path)], capture_output=True, text=True,
                             cwd=ROOT)
    if run.returncode:
        sys.exit(run.stderr)
    report = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"mqm-tsv import ({report['engine']}): {rows:,} rows, {size / 2**20:.0f} MB, "
          f"{report['judgments']:,} judgments")
    print(f"  {'':10} {'wall':>7}   {'CPU: Python':>11} {'database':>9}")
    for stage, figures in report["stages"].items():
        print(f"  {stage + ':':10} {figures['wall']:7.1f} s {figures['python']:9.1f} s {figures['database']:7.1f} s")
    print(f"  {'total:':10} {report['total']:7.1f} s = {rows / report['total']:,.0f} rows/s "
          f"(target: 1,500,000 rows in 120 s = 12,500 rows/s)")
    print(f"  load average of the machine afterwards: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs "
          "(a wall time above the CPU times is time spent waiting for a CPU or the disk)")
    print(f"  peak resident memory: {report['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()

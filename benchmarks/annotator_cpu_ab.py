"""Two code versions' in-process CPU per annotator request, alternating: benchmarks/annotator_cpu.py run with each
checkout's project code (`--code`) in turn, `--rounds` times, on the same benchmark database (benchmarks/README.md, "Session 12, in process").

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/annotator_cpu_ab.py /path/to/old-checkout . \\
        [--rounds 6] [--blocks 8] [--block 20] [--db-name mteval_bench_cpu] [--redis-db 9]

Each run is a fresh process (a few seconds: `--blocks` blocks of `--block` POSTs and GETs); alternating spreads
whatever else the machine runs over both versions alike. Prints, per checkout, the median and the range over the
rounds of the Python CPU (µs per POST and per GET) and of the PostgreSQL backend's CPU, as JSON. An old checkout
needs its own `.env` (its settings read it); `git archive <commit> | tar -x -C DIR` makes one.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIGURES = ("post_us", "get_us", "post_backend_us", "get_backend_us")


def run_once(checkout: Path, args) -> dict:
    """One run of this annotator_cpu.py with `checkout`'s project code, as its JSON line."""
    command = [sys.executable, str(HERE / "annotator_cpu.py"), "--code", str(checkout), "--db-name", args.db_name,
               "--redis-db", str(args.redis_db), "--blocks", str(args.blocks), "--block", str(args.block)]
    out = subprocess.run(command, cwd=checkout, env=os.environ, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["this"]


def summary(runs: list[dict]) -> dict:
    return {name: {"median": statistics.median(run[name] for run in runs),
                   "min": min(run[name] for run in runs), "max": max(run[name] for run in runs)}
            for name in FIGURES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs=2, type=Path, help="the old and the new checkout")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--blocks", type=int, default=8)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--db-name", default="mteval_bench_cpu")
    parser.add_argument("--redis-db", type=int, default=9)
    args = parser.parse_args()
    checkouts = [path.resolve() for path in args.checkouts]
    runs: dict[Path, list[dict]] = {path: [] for path in checkouts}
    for round_ in range(args.rounds):
        for path in checkouts if round_ % 2 == 0 else checkouts[::-1]:  # neither always goes first
            runs[path].append(run_once(path, args))
    print(json.dumps({"rounds": args.rounds, "blocks": args.blocks, "block": args.block}))
    for path, found in runs.items():
        print(json.dumps({"code": str(path), **summary(found)}))


if __name__ == "__main__":
    main()

"""Two code versions' in-process CPU per annotator request, interleaved block by block: two processes of
benchmarks/annotator_cpu.py, each with one checkout's project code (`--code`), run in lock step (`--lockstep`): a
block of POSTs in one, then in the other, then a block of GETs in each, and so on, the first of each pair taking
turns (benchmarks/README.md, "Session 12, in process").

    DATABASE_URL=postgres://... .venv/bin/python benchmarks/annotator_cpu_ab.py /path/to/old-checkout . \\
        [--rounds 6] [--blocks 4] [--block 20] [--db-name mteval_bench_cpu] [--redis-db 9]

On a shared machine the CPU a request costs drifts with what else runs; blocks a few milliseconds apart see the
same machine, so the two versions are compared pair by pair. A round is `--blocks` pairs of blocks of `--block`
requests each; per checkout it prints the median over the rounds and their range of the Python CPU (µs per POST,
per GET) and of the PostgreSQL backend's CPU (its 10 ms ticks summed over a round), and the median of the rounds'
differences (new - old), as JSON lines. An old checkout needs its own `.env` (its settings read it);
`git archive <commit> | tar -x -C DIR` makes one. Both processes share the benchmark database (one campaign).
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


class Bench:
    """One annotator_cpu.py process in lock step, with `checkout`'s project code."""

    def __init__(self, checkout: Path, args):
        command = [sys.executable, str(HERE / "annotator_cpu.py"), "--code", str(checkout), "--lockstep",
                   "--db-name", args.db_name, "--redis-db", str(args.redis_db), "--block", str(args.block)]
        self.process = subprocess.Popen(command, cwd=checkout, env=os.environ, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, text=True, bufsize=1)
        while (line := self.process.stdout.readline().strip()) != "ready":
            if not line and self.process.poll() is not None:
                raise SystemExit(f"annotator_cpu.py with {checkout} stopped before it was ready")

    def block(self, step: str) -> dict:
        self.process.stdin.write(step + "\n")
        return json.loads(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkouts", nargs=2, type=Path, help="the old and the new checkout")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--blocks", type=int, default=4)
    parser.add_argument("--block", type=int, default=20)
    parser.add_argument("--db-name", default="mteval_bench_cpu")
    parser.add_argument("--redis-db", type=int, default=9)
    args = parser.parse_args()
    checkouts = [path.resolve() for path in args.checkouts]
    benches = [Bench(path, args) for path in checkouts]
    rounds: list[list[dict]] = [[], []]  # per checkout, per round: the figures
    try:
        for round_ in range(args.rounds):
            sums = [{"post_us": [], "get_us": [], "post_backend_us": 0.0, "get_backend_us": 0.0} for _ in benches]
            for pair in range(args.blocks):
                order = [0, 1] if (round_ + pair) % 2 == 0 else [1, 0]  # neither always goes first
                for step in ("post", "get"):
                    for k in order:
                        figures = benches[k].block(step)
                        sums[k][f"{step}_us"].append(figures["us"])
                        sums[k][f"{step}_backend_us"] += figures["backend_s"]
            calls = args.blocks * args.block
            for k, found in enumerate(sums):
                rounds[k].append({"post_us": statistics.median(found["post_us"]),
                                  "get_us": statistics.median(found["get_us"]),
                                  "post_backend_us": found["post_backend_us"] / calls * 1e6,
                                  "get_backend_us": found["get_backend_us"] / calls * 1e6})
    finally:
        for bench in benches:
            bench.close()
    print(json.dumps({"rounds": args.rounds, "blocks": args.blocks, "block": args.block}))
    for path, found in zip(checkouts, rounds, strict=True):
        print(json.dumps({"code": str(path), **{name: {"median": round(statistics.median(r[name] for r in found)),
                                                       "min": round(min(r[name] for r in found)),
                                                       "max": round(max(r[name] for r in found))}
                                                for name in FIGURES}}))
    differences = {name: [new[name] - old[name] for old, new in zip(*rounds, strict=True)] for name in FIGURES}
    print(json.dumps({"new - old": {name: {"median": round(statistics.median(found)), "min": round(min(found)),
                                           "max": round(max(found))} for name, found in differences.items()}}))


if __name__ == "__main__":
    main()

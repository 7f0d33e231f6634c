"""Benchmark of the pure statistics core (evaluation.stats) on a WMT-sized campaign.

Synthetic campaign: 1,000,000 judgments in 10,000 HITs of 100 items done by
2,000 workers (5 HITs each; 15 % careless random clickers), 20 systems,
3,000 segments.  Item types as in docs/methods.md §2: 70 % system output, 10 %
bad reference, 10 % exact repeat, 10 % reference translation.

Times each step of the core (data generation excluded) and reports peak
memory (resource.getrusage high-water mark).  Target: whole core < 2 s.

    .venv/bin/python benchmarks/stats_core.py [--seed N] [--extras]

``--extras`` also times the per-worker loop variants (Wilcoxon, Welch,
Mann-Whitney, Appraise, Assumption A), which are not part of the target.
"""

from __future__ import annotations

import argparse
import pathlib
import resource
import sys
import time

import numpy as np

N_WORKERS = 2_000
N_SYSTEMS = 20
N_SEGMENTS = 3_000
N_HITS = 10_000
SYS, BAD, REP, REF = 0, 1, 2, 3


def generate(seed: int) -> dict[str, np.ndarray]:
    """One row per judgment; pairs linked by row index (vectorised, no loops)."""
    rng = np.random.default_rng(seed)
    h = N_HITS
    hit_worker = np.arange(h) % N_WORKERS
    careless = rng.random(N_WORKERS) < 0.15
    bias = rng.normal(0, 10, N_WORKERS)
    quality = np.repeat(np.linspace(75, 45, N_SYSTEMS // 2), 2)  # pairs of near-equal systems
    quality[1::2] -= 0.3
    difficulty = rng.normal(0, 8, N_SEGMENTS)

    system = rng.integers(0, N_SYSTEMS, (h, 70))
    segment = rng.integers(0, N_SEGMENTS, (h, 70))
    truth = quality[system] + difficulty[segment]
    w = np.repeat(hit_worker[:, None], 70, axis=1)

    def rate(true, worker):
        careful = np.clip(np.rint(true + bias[worker] + rng.normal(0, 12, true.shape)), 0, 100)
        random = rng.integers(0, 101, true.shape).astype(float)
        return np.where(careless[worker], random, careful)

    sys_score = rate(truth, w)
    # bad references of items 0-9, repeats of items 10-19 (same worker, HIT)
    bad_score = rate(truth[:, :10] - 25, w[:, :10])
    rep_score = np.where(
        careless[w[:, 10:20]],
        rng.integers(0, 101, (h, 10)).astype(float),
        np.clip(np.rint(sys_score[:, 10:20] + rng.normal(0, 8, (h, 10))), 0, 100),
    )
    ref_score = rate(np.full((h, 10), 85.0), w[:, :10])

    worker = np.concatenate([w.ravel(), w[:, :10].ravel(), w[:, 10:20].ravel(), w[:, :10].ravel()])
    score = np.concatenate([sys_score.ravel(), bad_score.ravel(), rep_score.ravel(), ref_score.ravel()])
    kind = np.concatenate([np.full(70 * h, SYS), np.full(10 * h, BAD), np.full(10 * h, REP), np.full(10 * h, REF)])
    n_sys = 70 * h
    # row index of the original / first judgment of each bad reference / repeat
    orig_bad = (np.arange(h)[:, None] * 70 + np.arange(10)[None, :]).ravel()
    orig_rep = (np.arange(h)[:, None] * 70 + np.arange(10, 20)[None, :]).ravel()
    sys_codes = np.concatenate([system.ravel(), system[:, :10].ravel(), system[:, 10:20].ravel(),
                                np.zeros(10 * h, dtype=np.int64)])
    seg_codes = np.concatenate([segment.ravel(), segment[:, :10].ravel(), segment[:, 10:20].ravel(),
                                segment[:, :10].ravel()])
    return {
        "worker": worker, "score": score, "kind": kind, "system": sys_codes, "segment": seg_codes,
        "bad_rows": np.arange(n_sys, n_sys + 10 * h), "bad_orig": orig_bad,
        "rep_rows": np.arange(n_sys + 10 * h, n_sys + 20 * h), "rep_first": orig_rep,
        "careless": careless,
    }


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--extras", action="store_true", help="also time the per-worker loop variants")
    args = parser.parse_args()

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
    import evaluation.stats as S

    t0 = time.perf_counter()
    d = generate(args.seed)
    gen_s = time.perf_counter() - t0
    n = d["score"].size
    print(f"generated {n:,} judgments, {N_WORKERS:,} workers, {N_SYSTEMS} systems, "
          f"{N_SEGMENTS:,} segments in {gen_s:.2f} s (not counted); peak so far {peak_mb():.0f} MB")

    timings: list[tuple[str, float]] = []

    def step(name, fn):
        t = time.perf_counter()
        out = fn()
        timings.append((name, time.perf_counter() - t))
        return out

    worker, score, kind = d["worker"], d["score"], d["kind"]
    z = step("standardise (1M judgments)", lambda: S.standardise(worker, score, N_WORKERS)).z
    bw = worker[d["bad_rows"]]
    bad, orig = score[d["bad_rows"]], score[d["bad_orig"]]
    rel = step("reliability paired-t (100k pairs)", lambda: S.reliability(bw, bad, orig, N_WORKERS))

    def scores_step():
        keep = ((kind == SYS) | (kind == REP)) & rel.reliable[worker]
        return S.system_scores(d["system"][keep], d["segment"][keep], score[keep], z[keep], N_SYSTEMS)

    sc = step("filter + system_scores (800k rows)", scores_step)
    sig = step("significance (20x20 rank-sum)",
               lambda: S.significance(sc.translation_system, sc.translation_z, N_SYSTEMS))
    cl = step("clusters", lambda: S.clusters(sc.mean_z, sig.p))

    def agreement_step():
        first, rep = score[d["rep_first"]], score[d["rep_rows"]]
        ok = rel.reliable[worker[d["rep_rows"]]]
        diff = S.score_differences(first[ok], rep[ok])
        k5 = S.cohen_kappa(S.bin_equal_width(first[ok], 5), S.bin_equal_width(rep[ok], 5), 5)
        zf, zr = z[d["rep_first"]], z[d["rep_rows"]]
        finite = ok & np.isfinite(zf) & np.isfinite(zr)
        ref = z[np.isfinite(z)]
        kz = S.cohen_kappa(S.bin_percentile(zf[finite], 5, ref), S.bin_percentile(zr[finite], 5, ref), 5)
        return diff, k5, kz

    diff, k5, kz = step("agreement (diffs, kappa raw + z)", agreement_step)

    total = sum(t for _, t in timings)
    print()
    for name, t in timings:
        print(f"  {name:<38} {t * 1000:8.1f} ms")
    print(f"  {'TOTAL core':<38} {total * 1000:8.1f} ms   (target < 2000 ms)")
    print(f"  peak memory (ru_maxrss)                {peak_mb():8.0f} MB")
    print()
    caught = (~rel.reliable[d["careless"]]).mean()
    print(f"reliable workers: {rel.reliable.mean():.1%} (careless ones caught: {caught:.1%}); "
          f"top of ranking: {cl.order[:5].tolist()}; clusters: {cl.cluster.max()}")
    print(f"same-judge |diff| mean {diff.mean:.1f} sd {diff.sd:.1f}; kappa 5 bins raw {k5.kappa:.3f}, "
          f"z {kz.kappa:.3f}")

    if args.extras:
        print("\nextras (per-worker loops; not in the target):")
        rw = worker[d["rep_rows"]]
        first, rep = score[d["rep_first"]], score[d["rep_rows"]]
        pair = np.concatenate([np.arange(bad.size), np.arange(bad.size)])
        extras = [
            ("reliability wilcoxon", lambda: S.reliability(bw, bad, orig, N_WORKERS, test="wilcoxon")),
            ("reliability_welch welch", lambda: S.reliability_welch(rw, first, rep, bw, bad, orig, N_WORKERS)),
            ("reliability_welch mann-whitney",
             lambda: S.reliability_welch(rw, first, rep, bw, bad, orig, N_WORKERS, test="mann-whitney")),
            ("reliability_appraise",
             lambda: S.reliability_appraise(np.concatenate([bw, bw]), pair,
                                            np.r_[np.ones(bad.size, bool), np.zeros(bad.size, bool)],
                                            np.concatenate([bad, orig]), N_WORKERS, bad.size)),
            ("assumption_a", lambda: S.assumption_a(rw, first, rep, N_WORKERS)),
        ]
        for name, fn in extras:
            t = time.perf_counter()
            fn()
            print(f"  {name:<38} {(time.perf_counter() - t) * 1000:8.1f} ms")


if __name__ == "__main__":
    main()

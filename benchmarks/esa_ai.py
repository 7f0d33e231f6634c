"""Simulation study: ESA^AI, skipping items an automatic system finds error-free (docs/methods.md#esa-ai).

    .venv/bin/python benchmarks/esa_ai.py [--repetitions 1000] [--seed 1] [--segments 1500]
                                          [--recall 0.7] [--precision 0.9] [--rates 1,0.5,0.3,0.2,0.1]

Eight systems translate the same segments.  Each translation is error-free with its system's probability
(0.60, 0.58, 0.55, 0.55, 0.50, 0.45, 0.40, 0.40) and then has quality 95; otherwise its quality is the system's
error mean (72, 71, 70, 70, 66, 64, 60, 60) with sd 15; a segment effect (sd 5) is shared by all systems.  True
system scores: 85.8, 84.9, 83.8, 83.8, 80.5, 77.9, 74.0, 74.0 -- adjacent gaps 0.9 to 3.9 points and two
pairs of equal systems, which measure false separation.

The crowd: 40 judges, each item scored once by a random judge: quality + the judge's bias (sd 5) + noise
(sd 8), rounded and clipped to 0-100.  The automatic system says "error-free" with a known `--recall` (share
of the error-free translations it calls error-free) and `--precision` (share of its "error-free" calls that
are error-free); it calls error-free some translations with errors at the rate that gives that precision.

Designs, on the same translations, crowd and AI verdicts: every item judged (rate 1), and each AI-clean
item sent at rate r (a Bernoulli draw per item).  Analysis as the platform does it
(`evaluation.stats.esa_ai.ipw_scores`): the post-stratified Hájek score per system and the paired two-sided
z-test at alpha = 0.05; also the naive mean of the judged items (no correction), for its bias.

Measures per design: budget saved (items not sent / all items); bias of the corrected and of the naive
scores against full judging's scores of the same run (the mean difference over repetitions, largest over
systems; full judging itself differs from the true scores by the judges' rounding and clipping at 100, the
same in every design); the root mean square of that difference (the noise the skipping adds); correct
separations (pairs of different true scores significant in the right
direction), false separations (the two equal pairs significant, with a Wilson 95 % interval), wrong-way
separations, and Kendall's tau between the design's ranking and the full-judging ranking of the same run.

Pure numpy (no Django, no database).  Prints a table; writes JSON to benchmarks/out/esa-ai-*.json.
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluation.stats.esa_ai import ipw_scores, kendall_tau  # noqa: E402

ERROR_FREE = np.array([0.60, 0.58, 0.55, 0.55, 0.50, 0.45, 0.40, 0.40])
ERROR_MEAN = np.array([72.0, 71.0, 70.0, 70.0, 66.0, 64.0, 60.0, 60.0])
CLEAN_QUALITY, ERROR_SD, SEGMENT_SD = 95.0, 15.0, 5.0
JUDGES, JUDGE_BIAS_SD, JUDGE_NOISE_SD = 40, 5.0, 8.0
TRUE_SCORE = ERROR_FREE * CLEAN_QUALITY + (1 - ERROR_FREE) * ERROR_MEAN
ALPHA = 0.05
RATES = (1.0, 0.5, 0.3, 0.2, 0.1)
N_SYSTEMS = TRUE_SCORE.size
PAIRS = [(i, j) for i in range(N_SYSTEMS) for j in range(i + 1, N_SYSTEMS)]
EQUAL = [(i, j) for i, j in PAIRS if TRUE_SCORE[i] == TRUE_SCORE[j]]
DIFFERENT = [(i, j) for i, j in PAIRS if TRUE_SCORE[i] != TRUE_SCORE[j]]


def false_clean_rate(recall: float, precision: float) -> np.ndarray:
    """P(AI says error-free | the translation has errors) per system, for the given recall and precision."""
    rate = recall * ERROR_FREE * (1 - precision) / (precision * (1 - ERROR_FREE))
    if (rate > 1).any():
        raise ValueError("that recall and precision cannot both hold at these error-free rates")
    return rate


def world(rng: np.random.Generator, n_segments: int, recall: float, precision: float):
    """One repetition: the judged score of every item (as if all were judged), and the AI's verdicts."""
    shape = (n_segments, N_SYSTEMS)
    error_free = rng.random(shape) < ERROR_FREE
    quality = np.where(error_free, CLEAN_QUALITY, ERROR_MEAN + ERROR_SD * rng.standard_normal(shape))
    quality = quality + SEGMENT_SD * rng.standard_normal((n_segments, 1))
    judge = rng.integers(0, JUDGES, size=shape)
    bias = JUDGE_BIAS_SD * rng.standard_normal(JUDGES)
    human = np.clip(np.round(quality + bias[judge] + JUDGE_NOISE_SD * rng.standard_normal(shape)), 0, 100)
    ai_clean = np.where(error_free, rng.random(shape) < recall,
                        rng.random(shape) < false_clean_rate(recall, precision))
    return human, ai_clean


def separations(score: np.ndarray, p: np.ndarray) -> dict:
    significant = np.nan_to_num(p, nan=1.0) < ALPHA
    right = [significant[i, j] and (score[i] - score[j]) * (TRUE_SCORE[i] - TRUE_SCORE[j]) > 0 for i, j in DIFFERENT]
    wrong = [significant[i, j] and (score[i] - score[j]) * (TRUE_SCORE[i] - TRUE_SCORE[j]) < 0 for i, j in DIFFERENT]
    return {"correct": float(np.mean(right)), "wrong_way": float(np.mean(wrong)),
            "false": [bool(significant[i, j]) for i, j in EQUAL]}


def repetition(seed: int, rep: int, n_segments: int, recall: float, precision: float, rates) -> dict:
    rng = np.random.default_rng([seed, rep])
    human, ai_clean = world(rng, n_segments, recall, precision)
    draw = rng.random(human.shape)  # one uniform per item: a smaller rate sends a subset of a larger one's items
    out = {}
    full_score = None
    for rate in rates:
        sent = ~ai_clean | (draw < rate)
        result = ipw_scores(np.where(sent, human, np.nan), ai_clean)
        if full_score is None and rate == 1.0:
            full_score = result.score
        out[rate] = {"saved": float(1 - sent.mean()), "score": result.score, "naive": result.naive,
                     **separations(result.score, result.p)}
    if full_score is None:  # without a full-judging design, compare with every item's judged score
        full_score = human.mean(axis=0)
    for rate in rates:
        out[rate]["full"] = full_score
        out[rate]["tau_full"] = kendall_tau(out[rate]["score"], full_score)
    return out


def _wilson(k: float, n: int, z: float = 1.96) -> list[float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def summarise(reps: list[dict], rates) -> dict:
    designs = {}
    for rate in rates:
        rows = [r[rate] for r in reps]
        full = np.array([r["full"] for r in rows])
        score = np.array([r["score"] for r in rows]) - full
        naive = np.array([r["naive"] for r in rows]) - full
        false = np.array([r["false"] for r in rows]).ravel()
        designs[str(rate)] = {
            "rate": rate, "saved": float(np.mean([r["saved"] for r in rows])),
            "bias_max": float(np.abs(score.mean(axis=0)).max()),
            "naive_bias_max": float(np.abs(naive.mean(axis=0)).max()),
            "rms_vs_full": float(np.sqrt((score ** 2).mean())),
            "correct": float(np.mean([r["correct"] for r in rows])),
            "false": float(false.mean()), "false_ci95": _wilson(float(false.sum()), false.size),
            "wrong_way": float(np.mean([r["wrong_way"] for r in rows])),
            "tau_full": float(np.nanmean([r["tau_full"] for r in rows])),
        }
    return {"repetitions": len(reps), "true_scores": [round(float(t), 2) for t in TRUE_SCORE], "designs": designs,
            "recommended": recommend(designs)}


def recommend(designs: dict) -> float | None:
    """The smallest rate (the most saved) that saves at least 20 %, keeps false separation within alpha and no
    higher than full judging's (within the Monte Carlo error: the lower Wilson bound at most alpha, the rate at
    most full judging's upper bound), and loses at most 0.05 of full judging's correct-separation rate."""
    full = designs.get("1.0")
    fits = [d["rate"] for d in designs.values() if d["saved"] >= 0.20 and d["false_ci95"][0] <= ALPHA
            and (full is None or (d["false"] <= full["false_ci95"][1] and d["correct"] >= full["correct"] - 0.05))]
    return min(fits) if fits else None


def print_table(summary: dict, seconds: float, args) -> None:
    print(f"\n{summary['repetitions']} repetitions, {args.segments} segments x {N_SYSTEMS} systems, AI recall "
          f"{args.recall}, precision {args.precision}, alpha {ALPHA}, {seconds:.0f} s")
    print(f"true scores: {summary['true_scores']}")
    print(f"\n{'rate':>5} {'saved':>7} {'bias':>6} {'naive bias':>10} {'RMS':>6} {'correct':>8} "
          f"{'false sep. (95% CI)':>22} {'wrong':>6} {'tau vs full':>11}")
    for d in summary["designs"].values():
        lo, hi = d["false_ci95"]
        print(f"{d['rate']:>5} {100 * d['saved']:>6.1f}% {d['bias_max']:>6.2f} {d['naive_bias_max']:>10.2f} "
              f"{d['rms_vs_full']:>6.2f} {d['correct']:>8.3f} {d['false']:>8.3f} ({lo:.3f}-{hi:.3f}) "
              f"{d['wrong_way']:>6.3f} {d['tau_full']:>11.3f}")
    print(f"\nrecommended rate (>= 20 % saved, false separation within alpha and full judging's, correct "
          f"separation at most 0.05 below full judging's): "
          f"{summary['recommended']}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--segments", type=int, default=1500)
    parser.add_argument("--recall", type=float, default=0.7)
    parser.add_argument("--precision", type=float, default=0.9)
    parser.add_argument("--rates", default=",".join(map(str, RATES)))
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "out"), help="folder for the JSON ('' for none)")
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",")]
    if args.repetitions < 2 or args.segments < 10 or not all(0 < r <= 1 for r in rates):
        parser.error("need --repetitions >= 2, --segments >= 10 and rates in (0, 1]")
    try:
        false_clean_rate(args.recall, args.precision)
    except ValueError as exc:
        parser.error(str(exc))
    started = time.perf_counter()
    reps = [repetition(args.seed, rep, args.segments, args.recall, args.precision, rates)
            for rep in range(args.repetitions)]
    seconds = time.perf_counter() - started
    summary = summarise(reps, rates)
    summary.update(seconds=round(seconds, 1), segments=args.segments, recall=args.recall, precision=args.precision)
    print_table(summary, seconds, args)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        path = out / f"esa-ai-{time.strftime('%Y%m%d-%H%M%S')}.json"
        path.write_text(json.dumps(summary, indent=1))
        print(f"\nJSON: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

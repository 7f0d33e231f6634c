"""Simulation study: adaptive allocation with a stopping rule against a fixed design (docs/methods.md §12.2).

    .venv/bin/python benchmarks/adaptive.py [--repetitions 1000] [--seed 1] [--budget 100] [--segment-sd 10] [--jobs 2]

A simulated crowd rates 8 systems of known quality (0-100 scale): 78, 76, 73, 73, 63, 60, 48, 34 --
adjacent gaps 2, 3, 0, 10, 3, 12, 14 points: three close pairs, three far ones, and one pair of equal
systems, which measures false separation.  A translation's quality is its system's mean plus a segment
effect (sd 10, shared by all systems) and a translation effect (sd 12); 2,000 segments, each system's
outputs handed out in a random order of segments, each segment once before any twice.

Workers arrive one after another and each wants a geometric number of HITs (mean 4).  80 % are careful:
score = 50 + bias + scale (quality - 50) + noise, rounded and clipped to 0-100 (bias sd 10, scale
0.6-1.3, noise sd 6-16: z-scoring matters); 20 % are careless and score uniformly at random.  A HIT has
100 items with the DA structure (docs/methods.md §2): 70 system outputs, 10 bad references (30 points
worse than the first 10 outputs), 10 exact repeats (of outputs 11-20), 10 references (quality 85 plus
the segment effect).  The live gate (docs/methods.md §12.1) is on in every design: after each HIT, a
worker with at least 5 bad-reference pairs whose one-sided paired t-test gives p >= 0.05 gets no more
HITs.

Analysis at a look and at the end, as the platform does it: z-scores per worker over all their items
(`evaluation.stats.standardise`), reliability by the paired t-test (`evaluation.stats.reliability`,
p < 0.05), then the reliable workers' system outputs and repeats, as per-translation means
(`segments`), go to `evaluation.stats.adaptive.interim_look`, with the batch of each judgment's HIT as
its stratum (`strata`) and the earlier looks' `pair_information`.

* fixed: a uniform allocation (each HIT's 70 outputs spread evenly over the systems, remainders carried
  over), one test at the end at alpha = 0.05 (the same rank-sum z, critical value 1.96).  Evaluated at
  several budgets (prefixes of one run).
* adaptive: 10 batches of a tenth of the budget, the first uniform; a look after each batch
  (O'Brien-Fleming-type spending, each pair's own information history); the next batch's outputs
  follow the look's weights; stop when every adjacent pair is decided or the budget is spent.
  Variants: unstratified (batches not used as strata: the pooled rank-sum test and plain means, biased
  because the batches change the mix each worker's z-scores are taken over), Pocock-type spending, a
  floor of 20 % of each batch spread over all systems, futility (pairs with predictive power < 0.10
  from half the budget on are given up; the run stops when every pair is separated or given up), and
  the common boundary for every pair instead of each pair's own information history.

Measures per design: the correct-separation rate (per pair of adjacent true quality levels: every
system of the better level ends in a strictly better cluster than every system of the worse one), the
false-separation rate of the equal pair (they end in different clusters; must stay <= alpha), wrong-way
separations, HITs spent.  Saving: the fixed budget that matches the adaptive design's correct-separation
rate (linear interpolation between the fixed budgets) against the HITs adaptive spent on average, with a
bootstrap interval over repetitions.  The gate: in a run without the gate, the share of paid HITs done
by workers after the HIT at which the gate would have stopped them (careless and careful separately).

Pure numpy (no Django, no database).  Prints a table; writes JSON to benchmarks/out/adaptive-*.json.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import sys
import time
from multiprocessing import Pool

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from adaptive_crowd import (  # noqa: E402
    ALPHA,
    EQUAL_PAIR,
    FIXED_SCALES,
    LEVEL_OF,
    LEVELS,
    N_BATCHES,
    N_SYSTEMS,
    SEGMENT_SD,
    SYSTEM_MEANS,
    Campaign,
    Crowd,
)

from evaluation.stats.adaptive import interim_look  # noqa: E402

VARIANTS = {  # name: (short name for --variants, options of run_adaptive)
    "adaptive": ("adaptive", {}),
    "adaptive, futility 0.10": ("futility", {"futility": 0.10}),
    "adaptive, unstratified": ("unstratified", {"stratified": False}),
    "adaptive, Pocock": ("pocock", {"rule": "pocock"}),
    "adaptive, floor 0.2": ("floor", {"floor": 0.2}),
    "adaptive, common boundary": ("common", {"own_information": False}),
}


# --------------------------------------------------------------------------
# outcomes


def outcome(look) -> dict:
    """Correct separations per pair of adjacent levels, the equal pair's false separation, wrong-way separations."""
    cluster = np.zeros(N_SYSTEMS, dtype=np.int64)
    cluster[look.order] = np.concatenate([[0], np.cumsum(look.separated)])
    correct = []
    for upper in range(LEVELS.size - 1):
        above, below = cluster[LEVEL_OF == upper], cluster[LEVEL_OF == upper + 1]
        correct.append(bool(above.max() < below.min()))
    a, b = EQUAL_PAIR
    better = LEVEL_OF[:, None] < LEVEL_OF[None, :]
    wrong_way = int(np.sum(better & (cluster[:, None] > cluster[None, :])))
    return {"correct": correct, "false": bool(cluster[a] != cluster[b]), "wrong_way": wrong_way}


def final_test(campaign: Campaign, hits: int) -> dict:
    scores, systems, segments, _ = campaign.counted(hits)
    return outcome(interim_look(scores, systems, N_SYSTEMS, [1.0], alpha=ALPHA, segments=segments))


def run_fixed(crowd: Crowd, budget: int) -> list[dict]:
    budgets = [max(N_BATCHES, round(budget * s)) for s in FIXED_SCALES]
    campaign = Campaign(crowd, max(budgets), gate=True, seed=0)
    uniform = np.full(N_SYSTEMS, 1.0 / N_SYSTEMS)
    results = []
    for b in budgets:
        while campaign.hits < b:
            campaign.run_hit(uniform)
        results.append({"budget": b, "hits": b, **final_test(campaign, b)})
    return results


def run_adaptive(crowd: Crowd, budget: int, rule="obrien-fleming", futility=0.0, floor=0.0,
                 own_information=True, stratified=True, n_batches=N_BATCHES) -> dict:
    campaign = Campaign(crowd, budget, gate=True, seed=0)
    weights = np.full(N_SYSTEMS, 1.0 / N_SYSTEMS)
    fractions, history, separated, futile = [], [], set(), set()
    look = None
    for k in range(1, n_batches + 1):
        target = round(budget * k / n_batches)
        campaign.batch = k - 1
        while campaign.hits < target:
            campaign.run_hit(weights)
        scores, systems, segments, batches = campaign.counted(campaign.hits)
        fractions.append(campaign.hits / budget)
        look = interim_look(
            scores, systems, N_SYSTEMS, fractions, alpha=ALPHA, rule=rule, separated_before=separated,
            segments=segments, strata=batches if stratified else None,
            earlier_information=history if own_information and history else None,
            floor=floor, futility=futility, futile_before=futile,
        )
        history.append(look.pair_information)
        separated |= {tuple(p) for p in look.pairs[look.separated].tolist()}
        futile |= {tuple(p) for p in look.pairs[look.futile].tolist()}
        weights = look.weights
        if look.done:
            break
    return {"hits": campaign.hits, "looks": len(fractions), "stopped_early": bool(look.done and campaign.hits < budget),
            **outcome(look)}


def run_gate_study(crowd: Crowd, budget: int) -> dict:
    """Without the gate: paid HITs done by workers after the HIT at which the gate would have stopped them."""
    campaign = Campaign(crowd, budget, gate=False, seed=0)
    uniform = np.full(N_SYSTEMS, 1.0 / N_SYSTEMS)
    while campaign.hits < budget:
        campaign.run_hit(uniform)
    careless = np.array(campaign.careless)
    gated_at = np.array(campaign.gated_at)
    worker = campaign.hit_worker[:budget]
    after = (gated_at[worker] >= 0) & (np.arange(budget) > gated_at[worker])
    seen = np.zeros(len(careless), dtype=bool)
    seen[worker] = True
    return {
        "hits": budget,
        "careless_hits": int(careless[worker].sum()),
        "careless_hits_after_detection": int((after & careless[worker]).sum()),
        "careful_hits_after_false_gate": int((after & ~careless[worker]).sum()),
        "careless_workers": int((careless & seen).sum()),
        "careless_workers_detected": int((careless & seen & (gated_at >= 0)).sum()),
        "careful_workers": int((~careless & seen).sum()),
        "careful_workers_gated": int((~careless & seen & (gated_at >= 0)).sum()),
    }


def repetition(args) -> dict:
    seed, rep, budget, segment_sd, variants = args
    crowd = Crowd(seed * 1_000_003 + rep, segment_sd)
    out = {"fixed": run_fixed(crowd, budget), "gate": run_gate_study(crowd, budget)}
    for name in variants:
        out[name] = run_adaptive(crowd, budget, **VARIANTS[name][1])
    return out


# --------------------------------------------------------------------------
# summary


def _rate(rows, key="correct"):
    return float(np.mean([np.mean(r[key]) for r in rows]))


def matched_budget(fixed_budgets, fixed_rates, rate):
    """The fixed budget reaching ``rate`` (linear interpolation; NaN beyond the largest budget tried)."""
    rates = np.maximum.accumulate(np.asarray(fixed_rates))
    if rate > rates[-1]:
        return math.nan
    if rate <= rates[0]:
        return float(fixed_budgets[0]) if rate == rates[0] else math.nan
    return float(np.interp(rate, rates, fixed_budgets))


def summarise(reps: list[dict], budget: int, seed: int, variants: list[str], n_boot: int = 400) -> dict:
    n = len(reps)
    budgets = [r["budget"] for r in reps[0]["fixed"]]
    correct_fixed = np.array([[np.mean(f["correct"]) for f in r["fixed"]] for r in reps])  # reps x budgets
    fixed = [{"budget": b, "correct": float(correct_fixed[:, i].mean()),
              "false": float(np.mean([r["fixed"][i]["false"] for r in reps])),
              "wrong_way": float(np.mean([r["fixed"][i]["wrong_way"] for r in reps]))}
             for i, b in enumerate(budgets)]
    boot = np.random.default_rng(seed).integers(0, n, (n_boot, n))
    designs = {}
    for name in variants:
        rows = [r[name] for r in reps]
        correct = np.array([np.mean(r["correct"]) for r in rows])
        hits = np.array([r["hits"] for r in rows], dtype=float)
        false = np.array([r["false"] for r in rows], dtype=float)
        match = matched_budget(budgets, correct_fixed.mean(0), correct.mean())
        saves = []
        for idx in boot:
            m = matched_budget(budgets, correct_fixed[idx].mean(0), correct[idx].mean())
            saves.append(1 - hits[idx].mean() / m if np.isfinite(m) else math.nan)
        saves = np.array(saves)
        designs[name] = {
            "correct": float(correct.mean()),
            "per_level_pair": np.mean([r["correct"] for r in rows], axis=0).round(4).tolist(),
            "false": float(false.mean()),
            "false_ci95": _wilson(false.sum(), n),
            "wrong_way": float(np.mean([r["wrong_way"] for r in rows])),
            "hits": float(hits.mean()),
            "looks": float(np.mean([r["looks"] for r in rows])),
            "stopped_early": float(np.mean([r["stopped_early"] for r in rows])),
            "fixed_budget_matched": match,
            "saving": 1 - hits.mean() / match if np.isfinite(match) else math.nan,
            "saving_ci95": [float(np.nanpercentile(saves, 2.5)), float(np.nanpercentile(saves, 97.5))]
            if np.isfinite(saves).any() else [math.nan, math.nan],
            "saving_boot_undefined": float(np.mean(~np.isfinite(saves))),
        }
    gate = {key: int(sum(r["gate"][key] for r in reps)) for key in reps[0]["gate"]}
    gate["money_saved_share"] = gate["careless_hits_after_detection"] / gate["hits"]
    gate["careless_money_share"] = gate["careless_hits"] / gate["hits"]
    gate["false_gate_money_share"] = gate["careful_hits_after_false_gate"] / gate["hits"]
    fixed_at_budget = fixed[FIXED_SCALES.index(1.0)]
    return {"repetitions": n, "budget_hits": budget, "seed": seed, "system_means": SYSTEM_MEANS.tolist(),
            "fixed": fixed, "fixed_at_budget": fixed_at_budget,
            "fixed_per_level_pair": np.mean([r["fixed"][FIXED_SCALES.index(1.0)]["correct"] for r in reps],
                                            axis=0).round(4).tolist(),
            "designs": designs, "gate": gate}


def _wilson(k: float, n: int, z: float = 1.96) -> list[float]:
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return [round(centre - half, 4), round(centre + half, 4)]


def print_table(summary: dict, seconds: float) -> None:
    b = summary["budget_hits"]
    print(f"\n{summary['repetitions']} repetitions, adaptive budget {b} HITs ({100 * b} paid judgments), "
          f"alpha {ALPHA}, {seconds:.0f} s")
    print("\nfixed design (one test at the end):")
    print(f"  {'HITs':>6} {'correct sep.':>13} {'false sep.':>11} {'wrong way':>10}")
    for f in summary["fixed"]:
        print(f"  {f['budget']:>6} {f['correct']:>13.3f} {f['false']:>11.3f} {f['wrong_way']:>10.3f}")
    print(f"\n{'design':<28} {'correct':>8} {'false sep. (95% CI)':>22} {'HITs':>7} {'fixed HITs':>10} "
          f"{'saving (95% CI)':>22} {'early stop':>10}")
    f = summary["fixed_at_budget"]
    print(f"{'fixed':<28} {f['correct']:>8.3f} {f['false']:>8.3f}{'':>14} {b:>7.0f} {b:>10.0f} {'':>22} {'':>10}")
    for name, d in summary["designs"].items():
        lo, hi = d["false_ci95"]
        slo, shi = d["saving_ci95"]
        saving = f"{100 * d['saving']:5.1f} % ({100 * slo:.0f} to {100 * shi:.0f})" if math.isfinite(d["saving"]) \
            else "beyond the fixed grid"
        print(f"{name:<28} {d['correct']:>8.3f} {d['false']:>8.3f} ({lo:.3f}-{hi:.3f}) {d['hits']:>7.1f} "
              f"{d['fixed_budget_matched']:>10.1f} {saving:>22} {d['stopped_early']:>10.2f}")
    print("\nper pair of adjacent levels (78-76, 76-73, 73-63, 63-60, 60-48, 48-34):")
    print(f"  {'fixed':<26} {summary['fixed_per_level_pair']}")
    for name, d in summary["designs"].items():
        print(f"  {name:<26} {d['per_level_pair']}")
    g = summary["gate"]
    print(f"\nlive gate (fixed design at {b} HITs, the same crowd without the gate): careless workers were paid "
          f"{100 * g['careless_money_share']:.1f} % of the HITs; "
          f"{100 * g['money_saved_share']:.1f} % of all HITs were theirs after the gate would have stopped them "
          f"({g['careless_workers_detected']} of {g['careless_workers']} careless workers detected); careful "
          f"workers gated: {g['careful_workers_gated']} of {g['careful_workers']} "
          f"({100 * g['false_gate_money_share']:.2f} % of the HITs after their gate)")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=int, default=100, help="the adaptive design's budget in HITs of 100")
    parser.add_argument("--segment-sd", type=float, default=SEGMENT_SD,
                        help="sd of the segment effect all systems share (0: independent translations, which makes "
                             "the unpaired tests exact instead of conservative)")
    parser.add_argument("--variants", default=",".join(short for short, _ in VARIANTS.values()),
                        help="comma-separated adaptive designs to run (default: all)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    args = parser.parse_args(argv)
    by_short = {short: name for name, (short, _) in VARIANTS.items()}
    unknown = [v for v in args.variants.split(",") if v not in by_short]
    if unknown:
        parser.error(f"unknown variants {unknown}; choose from {sorted(by_short)}")
    variants = [by_short[v] for v in args.variants.split(",")]
    if args.repetitions < 2 or args.budget < N_BATCHES:
        parser.error("need --repetitions >= 2 and --budget >= 10")
    started = time.perf_counter()
    tasks = [(args.seed, rep, args.budget, args.segment_sd, variants) for rep in range(args.repetitions)]
    if args.jobs > 1:
        with Pool(args.jobs) as pool:
            reps = pool.map(repetition, tasks, chunksize=1)
    else:
        reps = [repetition(t) for t in tasks]
    seconds = time.perf_counter() - started
    summary = summarise(reps, args.budget, args.seed, variants)
    summary["segment_sd"] = args.segment_sd
    summary["seconds"] = round(seconds, 1)
    print_table(summary, seconds)
    out = ROOT / "benchmarks" / "out"
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"adaptive-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(summary, indent=1))
    print(f"\nJSON: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

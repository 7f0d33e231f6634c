"""The WMT-sized DA campaign benchmarks/stats.py (and annotate_beside.py) generate, and the straightforward
per-judgment implementation of its statistics that stats.py checks analyse() against (docs/methods.md §4-§5):
plain loops and dicts, scipy's ttest_rel per worker and mannwhitneyu per system pair, as Appraise's
ComputeZScores does it."""
from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from pathlib import Path

import numpy as np

HIT_SIZE = 100
REDUNDANCY = 5  # workers per HIT design
N_SYSTEMS = 20
N_SEGMENTS = 3_000
RANDOM_SHARE = 0.15
CONSTANT_WORKERS = 5  # per 2,000 workers
HEADER = ["HITId", "WorkerId", "Input.src", "Input.trg", "Input.item", "hit", "sys_id", "rid", "type", "sid",
          "score", "time"]
TYPES = ["SYSTEM", "BAD_REF", "REPEAT", "REF"]  # codes 0..3, as da_pipeline's item codes
SYSTEM_NAMES = [f"system-{k:02d}" for k in range(N_SYSTEMS)]



# ---------------------------------------------------------------------------------------------
# The synthetic campaign
# ---------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Generated:
    """Per assignment (HIT design x worker) and item column (0..99, see `generate`)."""

    design: np.ndarray  # (n_assign,) HIT design of each assignment
    worker: np.ndarray  # (n_assign,) worker code
    worker_type: np.ndarray  # (n_workers,) 0 diligent, 1 random clicker, 2 constant clicker
    kind: np.ndarray  # (100,) item type code of each column
    system: np.ndarray  # (n_designs, 100)
    segment: np.ndarray  # (n_designs, 100) 0-based; the file's sid is segment + 1
    order: np.ndarray  # (n_designs, 100) columns in the order the HIT shows them
    score: np.ndarray  # (n_assign, 100) integer scores 0..100
    seconds: np.ndarray  # (n_assign, 100)

    @property
    def n_judgments(self) -> int:
        return int(self.score.size)


def generate(n_judgments: int, seed: int) -> Generated:
    """Vectorised; a HIT design's 100 columns: 0-69 system outputs (distinct segments),
    70-79 bad references of 0-9, 80-89 repeats of 10-19, 90-99 references of the segments of 20-29."""
    rng = np.random.default_rng(seed)
    n_assign = n_judgments // HIT_SIZE
    n_designs = n_workers = n_assign // REDUNDANCY
    if n_designs < 1 or n_assign % REDUNDANCY:
        raise SystemExit(f"--judgments must be a multiple of {HIT_SIZE * REDUNDANCY}")
    design = np.arange(n_assign) // REDUNDANCY
    copy = np.arange(n_assign) % REDUNDANCY
    step = n_workers // REDUNDANCY + 1  # the K workers of a design are distinct; everyone does K HITs
    worker = (design + copy * step) % n_workers

    worker_type = np.zeros(n_workers, dtype=np.int64)
    shuffled = rng.permutation(n_workers)
    n_constant = max(1, round(n_workers * CONSTANT_WORKERS / 2000))
    n_random = round(n_workers * RANDOM_SHARE)
    worker_type[shuffled[:n_constant]] = 2
    worker_type[shuffled[n_constant:n_constant + n_random]] = 1
    constant_value = rng.choice([50.0, 100.0, 75.0, 0.0], n_workers)
    bias = rng.normal(0, 8, n_workers)
    scale = np.clip(rng.lognormal(0, 0.2, n_workers), 0.6, 1.6)
    noise = rng.uniform(6, 14, n_workers)

    # Systems in near-equal pairs from 75 down to 45; segments of varying difficulty.
    quality = np.repeat(np.linspace(75, 45, N_SYSTEMS // 2), 2)[:N_SYSTEMS]
    quality[1::2] -= 0.5
    difficulty = rng.normal(0, 8, N_SEGMENTS)
    idiosyncrasy = rng.normal(0, 6, (N_SYSTEMS, N_SEGMENTS))
    block = N_SEGMENTS // 70  # one segment from each of 70 disjoint blocks: 70 distinct segments per HIT
    seg70 = (rng.integers(0, N_SEGMENTS, (n_designs, 1)) + np.arange(70) * block
             + rng.integers(0, block, (n_designs, 70))) % N_SEGMENTS
    sys70 = rng.integers(0, N_SYSTEMS, (n_designs, 70))
    truth70 = quality[sys70] + difficulty[seg70] + idiosyncrasy[sys70, seg70]
    drop = np.clip(rng.normal(25, 8, (n_designs, 10)), 5, None)
    reference_truth = 82 + 0.5 * difficulty[seg70[:, 20:30]] + rng.normal(0, 3, (n_designs, 10))
    system = np.concatenate([sys70, sys70[:, :10], sys70[:, 10:20], sys70[:, 20:30]], axis=1)
    segment = np.concatenate([seg70, seg70[:, :10], seg70[:, 10:20], seg70[:, 20:30]], axis=1)
    truth = np.concatenate([truth70, truth70[:, :10] - drop, truth70[:, 10:20], reference_truth], axis=1)
    kind = np.repeat([0, 1, 2, 3], [70, 10, 10, 10])
    order = np.argsort(rng.random((n_designs, HIT_SIZE)), axis=1)

    w = worker[:, None]
    careful = 50 + scale[w] * (truth[design] - 50) + bias[w] + rng.normal(0, 1, (n_assign, HIT_SIZE)) * noise[w]
    careful[:, 80:90] = careful[:, 10:20] + rng.normal(0, 1, (n_assign, 10)) * 0.5 * noise[w]  # asked again
    careful = np.clip(np.rint(careful), 0, 100)
    random = rng.integers(0, 101, (n_assign, HIT_SIZE)).astype(np.float64)
    wt = worker_type[w]
    score = np.where(wt == 0, careful, np.where(wt == 1, random, constant_value[w]))
    typical = np.array([18.0, 5.0, 3.0])[wt]
    seconds = np.round(typical * rng.lognormal(0, 0.45, (n_assign, HIT_SIZE)), 1)
    return Generated(design, worker, worker_type, kind, system, segment, order, score, seconds)


def hit_label(design: int) -> str:
    return f"3HIT{design:06d}"


def worker_label(worker: int) -> str:
    return f"WKR{worker:05d}"


def write_wmt_da(path: Path, g: Generated) -> None:
    """One line per judgment, HITs in order, each HIT's items in the order shown; space-separated."""
    system, segment, order = g.system.tolist(), g.segment.tolist(), g.order.tolist()
    kinds = [TYPES[k] for k in g.kind.tolist()]
    with path.open("w", encoding="utf-8") as handle:
        handle.write(" ".join(HEADER) + "\n")
        for a, (d, w) in enumerate(zip(g.design.tolist(), g.worker.tolist(), strict=True)):
            prefix = f"{hit_label(d)} {worker_label(w)} en de"
            scores, seconds = g.score[a].tolist(), g.seconds[a].tolist()
            sys_d, seg_d = system[d], segment[d]
            handle.write("".join(
                f"{prefix} {pos + 1} {d + 1} {SYSTEM_NAMES[sys_d[c]]} 1 {kinds[c]} {seg_d[c] + 1} "
                f"{int(scores[c])} {seconds[c]:.1f}\n"
                for pos, c in enumerate(order[d])
            ))


def sample_rows(g: Generated, assignments: np.ndarray) -> list[tuple]:
    """The file's rows of some assignments, as a per-judgment implementation would read them:
    (HITId, WorkerId, type, sys_id, sid, score) with the file's string ids."""
    rows = []
    kinds = [TYPES[k] for k in g.kind.tolist()]
    for a in assignments.tolist():
        d, w = int(g.design[a]), int(g.worker[a])
        hit, wid = hit_label(d), worker_label(w)
        sys_d, seg_d, scores = g.system[d].tolist(), g.segment[d].tolist(), g.score[a].tolist()
        for c in g.order[d].tolist():
            rows.append((hit, wid, kinds[c], SYSTEM_NAMES[sys_d[c]], seg_d[c] + 1, float(scores[c])))
    return rows


# ---------------------------------------------------------------------------------------------
# The per-judgment implementation (plain loops and dicts, one scipy call per worker / pair)
# ---------------------------------------------------------------------------------------------

def per_judgment_statistics(rows: list[tuple], threshold: float = 0.05) -> dict:
    """Worker z-scores, paired-t reliability, per-segment then per-system means, rank-sum matrix
    over the reliable workers' system outputs and repeats -- docs/methods.md §4-§5, one judgment at a time."""
    from scipy.stats import mannwhitneyu, ttest_rel

    # z-scores: mean and sample sd of all of a worker's scores (every item type)
    scores_by_worker: dict[str, list[float]] = {}
    for _hit, worker, _type, _system, _sid, score in rows:
        scores_by_worker.setdefault(worker, []).append(score)
    mean, sd, constant = {}, {}, {}
    for worker, scores in scores_by_worker.items():
        m = sum(scores) / len(scores)
        mean[worker] = m
        if len(scores) > 1 and len(set(scores)) > 1:
            sd[worker] = math.sqrt(sum((s - m) * (s - m) for s in scores) / (len(scores) - 1))
            constant[worker] = False
        else:
            sd[worker] = math.nan
            constant[worker] = True

    # reliability: bad reference vs the same worker's score of the original in the same HIT
    originals = {}
    for hit, worker, item_type, system, sid, score in rows:
        if item_type == "SYSTEM":
            originals[(worker, hit, system, sid)] = score
    bad_scores: dict[str, list[float]] = defaultdict(list)
    original_scores: dict[str, list[float]] = defaultdict(list)
    for hit, worker, item_type, system, sid, score in rows:
        if item_type == "BAD_REF" and (worker, hit, system, sid) in originals:
            bad_scores[worker].append(score)
            original_scores[worker].append(originals[(worker, hit, system, sid)])
    p_value, reliable = {}, {}
    for worker in scores_by_worker:
        bad, original = bad_scores.get(worker, []), original_scores.get(worker, [])
        differences = {b - o for b, o in zip(bad, original, strict=True)}
        if len(bad) < 2 or len(differences) < 2:
            p_value[worker] = math.nan  # t undefined (docs/methods.md §4): not reliable
        else:
            p_value[worker] = float(ttest_rel(bad, original, alternative="less").pvalue)
        reliable[worker] = p_value[worker] < threshold and not constant[worker]

    # system scores: average per translation (system, segment) first, then per system
    translations: dict[tuple[str, int], list[tuple[float, float]]] = {}
    judgments: dict[str, int] = defaultdict(int)
    for _hit, worker, item_type, system, sid, score in rows:
        if item_type in ("SYSTEM", "REPEAT") and reliable[worker]:
            z = (score - mean[worker]) / sd[worker]
            translations.setdefault((system, sid), []).append((score, z))
            judgments[system] += 1
    per_system: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for (system, _sid), values in translations.items():
        per_system[system].append((sum(v[0] for v in values) / len(values),
                                   sum(v[1] for v in values) / len(values)))
    systems = {}
    for system, means in per_system.items():
        systems[system] = {
            "translations": len(means), "judgments": judgments[system],
            "mean_raw": sum(m[0] for m in means) / len(means), "mean_z": sum(m[1] for m in means) / len(means),
        }

    # significance: one-sided rank-sum of the per-translation z means, "row better than column"
    names = sorted(per_system)
    significance = {}
    for a in names:
        for b in names:
            if a != b:
                za, zb = [m[1] for m in per_system[a]], [m[1] for m in per_system[b]]
                # R's rule, as the statistics core (docs/methods.md §5.3): exact below 50 values each without
                # ties, else the normal approximation with continuity correction (a small --sample reaches it)
                exact = len(za) < 50 and len(zb) < 50 and len(set(za) | set(zb)) == len(za) + len(zb)
                significance[(a, b)] = float(mannwhitneyu(za, zb, alternative="greater",
                                                          method="exact" if exact else "asymptotic").pvalue)
    return {"p_value": p_value, "reliable": reliable, "systems": systems, "significance": significance}

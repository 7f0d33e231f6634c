"""The ranking analysis of one campaign's slots (docs/methods.md §8), as plain arrays in and out:
gold accuracy and trust, pairwise expansion, the four count scores with bootstrap rank ranges,
a TrueSkill pass, agreement, Schulze combination of a screen's judges and Spearman's rho."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ... import stats
from ...stats import ranking as rk
from ...stats import schulze
from ...stats import trueskill as ts
from ..common.ranked import CONFIDENCE, ranked_table
from ..common.slots import KINDS, Slots

SYSTEM, REFERENCE, GOLD, BAD = (KINDS.index(k) for k in KINDS)
#: The count scores, each named as in its source (docs/methods.md §8); TrueSkill comes apart.
COUNT_SCORES = ("expected_wins", "expected_wins_compared", "geq_others", "gt_others")
SCORE_NAMES = (*COUNT_SCORES, "trueskill")
DEFAULT_SCORE = "expected_wins"


@dataclass(frozen=True)
class RankingOptions:
    min_gold: int = 4
    min_gold_accuracy: float = 0.7
    #: Whose rankings the scores leave out when the campaign has gold units: "failed" (workers past min_gold
    #: gold screens with too few right; the default), "untrusted" (also those not yet past min_gold, Paul &
    #: Sumita 2011's strict reading) or "none".
    gold_filter: str = "failed"
    include_reference: bool = True
    bootstrap_runs: int = 100
    confidence: float = CONFIDENCE
    seed: int = 0
    trueskill: ts.TrueSkillSettings = field(default_factory=ts.TrueSkillSettings)


def _score_arrays(scores: rk.RankingScores) -> dict[str, np.ndarray]:
    return {"expected_wins": scores.expected_wins_others, "expected_wins_compared": scores.expected_wins_compared,
            "geq_others": scores.geq_others, "gt_others": scores.gt_others}


def bootstrap_count_scores(winner, loser, drawn, n_systems: int, runs: int, seed: int) -> dict[str, np.ndarray]:
    """Each count score on each bootstrap resample of the outcomes (the same resamples as TrueSkill's runs):
    arrays (runs, n_systems). One bincount per run; no loop over outcomes."""
    out = {name: np.empty((runs, n_systems)) for name in COUNT_SCORES}
    for run in range(runs):
        sample = ts.bootstrap_sample(winner.size, seed, run)
        result = np.where(drawn[sample], 0, 1).astype(np.int8)
        scores = rk.ranking_scores(rk.Outcomes(ranking=sample, first=winner[sample], second=loser[sample],
                                               result=result), n_systems)
        for name, values in _score_arrays(scores).items():
            out[name][run] = values
    return out


@dataclass
class RankingAnalysis:
    n_systems: int
    workers: np.ndarray  # annotator ids, in worker-code order
    rankings: int
    rankings_used: int
    outcomes: rk.Outcomes
    scores: rk.RankingScores
    tables: dict[str, dict[str, np.ndarray]]
    score_values: dict[str, np.ndarray]
    trueskill: ts.TrueSkillResult
    gold: rk.GoldAccuracy
    gold_screens: int
    worker_rankings: np.ndarray
    worker_seconds: np.ndarray
    worker_agreement: np.ndarray
    trusted: np.ndarray
    failed: np.ndarray
    counted_workers: np.ndarray
    agreement: list[rk.RankingAgreement]
    fleiss: object
    combined: dict[str, dict[str, np.ndarray]]
    head_to_head: np.ndarray


def _gold_per_ranking(slots: Slots) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rankings with a gold slot, and per such ranking the gold's rank, the known-bad's (-1 if none) and N."""
    n = slots.n_rankings
    rank_gold = np.full(n, -1)
    rank_bad = np.full(n, -1)
    is_gold, is_bad = slots.kind == GOLD, slots.kind == BAD
    rank_gold[slots.ranking[is_gold]] = slots.rank[is_gold]
    rank_bad[slots.ranking[is_bad]] = slots.rank[is_bad]
    n_candidates = np.bincount(slots.ranking, minlength=n)
    has_gold = rank_gold > 0
    return has_gold, rk.gold_correct(rank_gold, rank_bad, n_candidates), n_candidates


def _judge_agreement(outcomes: rk.Outcomes, item: np.ndarray, judge: np.ndarray, n_judges: int) -> np.ndarray:
    """Each judge's share of agreeing outcomes with other judges of the same item and system pair (weights for
    weighted votes, Callison-Burch 2009 §4); NaN for a judge never compared."""
    a, b, label = rk.canonical(outcomes)
    it, jd = item[outcomes.ranking], judge[outcomes.ranking]
    n_sys = int(max(a.max(initial=0), b.max(initial=0))) + 1
    order = np.lexsort((a * n_sys + b, it))
    key = np.stack([it[order], (a * n_sys + b)[order]])
    group = np.r_[0, np.cumsum(np.any(key[:, 1:] != key[:, :-1], axis=0))] if order.size else order
    i, j = rk.pairs_within_groups(group)
    i, j = order[i], order[j]
    other = jd[i] != jd[j]
    i, j = i[other], j[other]
    agree = (label[i] == label[j]).astype(np.float64)
    compared = np.bincount(jd[i], minlength=n_judges) + np.bincount(jd[j], minlength=n_judges)
    agreed = np.bincount(jd[i], weights=agree, minlength=n_judges) + np.bincount(jd[j], weights=agree,
                                                                                   minlength=n_judges)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(compared > 0, agreed / np.maximum(compared, 1), np.nan)


def combine_screens(slots: Slots, keep: np.ndarray, worker: np.ndarray, weights: np.ndarray | None,
                    n_systems: int) -> rk.Outcomes:
    """One Schulze ranking per screen (HitItem) from its judges' rankings, expanded to outcomes.

    Screens are stacked into (screens, judges, candidates) arrays by index arithmetic; a judge absent from a
    screen, or a candidate slot a screen lacks, is padded with weight 0 / a rank nobody prefers."""
    use = keep[slots.ranking] & (slots.kind <= REFERENCE)
    ranking, system, rank = slots.ranking[use], slots.system[use], slots.rank[use]
    if ranking.size == 0:
        return rk.expand([], [], [], n_systems)
    screen_of_ranking = np.unique(slots.item, return_inverse=True)[1]
    screen = screen_of_ranking[ranking]
    n_screens = int(screen.max()) + 1
    # Judge slot within a screen: the order of the ranking among the screen's rankings.
    rankings_used = np.unique(ranking)
    scr = screen_of_ranking[rankings_used]
    order = np.lexsort((rankings_used, scr))
    first_of = np.r_[True, scr[order][1:] != scr[order][:-1]]
    position = np.arange(order.size) - np.maximum.accumulate(np.where(first_of, np.arange(order.size), 0))
    judge_slot = np.empty(slots.n_rankings, dtype=np.int64)
    judge_slot[rankings_used[order]] = position
    # Candidate slot within a screen: systems of the screen in sorted order.
    key = screen * (n_systems + 1) + system
    uniq, cand_code = np.unique(key, return_inverse=True)
    cand_screen = uniq // (n_systems + 1)
    first_cand = np.r_[True, cand_screen[1:] != cand_screen[:-1]]
    cand_position = np.arange(uniq.size) - np.maximum.accumulate(np.where(first_cand, np.arange(uniq.size), 0))
    n_judges, n_cands = int(position.max()) + 1, int(cand_position.max()) + 1
    ranks = np.full((n_screens, n_judges, n_cands), 10**6, dtype=np.float64)
    ranks[screen, judge_slot[ranking], cand_position[cand_code]] = rank
    w = np.zeros((n_screens, n_judges))
    judge_weight = np.ones(slots.n_rankings) if weights is None else weights[worker]
    w[screen_of_ranking[rankings_used], judge_slot[rankings_used]] = judge_weight[rankings_used]
    combined = schulze.schulze_ranks(ranks, w)
    present = np.zeros((n_screens, n_cands), dtype=bool)
    present[cand_screen, cand_position] = True
    system_at = np.full((n_screens, n_cands), -1)
    system_at[cand_screen, cand_position] = uniq % (n_systems + 1)
    voted = w.sum(axis=1) > 0
    mask = present & voted[:, None]
    rows = np.broadcast_to(np.arange(n_screens)[:, None], mask.shape)[mask]
    return rk.expand(rows, system_at[mask], combined[mask], n_systems)


@dataclass
class Counted:
    """Which rankings count (trusted workers' when gold units filter) and their pairwise outcomes."""

    workers: np.ndarray
    worker: np.ndarray
    gold: rk.GoldAccuracy
    has_gold: np.ndarray
    trusted: np.ndarray
    failed: np.ndarray
    counted_workers: np.ndarray
    keep: np.ndarray
    outcomes: rk.Outcomes


def counted_outcomes(slots: Slots, n_systems: int, options: RankingOptions) -> Counted:
    """Gold accuracy and trust per worker (Paul & Sumita 2011 §4.2), then the outcomes of the rankings kept:
    system slots only (the human reference too unless excluded; gold and known-bad slots never)."""
    workers, worker = np.unique(slots.annotator, return_inverse=True)
    n_workers = workers.size
    has_gold, correct, _ = _gold_per_ranking(slots)
    gold = rk.gold_accuracy(worker[has_gold], correct[has_gold], n_workers, options.min_gold,
                            options.min_gold_accuracy)
    any_gold = bool(has_gold.any())
    trusted = gold.trusted if any_gold else np.ones(n_workers, dtype=bool)
    failed = (gold.n_gold >= options.min_gold) & ~gold.trusted if any_gold else np.zeros(n_workers, dtype=bool)
    counted_workers = {"failed": ~failed, "untrusted": trusted}.get(options.gold_filter, np.ones(n_workers, bool))
    keep = counted_workers[worker]
    kinds = [SYSTEM, REFERENCE] if options.include_reference else [SYSTEM]
    counted = np.isin(slots.kind, kinds) & keep[slots.ranking]
    outcomes = rk.expand(slots.ranking[counted], slots.system[counted], slots.rank[counted], n_systems)
    return Counted(workers, worker, gold, has_gold, trusted, failed, counted_workers, keep, outcomes)


def analyse(slots: Slots, n_systems: int, options: RankingOptions) -> RankingAnalysis:
    c = counted_outcomes(slots, n_systems, options)
    workers, worker, gold, has_gold, trusted, keep, outcomes = (c.workers, c.worker, c.gold, c.has_gold, c.trusted,
                                                               c.keep, c.outcomes)
    failed, counted_workers = c.failed, c.counted_workers
    n_workers = workers.size
    any_gold = bool(has_gold.any())
    scores = rk.ranking_scores(outcomes, n_systems)
    winner, loser, drawn = ts.winner_loser(outcomes.first, outcomes.second, outcomes.result)
    runs = options.bootstrap_runs
    count_runs = bootstrap_count_scores(winner, loser, drawn, n_systems, runs, options.seed) if outcomes.size else {}
    values = _score_arrays(scores)
    tables = {name: ranked_table(values[name], count_runs.get(name), options.confidence) for name in COUNT_SCORES}
    shuffled = np.random.default_rng([options.seed, 2**31]).permutation(winner.size)
    single = ts.trueskill_pass(winner[shuffled], loser[shuffled], drawn[shuffled], n_systems, options.trueskill)
    values["trueskill"] = single.mu
    tables["trueskill"] = ranked_table(single.mu, None, options.confidence)

    segment_codes = np.unique(slots.segment, return_inverse=True)[1]
    agreement = [*rk.ranking_agreement(outcomes, segment_codes, worker, "wmt08"),
                 *rk.ranking_agreement(outcomes, segment_codes, worker, "wmt13")]
    a, b, canonical = rk.canonical(outcomes)
    pair_item = (segment_codes[outcomes.ranking] * n_systems + a) * n_systems + b
    fleiss = stats.fleiss_kappa(np.unique(pair_item, return_inverse=True)[1] if pair_item.size else pair_item,
                                np.select([canonical > 0, canonical < 0], [stats.CHOICE_A, stats.CHOICE_B],
                                          stats.CHOICE_TIE))
    judge_agreement = _judge_agreement(outcomes, segment_codes, worker, n_workers)

    combined = {}
    weightings = {"schulze": None, "schulze_agreement_weighted": schulze.judge_weights(judge_agreement)}
    if any_gold:
        weightings["schulze_gold_weighted"] = schulze.judge_weights(gold.accuracy)
    for name, weights in weightings.items():
        combined_outcomes = combine_screens(slots, keep, worker, weights, n_systems)
        combined_scores = rk.ranking_scores(combined_outcomes, n_systems)
        combined[name] = {**_score_arrays(combined_scores), "n": combined_scores.n}

    per_worker = np.bincount(worker, minlength=n_workers)
    finite = np.isfinite(slots.seconds)
    seconds = stats.worker_means(worker[finite], slots.seconds[finite], n_workers)
    return RankingAnalysis(
        n_systems=n_systems, workers=workers, rankings=slots.n_rankings, rankings_used=int(keep.sum()),
        outcomes=outcomes, scores=scores, tables=tables, score_values=values, trueskill=single, gold=gold,
        gold_screens=int(has_gold.sum()), worker_rankings=per_worker, worker_seconds=seconds,
        worker_agreement=judge_agreement, trusted=trusted, failed=failed, counted_workers=counted_workers,
        agreement=agreement, fleiss=fleiss, combined=combined,
        head_to_head=scores.win_rate(),
    )

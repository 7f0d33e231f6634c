"""Relative ranking of N systems: pairwise expansion, system scores, gold units, agreement and
Spearman's rho (docs/methods.md §8; Callison-Burch 2009 §4, Paul & Sumita 2011 §3-§4, WMT 2008-2016).

Input is one row per ranked *slot*: ``ranking`` (the code of the judgment the slot belongs to),
``system`` (code) and ``rank`` (1 = best; ties share a rank; only the order within a ranking
matters, so ranks above N are fine). Everything is vectorised: the expansion enumerates the pairs
within each ranking with index arithmetic, the counts are bincounts.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats as sps

from . import _grouping as g
from ._grouping import pairs_within_groups

#: Outcome codes, from the point of view of the first system of a pair.
FIRST_BETTER, TIE, SECOND_BETTER = 1, 0, -1
EXPECTED_WINS_DENOMINATORS = ("others", "compared")


@dataclass(frozen=True)
class Outcomes:
    """Pairwise outcomes: ``first`` and ``second`` are system codes in screen order, ``result`` is
    1 (first ranked better), 0 (tie) or -1 (second better); ``ranking`` says which judgment each came from."""

    ranking: np.ndarray
    first: np.ndarray
    second: np.ndarray
    result: np.ndarray

    def __post_init__(self):
        g.freeze(self)

    @property
    def size(self) -> int:
        return int(self.first.size)


def expand(ranking, system, rank, n_systems: int) -> Outcomes:
    """The N(N-1)/2 pairwise outcomes of every ranking (docs/methods.md §8, "Expansion").

    Slots keep their order within a ranking (screen order), so ``first`` is the slot shown
    earlier. Two slots of the same system (a system against itself) give no outcome."""
    ranking = np.asarray(ranking, dtype=np.int64)
    system = g.as_codes(system, n_systems, "system")
    rank = np.asarray(rank, dtype=np.int64)
    g.check_same_length(ranking=ranking, system=system, rank=rank)
    order = np.argsort(ranking, kind="stable")
    r, s, k = ranking[order], system[order], rank[order]
    i, j = pairs_within_groups(r)
    keep = s[i] != s[j]
    i, j = i[keep], j[keep]
    result = np.sign(k[j] - k[i]).astype(np.int8)
    return Outcomes(ranking=r[i], first=s[i], second=s[j], result=result)


def canonical(outcomes: Outcomes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The outcomes as (lower system code, higher system code, result from the lower's point of view), so that
    the two orders in which a pair can be shown count as the same pair."""
    a, b, result = outcomes.first, outcomes.second, outcomes.result.astype(np.int64)
    swap = a > b
    return np.where(swap, b, a), np.where(swap, a, b), np.where(swap, -result, result)


@dataclass(frozen=True)
class RankingScores:
    """Per system (docs/methods.md §8, "System scores"). ``wins[i, j]``: outcomes where i was ranked
    better than j; ``ties[i, j]`` (symmetric): i and j ranked equal. Scores are NaN where undefined."""

    wins: np.ndarray
    ties: np.ndarray
    n_wins: np.ndarray
    n_ties: np.ndarray
    n_losses: np.ndarray
    n: np.ndarray
    geq_others: np.ndarray
    gt_others: np.ndarray
    expected_wins_others: np.ndarray
    expected_wins_compared: np.ndarray

    def __post_init__(self):
        g.freeze(self)

    def win_rate(self) -> np.ndarray:
        """Head to head: wins[i, j] / (wins[i, j] + wins[j, i]), ties excluded; NaN where never decided."""
        decided = self.wins + self.wins.T
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(decided > 0, self.wins / np.maximum(decided, 1), np.nan)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 0, num / np.maximum(den, 1), np.nan)


def ranking_scores(outcomes: Outcomes, n_systems: int) -> RankingScores:
    """≥ others, > others and expected wins from pairwise outcomes.

    * ``geq_others`` (Callison-Burch 2009 §4; WMT08-10): (wins + ties) / (wins + ties + losses).
    * ``gt_others`` (Paul & Sumita 2011 §3; WMT11-12): wins / (wins + losses), ties excluded.
    * expected wins (WMT13, after Koehn 2012): mean over opponents O of
      wins(S, O) / (wins(S, O) + wins(O, S)), ties excluded. Two denominators, both in WMT's code:
      ``expected_wins_others`` divides by |S| - 1, every other system, an opponent never decided
      against counting 0 (the TrueSkill repository's ``infer_EW``); ``expected_wins_compared``
      averages over the opponents actually decided against (the WMT10-12 analysis scripts).
      |S| is the systems with at least one outcome here (docs/methods.md §8): the caller's filters
      (reference left out, failed workers dropped) decide it, not ``n_systems``, so a system that
      is filtered away or only ever ranked alone does not dilute everyone's score.
    """
    first, second, result = outcomes.first, outcomes.second, outcomes.result
    size = n_systems * n_systems
    winner = np.where(result > 0, first, second)
    loser = np.where(result > 0, second, first)
    decided = result != 0
    wins = np.bincount(winner[decided] * n_systems + loser[decided], minlength=size).reshape(n_systems, n_systems)
    tied = ~decided
    ties = np.bincount(first[tied] * n_systems + second[tied], minlength=size).reshape(n_systems, n_systems)
    ties = ties + ties.T
    n_wins, n_losses, n_ties = wins.sum(axis=1), wins.sum(axis=0), ties.sum(axis=1)
    n = n_wins + n_losses + n_ties
    pair_decided = wins + wins.T
    share = np.where(pair_decided > 0, wins / np.maximum(pair_decided, 1), 0.0)
    compared = pair_decided > 0
    n_compared = compared.sum(axis=1)
    present = int(np.count_nonzero(n))  # |S|: systems with a counted outcome
    others = np.full(n_systems, np.nan) if present < 2 else share.sum(axis=1) / (present - 1)
    return RankingScores(
        wins=wins.astype(np.int64), ties=ties.astype(np.int64), n_wins=n_wins, n_ties=n_ties, n_losses=n_losses, n=n,
        geq_others=_ratio(n_wins + n_ties, n), gt_others=_ratio(n_wins, n_wins + n_losses),
        expected_wins_others=np.where(n > 0, others, np.nan),
        expected_wins_compared=_ratio(share.sum(axis=1), n_compared),
    )


# --------------------------------------------------------------------------- gold units


@dataclass(frozen=True)
class GoldAccuracy:
    """Per worker (Paul & Sumita 2011 §4.2): gold screens judged, how many right, the share, and trust
    (at least ``min_gold`` screens and accuracy at least ``min_accuracy``)."""

    n_gold: np.ndarray
    n_correct: np.ndarray
    accuracy: np.ndarray
    trusted: np.ndarray
    min_gold: int
    min_accuracy: float

    def __post_init__(self):
        g.freeze(self)


def gold_correct(rank_gold, rank_bad, n_candidates) -> np.ndarray:
    """Whether each gold screen was ranked right. best-only (``rank_bad`` < 0): the gold ranked 1.
    best-worst: the gold in the top half (rank ≤ ⌊N/2⌋) and the known-bad output in the bottom half
    (rank > N - ⌊N/2⌋); with N odd the middle rank is in neither half."""
    rank_gold = np.asarray(rank_gold, dtype=np.int64)
    rank_bad = np.asarray(rank_bad, dtype=np.int64)
    n = np.asarray(n_candidates, dtype=np.int64)
    half = n // 2
    best_worst = (rank_gold <= half) & (rank_bad > n - half)
    return np.where(rank_bad < 0, rank_gold == 1, best_worst)


def gold_accuracy(worker, correct, n_workers: int, min_gold: int = 4, min_accuracy: float = 0.7) -> GoldAccuracy:
    """Gold accuracy and trust per worker; a worker with fewer than ``min_gold`` gold screens is not
    trusted (yet). Accuracy is NaN without gold screens."""
    worker = g.as_codes(worker, n_workers, "worker")
    correct = np.asarray(correct, dtype=bool)
    g.check_same_length(worker=worker, correct=correct)
    n_gold = g.group_count(worker, n_workers)
    n_correct = np.bincount(worker[correct], minlength=n_workers)
    accuracy = _ratio(n_correct, n_gold)
    trusted = (n_gold >= min_gold) & (np.nan_to_num(accuracy, nan=-1.0) >= min_accuracy)
    return GoldAccuracy(n_gold=n_gold, n_correct=n_correct, accuracy=accuracy, trusted=trusted, min_gold=min_gold,
                        min_accuracy=min_accuracy)


# --------------------------------------------------------------------------- agreement

AGREEMENT_PAIRINGS = ("wmt08", "wmt13")
CHANCE_CONVENTIONS = ("uniform", "ties")


@dataclass(frozen=True)
class RankingAgreement:
    """Agreement on pairwise outcomes judged more than once (docs/methods.md §8, "Agreement").

    ``p_agree``: share of comparisons with the same label (<, =, >). Two chance conventions:
    ``kappa_uniform`` with P(E) = 1/3 (WMT08-12), ``kappa_ties`` with P(E) = P(=)^2 + 2((1 - P(=))/2)^2,
    P(=) the share of ties among all pairwise outcomes of the task (WMT13-16's script; docs/methods.md §8)."""

    pairing: str
    kind: str
    n_comparisons: int
    n_agree: int
    p_agree: float
    p_tie: float
    p_expected_uniform: float
    p_expected_ties: float
    kappa_uniform: float
    kappa_ties: float


def _kappa(p_agree: float, p_expected: float) -> float:
    if math.isnan(p_agree) or p_expected >= 1.0:
        return math.nan
    return (p_agree - p_expected) / (1.0 - p_expected)


def _agreement(pairing: str, kind: str, n_comparisons: int, n_agree: int, n_ties: int, n_labels: int
               ) -> RankingAgreement:
    p_agree = n_agree / n_comparisons if n_comparisons else math.nan
    p_tie = n_ties / n_labels if n_labels else math.nan
    p_ties = p_tie**2 + 2 * ((1 - p_tie) / 2) ** 2 if n_labels else math.nan
    return RankingAgreement(pairing=pairing, kind=kind, n_comparisons=n_comparisons, n_agree=n_agree,
                            p_agree=p_agree, p_tie=p_tie, p_expected_uniform=1 / 3, p_expected_ties=p_ties,
                            kappa_uniform=_kappa(p_agree, 1 / 3), kappa_ties=_kappa(p_agree, p_ties))


def ranking_agreement(outcomes: Outcomes, item, judge, pairing: str = "wmt08") -> tuple[RankingAgreement,
                                                                                        RankingAgreement]:
    """Inter- and intra-annotator agreement over pairwise outcomes of the same item judged twice.

    ``item`` and ``judge`` give, per *ranking* code, the item it judged (the segment) and its judge;
    they are indexed by ``outcomes.ranking``. Pairings:

    * ``"wmt08"`` (WMT08-12): every two outcomes of the same item and the same *unordered* system pair
      form one comparison, inter-annotator if the judges differ, intra if the same judge. Labels are
      oriented to the pair's system order.
    * ``"wmt13"`` (WMT13-16's ``compute_agreement_scores.py``): the pair is taken in *screen* order
      (A shown before B is another item than B before A); inter-annotator agreement counts every two
      outcomes of the item, the same judge's included; intra-annotator agreement counts the same
      judge's outcomes of the item. (The script also reads unranked slots, rank -1, as best; here
      they are skipped.)

    For both pairings, inter and intra alike, the data-based P(E) takes P(=) over **every** pairwise
    outcome passed in (every expansion of every ranking, ties included), so that the two pairings
    differ only in how comparisons are formed (docs/methods.md §8). Taking it over the outcomes that
    enter comparisons instead gives j1 A<B, j2 A>B on item 1 and j1 A=B on item 2 a kappa of -1
    where the convention gives -0.5.
    """
    if pairing not in AGREEMENT_PAIRINGS:
        raise ValueError(f"pairing must be one of {AGREEMENT_PAIRINGS}")
    item = np.asarray(item, dtype=np.int64)[outcomes.ranking]
    judge = np.asarray(judge, dtype=np.int64)[outcomes.ranking]
    if pairing == "wmt08":
        a, b, label = canonical(outcomes)
    else:
        a, b, label = outcomes.first, outcomes.second, outcomes.result.astype(np.int64)
    n_sys = int(max(a.max(initial=0), b.max(initial=0))) + 1
    pair = a * n_sys + b
    order = np.lexsort((judge, pair, item))
    item, pair, judge, label = item[order], pair[order], judge[order], label[order]
    group = np.r_[0, np.cumsum((item[1:] != item[:-1]) | (pair[1:] != pair[:-1]))] if item.size else item
    i, j = pairs_within_groups(group)
    same_judge = judge[i] == judge[j]
    agree = label[i] == label[j]
    n_ties, n_labels = int(np.count_nonzero(label == 0)), int(label.size)
    inter = ~same_judge if pairing == "wmt08" else np.ones(i.size, dtype=bool)
    return (_agreement(pairing, "inter", int(inter.sum()), int((agree & inter).sum()), n_ties, n_labels),
            _agreement(pairing, "intra", int(same_judge.sum()), int((agree & same_judge).sum()), n_ties, n_labels))


# --------------------------------------------------------------------------- against a reference ranking


@dataclass(frozen=True)
class RankCorrelation:
    rho: float
    p_value: float
    n: int


def spearman(scores, reference, reference_is_rank: bool = False) -> RankCorrelation:
    """Spearman's rho between the platform's system scores (higher = better) and a reference ranking
    (a metric's or experts' scores, higher = better; or ranks, 1 = best, with ``reference_is_rank``),
    over the systems both have. ``scipy.stats.spearmanr``: average ranks for ties, two-sided p from
    the t distribution with n - 2 degrees of freedom."""
    scores = np.asarray(scores, dtype=np.float64)
    reference = np.asarray(reference, dtype=np.float64)
    if reference_is_rank:
        reference = -reference
    both = np.isfinite(scores) & np.isfinite(reference)
    n = int(both.sum())
    if n < 3 or np.ptp(scores[both]) == 0 or np.ptp(reference[both]) == 0:
        return RankCorrelation(rho=math.nan, p_value=math.nan, n=n)
    result = sps.spearmanr(scores[both], reference[both])
    return RankCorrelation(rho=float(result.statistic), p_value=float(result.pvalue), n=n)

"""Majority votes and agreement over pairwise judgments: majority label per item, pairwise agreement, Fleiss' kappa.

docs/methods.md §6 (agreement for rankings) and §7; Läubli et al. 2018 Tables 2-4; Paul & Sumita 2011 §3 (Fleiss'
kappa, Landis & Koch labels).  Same conventions as ``pairwise.py``: one row per (non-spam) judgment, ``choice`` a
code 0 = A, 1 = B, 2 = tie; results are frozen dataclasses with read-only numpy arrays, NaN where not computable.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from . import _grouping as g
from .pairwise import CHOICE_A, CHOICE_B, CHOICE_TIE, N_LABELS, as_choice

__all__ = [
    "MajorityVote",
    "PairwiseAgreement",
    "FleissKappa",
    "majority_vote",
    "pairwise_agreement",
    "fleiss_kappa",
    "landis_koch",
]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class MajorityVote:
    """Result of :func:`majority_vote`.

    Per item code (length ``n_items``): ``label`` (0 = A, 1 = B, 2 = tie;
    -1 = item without judgments), ``votes_a``, ``votes_b``, ``votes_t`` and
    ``item_condition`` (-1 without judgments).  Per condition code: ``a``,
    ``b``, ``t`` -- items whose majority label is A, B, tie -- and ``n``
    (labelled items); Läubli et al. 2018 Table 2 "Majority" is ``a / n`` etc.  ``rule``
    records the rule used.
    """

    label: np.ndarray
    votes_a: np.ndarray
    votes_b: np.ndarray
    votes_t: np.ndarray
    item_condition: np.ndarray
    a: np.ndarray
    b: np.ndarray
    t: np.ndarray
    n: np.ndarray
    rule: str

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class PairwiseAgreement:
    """Result of :func:`pairwise_agreement`.

    ``n_judgments``: rows passed; ``n_pairs``: pairs of judgments of the same
    item by different raters; ``n_agree``: pairs with the same label;
    ``p_agree = n_agree / n_pairs`` (Läubli et al. 2018 Table 3 "same label"; P(A));
    ``label_share``: share of A, B, tie among all judgments; ``p_tie =
    label_share[2]``; ``p_expected`` = P(E) by ``chance``; ``kappa = (P(A) -
    P(E)) / (1 - P(E))``.  NaN where not computable.

    ``table`` (3 x 3): pooled pair counts, rows = label of the rater with the
    lower code, columns = the other rater's label (diagonal = agreement).
    ``rater_pairs`` (k x 2, ``r1 < r2``) lists the rater pairs that share at
    least one item and ``rater_tables`` (k x 3 x 3) their confusion matrices
    in the same orientation (Läubli et al. 2018 Table 4).
    """

    n_judgments: int
    n_pairs: int
    n_agree: int
    p_agree: float
    label_share: np.ndarray
    p_tie: float
    p_expected: float
    kappa: float
    chance: str
    table: np.ndarray
    rater_pairs: np.ndarray
    rater_tables: np.ndarray

    def __post_init__(self):
        g.freeze(self)


@dataclass(frozen=True)
class FleissKappa:
    """Result of :func:`fleiss_kappa`.

    ``n_items``: items with at least two judgments (the others are left
    out); ``n_ratings``: judgments on those items; ``equal_raters``: every
    used item has the same number of judgments (then this is exactly Fleiss
    1971); ``category_share`` p_j; ``p_observed`` = P-bar; ``p_expected`` =
    P-bar_e = sum p_j^2; ``kappa``.  NaN where not computable.
    """

    n_items: int
    n_ratings: int
    equal_raters: bool
    category_share: np.ndarray
    p_observed: float
    p_expected: float
    kappa: float

    def __post_init__(self):
        g.freeze(self)


# --------------------------------------------------------------------------- helpers


def _as_keys(key, name: str) -> np.ndarray:
    """Non-negative integer keys of any size (item codes)."""
    a = np.asarray(key)
    if a.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {a.shape}")
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if not (np.issubdtype(a.dtype, np.integer) and a.dtype != np.bool_):
        raise TypeError(f"{name} must be an integer array, got {a.dtype}")
    a = a.astype(np.int64, copy=False)
    if int(a.min()) < 0:
        raise ValueError(f"{name} codes must be non-negative")
    return a


# --------------------------------------------------------------------------- majority vote


def majority_vote(item, choice, n_items: int, condition=None, n_conditions: int | None = None,
                  rule: str = "net") -> MajorityVote:
    """Majority label per item across raters, and its a/b/t counts per condition (docs/methods.md §7).

    Läubli et al. 2018, Table 2.

    One row per (non-spam) judgment: ``item`` code in ``0..n_items-1``,
    ``choice`` (0 = A, 1 = B, 2 = tie) and optionally ``condition`` (codes
    ``0..n_conditions-1``; an item must lie in a single condition, else
    ValueError).  Without ``condition`` everything is condition 0.

    Rules (how ties are treated):

    * ``"net"`` (default): A if the item has more A than B votes, B if more B
      than A votes, otherwise tie -- tie votes abstain, as in the sign test.
      This reproduces Läubli et al. 2018 Table 2 "Majority" exactly from the published
      ratings (e.g. fluency/document 24 / 10 / 66 %).
    * ``"plurality"``: the label with the most votes, tie votes included;
      if two or three labels share the top count the item is a tie.

    One vote is its own majority.  Items without judgments get label -1 and
    are not counted; nothing here is NaN.
    """
    if rule not in ("net", "plurality"):
        raise ValueError("rule must be 'net' or 'plurality'")
    item = g.as_codes(item, n_items, "item")
    choice = as_choice(choice)
    n = g.check_same_length(item=item, choice=choice)
    if condition is None:
        n_conditions = 1 if n_conditions is None else int(n_conditions)
        condition = np.zeros(n, dtype=np.int64)
    else:
        if n_conditions is None:
            raise ValueError("n_conditions is required with condition")
        condition = g.as_codes(condition, n_conditions, "condition")
        g.check_same_length(item=item, condition=condition)
    votes = np.bincount(item * N_LABELS + choice, minlength=n_items * N_LABELS).reshape(n_items, N_LABELS)
    va, vb, vt = (votes[:, k].astype(np.int64) for k in range(N_LABELS))
    has = votes.sum(axis=1) > 0

    item_cond = np.full(n_items, -1, dtype=np.int64)
    if n:
        cmin = np.full(n_items, np.iinfo(np.int64).max)
        cmax = np.full(n_items, -1, dtype=np.int64)
        np.minimum.at(cmin, item, condition)
        np.maximum.at(cmax, item, condition)
        if (cmin[has] != cmax[has]).any():
            raise ValueError("an item must belong to a single condition")
        item_cond[has] = cmax[has]

    if rule == "net":
        label = np.where(va > vb, CHOICE_A, np.where(vb > va, CHOICE_B, CHOICE_TIE))
    else:
        top = votes.max(axis=1, keepdims=True)
        unique_top = (votes == top).sum(axis=1) == 1
        label = np.where(unique_top, votes.argmax(axis=1), CHOICE_TIE)
    label = np.where(has, label, -1).astype(np.int64)

    lab = label[has]
    cond = item_cond[has]
    table = np.bincount(cond * N_LABELS + lab, minlength=n_conditions * N_LABELS).reshape(n_conditions, N_LABELS)
    table = table.astype(np.int64)
    return MajorityVote(label=label, votes_a=va, votes_b=vb, votes_t=vt, item_condition=item_cond,
                        a=table[:, CHOICE_A].copy(), b=table[:, CHOICE_B].copy(), t=table[:, CHOICE_TIE].copy(),
                        n=table.sum(axis=1), rule=rule)


# --------------------------------------------------------------------------- agreement


def pairwise_agreement(item, rater, choice, n_raters: int | None = None, chance: str = "wmt") -> PairwiseAgreement:
    """Percent agreement and Cohen's kappa over all pairs of raters' judgments (docs/methods.md §6-§7).

    Läubli et al. 2018, Appendix.

    One row per (non-spam) judgment: ``item`` (non-negative codes that
    identify the item within one condition -- call once per condition),
    ``rater`` code, ``choice`` (0 = A, 1 = B, 2 = tie; a tie is a label of
    its own, so A vs tie is a disagreement).  Every pair of judgments of the
    same item by *different* raters is one comparison (an item rated by m
    raters gives m(m-1)/2 pairs; a rater's repeated judgments of one item
    are not paired with each other, only with other raters').  P(A) =
    share of pairs with the same label (Läubli et al. 2018 Table 3 "same label").

    P(E), ``chance``:

    * ``"wmt"`` (default) -- as in WMT (Bojar et al. 2016, §3.3; the WMT16
      ``compute_agreement_scores.py``), "on the basis of all pairwise
      ratings across all raters" (Läubli et al. 2018 Appendix): P(A=B) is the share of
      ties among *all* judgments passed, and the two strict preferences
      are taken as equally likely, P(A>B) = P(A<B) = (1 - P(A=B)) / 2, so
      ``P(E) = P(A>B)^2 + P(A<B)^2 + P(A=B)^2``.  This reproduces Läubli et al. 2018
      Table 3 (fluency/document 55 %, kappa 0.32; adequacy/document 49 %,
      0.13; sentences 45 % / 0.13 and 50 % / 0.14) from the published data.
    * ``"pooled"`` -- P(E) = sum over labels of ``label_share^2`` with the
      observed shares of A, B and tie among all judgments (Scott's pi /
      Fleiss-style pooled marginals).

    Not computable -> NaN: no pairs (P(A) and kappa); P(E) = 1 (all
    judgments ties, or with ``"pooled"`` all one label).  ``n_raters``
    (default ``max(rater) + 1``) only bounds the rater codes.
    """
    if chance not in ("wmt", "pooled"):
        raise ValueError("chance must be 'wmt' or 'pooled'")
    item = _as_keys(item, "item")
    rater = np.asarray(rater)
    if n_raters is None:
        n_raters = int(rater.max(initial=-1)) + 1
    rater = g.as_codes(rater, n_raters, "rater")
    choice = as_choice(choice)
    n = g.check_same_length(item=item, rater=rater, choice=choice)

    order = np.lexsort((rater, item))  # by item, then rater: r[first] <= r[second]
    it, r, c = item[order], rater[order], choice[order]
    first, second = g.pairs_within_groups(it)
    distinct = r[first] != r[second]
    first, second = first[distinct], second[distinct]
    r1, r2, c1, c2 = r[first], r[second], c[first], c[second]
    n_pairs = int(first.size)

    table = np.bincount(c1 * N_LABELS + c2, minlength=N_LABELS**2).reshape(N_LABELS, N_LABELS).astype(np.int64)
    n_agree = int(np.trace(table))

    pair_key = r1 * n_raters + r2
    uniq, inv = g.factorize(pair_key, n_raters * n_raters)
    rater_pairs = np.stack([uniq // max(n_raters, 1), uniq % max(n_raters, 1)], axis=1).astype(np.int64)
    cells = np.bincount(inv * N_LABELS**2 + c1 * N_LABELS + c2, minlength=uniq.size * N_LABELS**2)
    rater_tables = cells.reshape(uniq.size, N_LABELS, N_LABELS).astype(np.int64)

    share = np.bincount(choice, minlength=N_LABELS) / n if n else np.full(N_LABELS, np.nan)
    p_tie = float(share[CHOICE_TIE])
    if n == 0:
        p_exp = math.nan
    elif chance == "wmt":
        p_exp = p_tie**2 + 2.0 * ((1.0 - p_tie) / 2.0) ** 2
    else:
        p_exp = float(np.sum(share**2))
    p_agree = n_agree / n_pairs if n_pairs else math.nan
    if n_pairs and p_exp < 1.0:
        kappa = (p_agree - p_exp) / (1.0 - p_exp)
    else:
        kappa = math.nan
    return PairwiseAgreement(n_judgments=int(n), n_pairs=n_pairs, n_agree=n_agree, p_agree=p_agree,
                             label_share=np.asarray(share, dtype=np.float64), p_tie=p_tie, p_expected=p_exp,
                             kappa=kappa, chance=chance, table=table, rater_pairs=rater_pairs,
                             rater_tables=rater_tables)


def fleiss_kappa(item, choice, n_categories: int = N_LABELS) -> FleissKappa:
    """Fleiss' kappa over items rated by several raters (docs/methods.md §6; Paul & Sumita 2011 §3; Fleiss 1971).

    One row per judgment: ``item`` (non-negative codes, one condition per
    call) and ``choice`` (category codes ``0..n_categories-1``; for
    pairwise rankings 0 = A, 1 = B, 2 = tie, each its own category).  Rater
    identity is not used.  With ``n_ij`` judgments of item i in category j
    and ``m_i`` judgments of item i:

    ``P_i = (sum_j n_ij^2 - m_i) / (m_i (m_i - 1))``, ``P-bar = mean_i P_i``,
    ``p_j = sum_i n_ij / sum_i m_i``, ``P-bar_e = sum_j p_j^2``,
    ``kappa = (P-bar - P-bar_e) / (1 - P-bar_e)``.

    Items with fewer than two judgments carry no agreement information and
    are left out.  With the same m for every item this is exactly Fleiss'
    kappa; with varying m, each item's P_i still weighs equally
    (``equal_raters`` says which case applies).  Not computable -> NaN: no
    item with two judgments; P-bar_e = 1 (every judgment in one category).
    """
    k = int(n_categories)
    if k < 1:
        raise ValueError("n_categories must be >= 1")
    item = _as_keys(item, "item")
    choice = g.as_codes(choice, k, "choice")
    g.check_same_length(item=item, choice=choice)
    if item.size == 0:
        return FleissKappa(n_items=0, n_ratings=0, equal_raters=True, category_share=np.full(k, np.nan),
                           p_observed=math.nan, p_expected=math.nan, kappa=math.nan)
    _, code = g.factorize(item, int(item.max()) + 1)
    n_groups = int(code.max()) + 1
    counts = np.bincount(code * k + choice, minlength=n_groups * k).reshape(n_groups, k).astype(np.float64)
    m = counts.sum(axis=1)
    use = m >= 2
    counts, m = counts[use], m[use]
    if counts.shape[0] == 0:
        return FleissKappa(n_items=0, n_ratings=0, equal_raters=True, category_share=np.full(k, np.nan),
                           p_observed=math.nan, p_expected=math.nan, kappa=math.nan)
    p_i = ((counts**2).sum(axis=1) - m) / (m * (m - 1.0))
    p_bar = float(p_i.mean())
    share = counts.sum(axis=0) / m.sum()
    p_e = float(np.sum(share**2))
    kappa = (p_bar - p_e) / (1.0 - p_e) if p_e < 1.0 else math.nan
    return FleissKappa(n_items=int(counts.shape[0]), n_ratings=int(m.sum()), equal_raters=bool(np.all(m == m[0])),
                       category_share=share, p_observed=p_bar, p_expected=p_e, kappa=kappa)


def landis_koch(kappa) -> str:
    """Landis & Koch (1977) label of a kappa value, as listed in Paul & Sumita 2011 §3 (docs/methods.md §6).

    "none" for kappa < 0, "slight" <= 0.2, "fair" <= 0.4, "moderate" <= 0.6,
    "substantial" <= 0.8, "almost perfect" above (upper bounds inclusive,
    as Paul & Sumita 2011 writes them).  NaN (not computable) -> "not computable".
    """
    k = float(kappa)
    if math.isnan(k):
        return "not computable"
    if k < 0.0:
        return "none"
    for bound, label in ((0.2, "slight"), (0.4, "fair"), (0.6, "moderate"), (0.8, "substantial")):
        if k <= bound:
            return label
    return "almost perfect"

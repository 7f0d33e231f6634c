"""Error-span statistics: MQM and ESA scores, paired significance across domains, span agreement
(docs/methods.md §11; Freitag et al. 2021, Kocmi et al. 2024, WMT24-25).

Plain numpy/scipy over arrays, one row per error (MQM) or per judged segment (ESA); groups are
integer codes as everywhere in the core. The only loops are over system pairs and domains, where
a scipy test runs per group.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from scipy import stats as sps

from . import _grouping as g
from . import esa_ranking

SEVERITIES = ("minor", "major", "critical")


# --------------------------------------------------------------------------- MQM weights


@dataclass(frozen=True)
class MqmWeights:
    """How an MQM error weighs (docs/methods.md §11; Freitag et al. 2021 Table 2, Google's releases).

    Names are matched case-insensitively, a trailing "!" ignored ("Non-translation!"). In order: the severities
    `neutral` and `no-error` and the category `No-error` weigh 0; `last_part` gives the weight of a category by
    its last part whatever the severity (Marot's "Source issue" 0); `categories` overrides the severity's weight
    for a category path and severity ("*" for any), the most specific prefix of the path first
    ("Fluency/Punctuation" before "Fluency"); otherwise `severity` (a severity not listed weighs 0).
    `source_side` multiplies the weight of an error whose span is marked in the source (1: where a span sits
    says nothing about its weight)."""

    name: str
    severity: dict = field(default_factory=lambda: {"minor": 1.0, "major": 5.0, "critical": 10.0})
    categories: dict = field(default_factory=dict)
    source_side: float = 1.0
    last_part: dict = field(default_factory=dict)
    label: str = ""

    def weight(self, category: str, severity: str, source_side: bool = False) -> float:
        key = category.strip().lower().rstrip("!")  # Google's files write "Non-translation!"
        sev = severity.strip().lower()
        if key in ("no-error", "no error") or sev in ("no-error", "no error", "neutral"):
            return 0.0
        parts = key.split("/")
        found = self.last_part.get(parts[-1].strip())
        for size in range(len(parts), 0, -1):
            if found is not None:
                break
            prefix = "/".join(parts[:size])
            found = self.categories.get((prefix, sev), self.categories.get((prefix, "*")))
        base = self.severity.get(sev, 0.0) if found is None else found
        return base * (self.source_side if source_side else 1.0)


#: Google's weights (Freitag et al. 2021): major 5, minor 1, minor Fluency/Punctuation 0.1, Non-translation 25
#: whatever its severity, critical 10.
GOOGLE = MqmWeights("google", categories={("fluency/punctuation", "minor"): 0.1, ("non-translation", "*"): 25.0},
                    label="Google (Freitag et al. 2021): major 5, minor 1, minor Fluency/Punctuation 0.1, "
                    "Non-translation 25, critical 10")
#: mt-metrics-eval's score_mqm.py, which scored the TED 2021 releases: its default weights Major:5 Minor:1
#: Neutral:0 Major/Non-translation!:25 Minor/Fluency/Punctuation:0.1, the most specific match; any other
#: severity (critical) weighs 0 there, and so here.
SCORE_MQM = MqmWeights("score-mqm", severity={"minor": 1.0, "major": 5.0},
                       categories={("non-translation", "major"): 25.0, ("fluency/punctuation", "minor"): 0.1},
                       label="mt-metrics-eval score_mqm.py (TED 2021 releases): Major 5, Minor 1, Major "
                       "Non-translation 25, Minor Fluency/Punctuation 0.1")
#: Marot's weights (WMT23 en-de release; WMT24's tools.py `mqm_weights`): Google's, with the categories
#: "Source issue"/"Source error" and "Creative Reinterpretation" weighing 0 (matched on the last part of the
#: category), critical as major (5); an error marked in the source keeps its weight.
MAROT = MqmWeights("wmt23-marot", severity={"minor": 1.0, "major": 5.0, "critical": 5.0},
                   categories={("fluency/punctuation", "minor"): 0.1, ("non-translation", "*"): 25.0},
                   last_part={"source issue": 0.0, "source error": 0.0, "creative reinterpretation": 0.0},
                   label="Marot (WMT23 release): Google's, Source issue/error and Creative Reinterpretation 0")
#: The name this option had for Marot's release; it zeroed every error marked in the source, which the
#: release does not do. Kept so that stored campaigns keep working; it now means Marot's weights.
GOOGLE_SOURCE_ZERO = MAROT
MQM_PRESETS = {"google": GOOGLE, "score-mqm": SCORE_MQM, "wmt23-marot": MAROT, "google-source-zero": MAROT}


def error_weights(category_names, severity_names, category, severity, source_side, weights: MqmWeights = GOOGLE
                  ) -> np.ndarray:
    """Each error's weight: the weight of each distinct (category, severity, side) is computed once by name,
    then looked up by code (no loop over errors)."""
    category = np.asarray(category, dtype=np.int64)
    severity = np.asarray(severity, dtype=np.int64)
    side = np.asarray(source_side, dtype=bool).astype(np.int64)
    n_c, n_s = len(category_names), len(severity_names)
    table = np.array([[[weights.weight(c, s, bool(k)) for k in (0, 1)] for s in severity_names]
                      for c in category_names]).reshape(n_c, n_s, 2) if n_c and n_s else np.zeros((0, 0, 2))
    return table[category, severity, side] if category.size else np.zeros(0)


def mqm_segment_scores(rated_item, rated_rater, error_item, error_rater, error_weight, n_items: int) -> np.ndarray:
    """MQM segment scores: −(sum of one rater's error weights), averaged over the raters of the segment.

    `rated_*` lists every (item, rater) that rated the item, with or without errors (a `No-error` row marks a
    rating with nothing wrong); `error_*` one row per error. No cap: a rating can collect any number of errors.
    NaN for items nobody rated."""
    rated_item = g.as_codes(rated_item, n_items, "rated_item")
    rated_rater = np.asarray(rated_rater, dtype=np.int64)
    error_item = g.as_codes(error_item, n_items, "error_item")
    error_rater = np.asarray(error_rater, dtype=np.int64)
    n_raters = int(max(rated_rater.max(initial=-1), error_rater.max(initial=-1))) + 1
    ratings = np.unique(rated_item * max(n_raters, 1) + rated_rater)
    error_key = error_item * max(n_raters, 1) + error_rater
    position = np.searchsorted(ratings, error_key)
    found = (position < ratings.size) & (ratings[np.minimum(position, max(ratings.size - 1, 0))] == error_key) \
        if ratings.size else np.zeros(error_key.size, dtype=bool)
    if not found.all():
        raise ValueError("every error must belong to a rating listed in rated_item/rated_rater")
    penalty = np.bincount(position, weights=np.asarray(error_weight, dtype=np.float64), minlength=ratings.size)
    rating_item = ratings // max(n_raters, 1)
    n = np.bincount(rating_item, minlength=n_items)
    total = np.bincount(rating_item, weights=-penalty, minlength=n_items)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def item_means(item, score, n_items: int) -> np.ndarray:
    """The mean score of each item over its judgments (several judges of one item are averaged); NaN if none."""
    item = g.as_codes(item, n_items, "item")
    return g.group_mean(item, g.as_scores(score, "score"), n_items)


def system_means(item_system, item_score, n_systems: int, item_domain=None, n_domains: int = 1,
                 macro: bool = False) -> np.ndarray:
    """System scores over their rated items: the plain mean (WMT25), or with `macro` the mean of the per-domain
    means (WMT24). Items with a NaN score are left out."""
    item_system = np.asarray(item_system, dtype=np.int64)
    item_score = np.asarray(item_score, dtype=np.float64)
    rated = np.isfinite(item_score)
    if not macro:
        return g.group_mean(item_system[rated], item_score[rated], n_systems)
    domain = np.zeros(item_system.size, dtype=np.int64) if item_domain is None else np.asarray(item_domain)
    cell = item_system[rated] * n_domains + domain[rated]
    means = g.group_mean(cell, item_score[rated], n_systems * n_domains).reshape(n_systems, n_domains)
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.where(np.isfinite(means), means, np.nan), axis=1) if n_domains else means[:, 0]


# --------------------------------------------------------------------------- significance


@dataclass(frozen=True)
class PairedSignificance:
    """p[i, j]: the p-value of the test of system i against system j (NaN on the diagonal and where no items
    are shared): one-sided "i better" for "wmt25" and "stouffer", the same for (i, j) and (j, i) for "wmt24";
    `n[i, j]` the shared items (slots); `per_domain[d, i, j]` the per-domain two-sided p ("wmt24", "stouffer")."""

    p: np.ndarray
    n: np.ndarray
    method: str
    per_domain: np.ndarray | None = None


#: The paired tests of `paired_significance`.
PAIRED_METHODS = ("wmt24", "wmt25", "stouffer")


#: Up to this many differences (zeros included), scipy's `method="auto"` enumerates every sign pattern when there
#: are ties or zeros (and uses the exact null distribution, which the enumeration equals, when there are none).
ENUMERATED = 13


def wilcoxon_p(d: np.ndarray, alternative: str) -> float:
    """scipy 1.17's `wilcoxon(d, zero_method="wilcox", correction=False, alternative=..., method="auto")`, the
    call WMT's scripts make; NaN when every difference is zero or there are none.

    For n ≤ 13 differences scipy's "auto" is an exact test: all 2^n sign flips (its permutation test, used when
    there are ties or zeros; without them its exact distribution, which is the same enumeration). scipy runs the
    permutation test in a Python loop over the patterns (about 2 s a call); `wilcoxon_enumerated` computes the
    same p-value vectorised. Above 13, scipy is called."""
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0 or not np.any(d):
        return math.nan
    if d.size <= ENUMERATED:
        return wilcoxon_enumerated(d, alternative)
    return float(sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative=alternative).pvalue)


#: Above this many differences scipy's "auto" is the normal approximation whatever the ties.
ASYMPTOTIC = 50


def wilcoxon_both_ways(d: np.ndarray) -> tuple[float, float, float]:
    """(p that d > 0, p that d < 0, two-sided p), each exactly what `wilcoxon_p` gives; above 50 differences from
    one scipy call (the normal approximation "auto" uses there: its z gives all three), else three."""
    d = np.asarray(d, dtype=np.float64)
    if d.size == 0 or not np.any(d):
        return math.nan, math.nan, math.nan
    if d.size <= ASYMPTOTIC:
        return wilcoxon_p(d, "greater"), wilcoxon_p(d, "less"), wilcoxon_p(d, "two-sided")
    z = float(sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative="greater",
                           method="asymptotic").zstatistic)
    greater, less = float(sps.norm.sf(z)), float(sps.norm.cdf(z))
    return greater, less, min(1.0, 2 * min(greater, less))


def wilcoxon_enumerated(d: np.ndarray, alternative: str) -> float:
    """The signed-rank test's exact p over every sign pattern of `d`: zeros dropped from the ranking (Wilcoxon's
    convention), mid-ranks for ties, the statistic the rank sum of the positive differences; p the share of
    patterns at least as extreme, with scipy's tolerance of 100 machine epsilons, two-sided twice the smaller
    one-sided p (at most 1), as `scipy.stats.permutation_test` computes it."""
    d = np.asarray(d, dtype=np.float64)
    nonzero = d != 0
    ranks = np.zeros(d.size)
    ranks[nonzero] = sps.rankdata(np.abs(d[nonzero]))
    observed = float(ranks[d > 0].sum())
    flips = ((np.arange(2 ** d.size)[:, None] >> np.arange(d.size)[None, :]) & 1).astype(bool)
    null = (((d > 0) ^ flips) & nonzero) @ ranks
    gamma = abs(np.finfo(np.float64).eps * 100 * observed)
    less, greater = float(np.mean(null <= observed + gamma)), float(np.mean(null >= observed - gamma))
    if alternative == "less":
        return less
    if alternative == "greater":
        return greater
    return min(1.0, 2 * min(less, greater))


def _shared(item_system, item_key, score, n_systems: int, item_wave=None):
    """A (keys × systems) matrix of scores, NaN where a system has no score for that key (or (key, wave) slot)."""
    return esa_ranking.slot_matrix(item_system, item_key, score, n_systems, wave=item_wave)


def paired_significance(item_system, item_key, item_score, n_systems: int, item_domain=None,
                        method: str = "wmt25", item_wave=None) -> PairedSignificance:
    """p[i, j] for every pair of systems on the items both were judged on (`item_key` says which items are the
    same source segment; one score per (key, system), e.g. the judges' mean).

    * ``"wmt25"`` (WMT25's ``05-compute_clusters.py``): one-sided paired Wilcoxon signed-rank that i scores
      higher (scipy, see `wilcoxon_p`). With `item_wave` a pair is compared on (item, wave) slots, two waves
      of one item being two observations, each slot holding one score per system (the later row wins).
    * ``"wmt24"`` (WMT24's ``tools.py``): per domain the two-sided paired Wilcoxon on that domain's shared
      items, the domains combined by `esa_ranking.stouffer_two_sided`; p[i, j] = p[j, i]: the direction is
      dropped, as WMT24 computed it. A domain where the pair shares no item is left out (the script only
      sees the shared items' domains).
    * ``"stouffer"``: the directional variant: per domain the one-sided Wilcoxon, combined with
      `scipy.stats.combine_pvalues(method="stouffer")` (unweighted); a domain where the pair shares no
      non-tied item is left out.
    """
    if method not in PAIRED_METHODS:
        raise ValueError(f"method must be one of {PAIRED_METHODS}")
    item_system = np.asarray(item_system, dtype=np.int64)
    score = np.asarray(item_score, dtype=np.float64)
    domain = np.zeros(item_system.size, dtype=np.int64) if item_domain is None else np.asarray(item_domain)
    wave = None if item_wave is None or method != "wmt25" else np.asarray(item_wave)
    if method == "wmt25":
        domain = np.zeros_like(domain)
    n_domains = int(domain.max(initial=0)) + 1
    p = np.full((n_systems, n_systems), np.nan)
    n = np.zeros((n_systems, n_systems), dtype=np.int64)
    two = np.full((n_domains, n_systems, n_systems), np.nan)
    one_sided = np.full((n_domains, n_systems, n_systems), np.nan)
    shared = np.zeros((n_domains, n_systems, n_systems), dtype=bool)
    for d in range(n_domains):
        here = domain == d
        matrix = _shared(item_system[here], np.asarray(item_key)[here], score[here], n_systems,
                         None if wave is None else wave[here])
        for i in range(n_systems):
            for j in range(i + 1, n_systems):
                both = np.isfinite(matrix[:, i]) & np.isfinite(matrix[:, j])
                diff = matrix[both, i] - matrix[both, j]
                n[i, j] += both.sum()
                n[j, i] += both.sum()
                shared[d, i, j] = shared[d, j, i] = both.any()
                one_sided[d, i, j], one_sided[d, j, i], two[d, i, j] = wilcoxon_both_ways(diff)
                two[d, j, i] = two[d, i, j]
    for i in range(n_systems):
        for j in range(n_systems):
            if i == j:
                continue
            if method == "wmt25":
                p[i, j] = one_sided[0, i, j]
            elif method == "wmt24":
                p[i, j] = esa_ranking.stouffer_two_sided(two[shared[:, i, j], i, j])
            else:
                ps = one_sided[:, i, j]
                ps = ps[np.isfinite(ps)]
                if ps.size:
                    p[i, j] = ps[0] if ps.size == 1 else float(sps.combine_pvalues(ps, method="stouffer").pvalue)
    return PairedSignificance(p=p, n=n, method=method, per_domain=None if method == "wmt25" else two)


def approximate_randomization(a, b, trials: int = 10_000, seed: int = 0) -> float:
    """Paired approximate randomization (Koehn 2004; Riezler & Maxwell 2005): two-sided p that the mean of
    a − b differs from 0, swapping each pair's two scores at random. Exact when 2^n ≤ `trials` (every swap
    pattern enumerated, p = share with |mean| ≥ observed); otherwise `trials` random patterns and
    p = (count + 1) / (trials + 1). Seeded, so a p-value is reproducible."""
    d = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    n = d.size
    if n == 0:
        return math.nan
    observed = abs(d.mean())
    tolerance = 1e-12 * max(1.0, observed)
    if n < 63 and 2**n <= trials:
        patterns = ((np.arange(2**n)[:, None] >> np.arange(n)[None, :]) & 1) * 2 - 1
        means = np.abs(patterns @ d) / n
        return float(np.mean(means >= observed - tolerance))
    rng = np.random.default_rng(seed)
    count, left, block = 0, trials, max(1, min(trials, 2_000_000 // max(n, 1)))
    while left:
        size = min(block, left)
        signs = rng.integers(0, 2, size=(size, n), dtype=np.int8) * 2 - 1
        count += int(np.sum(np.abs(signs @ d) / n >= observed - tolerance))
        left -= size
    return (count + 1) / (trials + 1)


# --------------------------------------------------------------------------- agreement


@dataclass(frozen=True)
class SpanAgreement:
    """Character-level F1 of two judges' marked spans on the same segment, micro-averaged over every pair of
    judges of every segment: 2·|A ∩ B| / (|A| + |B|) in characters (with severity: a character agrees only if
    both marked it with the same severity). A zero-length span (an omission at the end) counts as one
    character just past the text."""

    f1: float
    f1_severity: float
    pairs: int


def span_f1(segment, judge, start, end, severity) -> SpanAgreement:
    """Span agreement over all pairs of judges who judged the same segment (each judge listed once per segment
    they judged, with or without spans: pass spans of length -1 .. i.e. start = end = -1 for "judged, no
    span")."""
    segment, judge = np.asarray(segment, dtype=np.int64), np.asarray(judge, dtype=np.int64)
    start, end = np.asarray(start, dtype=np.int64), np.asarray(end, dtype=np.int64)
    severity = np.asarray(severity, dtype=np.int64)
    real = start >= 0
    length = np.where(real, np.maximum(end - start, 1), 0)
    span = np.repeat(np.arange(start.size), length)
    offset = np.arange(span.size) - np.repeat(np.cumsum(length) - length, length)
    char = start[span] + offset
    n_judges = int(judge.max(initial=0)) + 1
    # Per (segment, judge): the set of marked characters, with and without severity.
    plain = np.unique(np.stack([segment[span], judge[span], char]), axis=1)
    with_sev = np.unique(np.stack([segment[span], judge[span], char, severity[span]]), axis=1)
    judged = np.unique(np.stack([segment, judge]), axis=1)
    pairs_i, pairs_j = g.pairs_within_groups(judged[0])
    n_pairs = int(pairs_i.size)
    if n_pairs == 0:
        return SpanAgreement(math.nan, math.nan, 0)

    def micro_f1(marks: np.ndarray) -> float:
        if marks.shape[1] == 0:  # nobody marked anything: agreement on spans is undefined
            return math.nan
        key_of = marks[0] * n_judges + marks[1]
        size = np.bincount(np.searchsorted(judged[0] * n_judges + judged[1], key_of), minlength=judged.shape[1])
        total = size[pairs_i].sum() + size[pairs_j].sum()
        # Characters both judges of a pair marked: join on (segment, char[, severity]) and count judge pairs.
        rest = marks[2:]
        unit = np.ravel_multi_index(tuple(np.vstack([marks[0], rest])), tuple(int(x.max()) + 1 for x in
                                                                                 np.vstack([marks[0], rest])))
        order = np.lexsort((marks[1], unit))
        u = unit[order]
        first, second = g.pairs_within_groups(u)
        shared = first.size
        return 2.0 * shared / total if total else math.nan

    return SpanAgreement(f1=micro_f1(plain), f1_severity=micro_f1(with_sev), pairs=n_pairs)


def krippendorff_interval(unit, rater, score) -> float:
    """Krippendorff's alpha, interval metric, on the scores (the `krippendorff` package; raters × units with
    NaN where a rater did not score a unit)."""
    import krippendorff

    unit = np.unique(np.asarray(unit), return_inverse=True)[1]
    rater = np.unique(np.asarray(rater), return_inverse=True)[1]
    data = np.full((int(rater.max(initial=-1)) + 1, int(unit.max(initial=-1)) + 1), np.nan)
    data[rater, unit] = np.asarray(score, dtype=np.float64)
    if data.size == 0 or np.sum(np.isfinite(data).sum(axis=0) >= 2) == 0:
        return math.nan
    if np.unique(data[np.isfinite(data)]).size < 2:  # every score the same: no variation, alpha undefined
        return math.nan
    return float(krippendorff.alpha(reliability_data=data, level_of_measurement="interval"))

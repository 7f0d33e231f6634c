"""Ranking stability's data (docs/methods.md §12.4): judgments in resampling form and a resample's system scores.

:func:`prepare` merges the judgments into cells (one worker's judgments of one translation) held as sparse
translations × workers matrices of score sums and counts; :func:`weighted_scores` turns a block of resamples'
worker and segment counts into each system's score with one sparse product (a judgment's weight
a[worker] × b[segment], never materialised per judgment), by the formula in ``stability.py``'s docstring.
ESA^AI's post-stratified Hájek estimator re-weights the translations by stratum (:class:`HajekStrata`).
The bootstrap that draws the counts is in ``stability.py``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ._grouping import freeze

__all__ = ["HajekStrata", "StabilityData", "prepare", "weighted_scores"]


@dataclass(frozen=True)
class HajekStrata:
    """ESA^AI's post-stratified Hájek estimator inside the bootstrap (docs/methods.md#esa-ai): each system's outputs
    fall in strata (group × AI verdict); a resample's stratum size N_h counts the population's outputs of its drawn
    segments (sent or not), n_h its judged translations, and each translation is re-weighted by N_h / n_h, so the
    system score is Σ_h N_h ȳ_h / Σ_h N_h over the strata with a judged translation (`macro`: the groups' such
    means averaged with equal weight). Built by :func:`prepare` from a `population`."""

    translation_stratum: np.ndarray
    segment_outputs: sparse.csr_matrix
    stratum_group: np.ndarray
    group_system: np.ndarray
    macro: bool

    def __post_init__(self):
        freeze(self)


@dataclass(frozen=True)
class StabilityData:
    """The judgments a ranking rests on, prepared for resampling (build with :func:`prepare`).

    Judgments are merged into cells (one worker's judgments of one translation) and held as two sparse
    translations × workers matrices: ``translation_sums`` (the sum of the cell's scores) and
    ``translation_counts`` (its number of judgments). Translations are sorted by system, then segment;
    ``systems`` are the names of the systems with at least one judgment (codes index them).
    """

    systems: tuple[str, ...]
    n_workers: int
    n_segments: int
    translation_sums: sparse.csr_matrix
    translation_counts: sparse.csr_matrix
    translation_segment: np.ndarray
    translation_system: np.ndarray
    system_start: np.ndarray
    #: The systems' positions by name (the last tie-break).
    name_position: np.ndarray
    #: ESA^AI: the strata of the Hájek estimator (None: every translation weighs the same).
    strata: HajekStrata | None = None

    def __post_init__(self):
        freeze(self)

    @property
    def n_systems(self) -> int:
        return len(self.systems)

    @property
    def n_translations(self) -> int:
        return int(self.translation_segment.size)

    @property
    def n_cells(self) -> int:
        return int(self.translation_sums.nnz)


def prepare(worker, segment, system, score, system_names, population: dict | None = None,
            macro: bool = False) -> StabilityData:
    """Judgment rows (worker id, segment id, system code, finite score; any integer ids) to resampling form
    (docs/methods.md §12.4).

    ``system`` indexes ``system_names``; systems without a judgment are left out. Workers and segments are
    re-coded densely: the bootstrap draws from the workers and segments present in these rows.
    ``population`` (ESA^AI): one entry per output the estimator counts, arrays ``segment``, ``system``, ``group``
    (e.g. the domain's code) and ``clean`` (the AI verdict); the segments it names are drawn too, judged or not,
    and the system scores are the post-stratified Hájek scores (:class:`HajekStrata`; ``macro``: the groups
    averaged with equal weight).
    """
    worker, segment, system = (np.asarray(a, dtype=np.int64).ravel() for a in (worker, segment, system))
    score = np.asarray(score, dtype=np.float64).ravel()
    if not (worker.size == segment.size == system.size == score.size):
        raise ValueError("worker, segment, system and score must have one value per judgment")
    if not np.isfinite(score).all():
        raise ValueError("scores must be finite (drop judgments without a score first)")
    if system.size and (system.min() < 0 or system.max() >= len(system_names)):
        raise ValueError("system codes must index system_names")
    worker_ids, worker = np.unique(worker, return_inverse=True)
    pop = None if population is None else {k: np.asarray(population[k], dtype=np.int64).ravel()
                                           for k in ("segment", "system", "group", "clean")}
    segment_ids = np.unique(segment if pop is None else np.r_[segment, pop["segment"]])
    segment = np.searchsorted(segment_ids, segment)
    present, system = np.unique(system, return_inverse=True)
    names = tuple(str(system_names[int(i)]) for i in present)
    n_w, n_g = int(worker_ids.size), int(segment_ids.size)
    # Translations (system, segment) sorted by system, so that each system's are contiguous.
    translations, translation = np.unique(system * max(n_g, 1) + segment, return_inverse=True)
    shape = (translations.size, n_w)
    sums = sparse.csr_matrix((score, (translation, worker)), shape=shape)  # duplicates (a cell) are summed
    counts = sparse.csr_matrix((np.ones(score.size), (translation, worker)), shape=shape)
    translation_system = translations // max(n_g, 1)
    system_start = np.flatnonzero(np.r_[True, translation_system[1:] != translation_system[:-1]]) \
        if translations.size else np.zeros(0, np.int64)
    strata = None if pop is None else _strata(pop, segment_ids, present, translations, max(n_g, 1), macro)
    return StabilityData(
        systems=names, n_workers=n_w, n_segments=n_g, translation_sums=sums, translation_counts=counts,
        translation_segment=translations % max(n_g, 1), translation_system=translation_system,
        system_start=system_start,
        name_position=np.argsort(np.argsort(np.array(names, dtype=object), kind="stable"), kind="stable"),
        strata=strata,
    )


def _strata(pop: dict, segment_ids: np.ndarray, present: np.ndarray, translations: np.ndarray, n_g: int,
            macro: bool) -> HajekStrata:
    """The Hájek strata of the population's outputs of the judged systems: stratum (system, group, verdict), code
    (system · G + group) · 2 + clean; a translation outside the population counts as AI-flagged in group 0."""
    keep = np.isin(pop["system"], present)
    system = np.searchsorted(present, pop["system"][keep])
    segment = np.searchsorted(segment_ids, pop["segment"][keep])
    n_groups = int(pop["group"].max(initial=0)) + 1
    group = system * n_groups + pop["group"][keep]
    stratum = group * 2 + (pop["clean"][keep] > 0)
    n_strata = present.size * n_groups * 2
    outputs = sparse.csr_matrix((np.ones(stratum.size), (segment, stratum)), shape=(max(segment_ids.size, 1),
                                                                                    n_strata))
    key = system * n_g + segment
    found, mapped = np.zeros(translations.size, bool), np.zeros(translations.size, np.int64)
    if key.size:
        order = np.argsort(key, kind="stable")
        at = np.minimum(np.searchsorted(key[order], translations), key.size - 1)
        found, mapped = key[order][at] == translations, stratum[order][at]
    translation_stratum = np.where(found, mapped, (translations // n_g) * n_groups * 2)
    return HajekStrata(translation_stratum=translation_stratum.astype(np.int64), segment_outputs=outputs,
                       stratum_group=np.arange(n_strata) // 2,
                       group_system=np.arange(present.size * n_groups) // n_groups, macro=macro)


def _hajek_factors(strata: HajekStrata, weight: np.ndarray, segments: np.ndarray, n_systems: int) -> np.ndarray:
    """Each translation's factor in a resample (translations × resamples): N_h / n_h of its stratum, and with
    `macro` divided by its group's size and the number of its system's groups with a judged stratum."""
    n_strata = strata.stratum_group.size
    population = np.asarray(strata.segment_outputs.T @ segments)                     # strata × resamples
    judged = np.zeros((n_strata, weight.shape[1]))
    np.add.at(judged, strata.translation_stratum, weight)
    usable = judged > 0
    factor = np.where(usable, population / np.maximum(judged, 1e-300), 0.0)
    if strata.macro:
        n_groups = strata.group_system.size
        group_size = np.zeros((n_groups, weight.shape[1]))
        np.add.at(group_size, strata.stratum_group, np.where(usable, population, 0.0))
        groups_used = np.zeros((n_systems, weight.shape[1]))
        np.add.at(groups_used, strata.group_system, group_size > 0)
        scale = 1.0 / np.maximum(group_size * groups_used[strata.group_system], 1e-300)
        factor = factor * scale[strata.stratum_group]
    return factor[strata.translation_stratum]


def weighted_scores(data: StabilityData, worker_counts: np.ndarray, segment_counts: np.ndarray):
    """For resamples given by their counts (rows: resamples; columns: workers, respectively segments, by
    code), per system: the score μ_s (docs/methods.md §12.4, the module's formula), the sample variance v_s of
    the translation means and their number n_s, copies counted. (means, variances, n), each (resamples ×
    systems); NaN mean without a translation, NaN variance with fewer than 2."""
    workers = np.ascontiguousarray(np.asarray(worker_counts, dtype=np.float64).T)  # workers × resamples
    numerator = np.asarray(data.translation_sums @ workers)                          # translations × resamples
    denominator = np.asarray(data.translation_counts @ workers)
    present = denominator > 0
    translation_mean = np.divide(numerator, denominator, out=np.zeros_like(numerator), where=present)
    segments = np.asarray(segment_counts, dtype=np.float64).T                         # segments × resamples
    weight = segments[data.translation_segment] * present
    n = np.add.reduceat(weight, data.system_start, axis=0)
    # ESA^AI: each translation re-weighted by its stratum's N_h / n_h (HajekStrata); else every one alike
    weighted = weight if data.strata is None else weight * _hajek_factors(data.strata, weight, segments,
                                                                          data.n_systems)
    total = np.add.reduceat(weighted, data.system_start, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.add.reduceat(weighted * translation_mean, data.system_start, axis=0) / total
        deviation = translation_mean - np.nan_to_num(mean)[data.translation_system]
        squares = np.add.reduceat(weighted * deviation * deviation, data.system_start, axis=0) * n / total
        variance = np.where(n > 1, squares / (n - 1), np.nan)
    mean[n == 0] = np.nan
    return mean.T, variance.T, n.T

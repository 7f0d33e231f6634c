"""HTER from crowd post-edits (docs/methods.md §9; Callison-Burch 2009 §5.2, Snover et al. 2006).

TER is sacrebleu's (`sacrebleu.metrics.TER`, default settings: case-sensitive, punctuation kept, shifts
allowed), never a hand-written one. The HTER of an MT output is TER with the output as hypothesis and, as
reference, the passing post-edit closest to it (fewest edits per reference word), or the reference translation
when no edit passed. A system's HTER is TER's corpus score: its outputs' edits summed over their chosen
references' words summed, ×100 as sacrebleu reports it. Everything but the TER calls (one per sentence pair, in
sacrebleu) is numpy over arrays of codes.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def ter_counts(hypotheses, references) -> tuple[np.ndarray, np.ndarray]:
    """(edits, reference words) of each hypothesis against its one reference, by sacrebleu's sentence TER."""
    from sacrebleu.metrics import TER

    ter = TER()
    edits, lengths = np.zeros(len(hypotheses)), np.zeros(len(hypotheses))
    for i, (hypothesis, reference) in enumerate(zip(hypotheses, references, strict=True)):
        score = ter.sentence_score(hypothesis, [reference])
        edits[i], lengths[i] = score.num_edits, score.ref_length
    return edits, lengths


def _rate(edits, lengths) -> np.ndarray:
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(lengths > 0, edits / np.maximum(lengths, 1e-12), np.where(edits > 0, np.inf, 0.0))


@dataclass(frozen=True)
class ChosenReferences:
    """Per output: the row of the chosen edit (-1: the reference), and its edits and reference words."""

    edit_row: np.ndarray
    edits: np.ndarray
    lengths: np.ndarray


def choose_closest(edit_output, edit_edits, edit_lengths, edit_passed, reference_edits, reference_lengths,
                   keep=None) -> ChosenReferences:
    """For every output, the passing edit with the lowest TER (ties: the first row), else its reference.
    `edit_*` are per edit row (its output code, TER counts, whether it passed); `reference_*` per output;
    `keep` (bool per edit row) restricts the candidates, for subsampling editors."""
    edit_output = np.asarray(edit_output, dtype=np.int64)
    n = len(reference_edits)
    usable = np.asarray(edit_passed, dtype=bool) & (np.ones(edit_output.size, bool) if keep is None else keep)
    rows = np.flatnonzero(usable)
    rate = _rate(np.asarray(edit_edits)[rows], np.asarray(edit_lengths)[rows])
    order = rows[np.lexsort((rows, rate, edit_output[rows]))]
    first = np.r_[True, edit_output[order][1:] != edit_output[order][:-1]] if order.size else np.zeros(0, bool)
    best = order[first]
    edit_row = np.full(n, -1, dtype=np.int64)
    edit_row[edit_output[best]] = best
    has = edit_row >= 0
    edits = np.where(has, np.asarray(edit_edits, dtype=float)[np.maximum(edit_row, 0)] if edit_output.size else 0,
                     reference_edits)
    lengths = np.where(has, np.asarray(edit_lengths, dtype=float)[np.maximum(edit_row, 0)] if edit_output.size
                       else 0, reference_lengths)
    return ChosenReferences(edit_row, np.asarray(edits, dtype=float), np.asarray(lengths, dtype=float))


def corpus_hter(output_system, edits, lengths, n_systems: int) -> np.ndarray:
    """Per system 100 × Σ edits / Σ reference words over its outputs (TER's corpus score); NaN without outputs."""
    output_system = np.asarray(output_system, dtype=np.int64)
    total_edits = np.bincount(output_system, weights=edits, minlength=n_systems)
    total_words = np.bincount(output_system, weights=lengths, minlength=n_systems)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total_words > 0, 100.0 * total_edits / np.maximum(total_words, 1e-12), np.nan)


def editors_curve(edit_output, edit_edits, edit_lengths, edit_passed, reference_edits, reference_lengths,
                  output_system, n_systems: int, max_editors: int, repeats: int = 50, seed: int = 0) -> np.ndarray:
    """System HTER with 0..`max_editors` editors per output (Callison-Burch 2009 Table 2): for k editors, k of each
    output's editors drawn at random (all of them where it has fewer), the closest passing edit among theirs
    chosen; averaged over `repeats` seeded draws, each a random order of every output's editors whose first k
    are taken (so more editors never raise an output's HTER within a draw). Returns a (max_editors + 1,
    n_systems) array; row 0 is TER against the reference alone."""
    edit_output = np.asarray(edit_output, dtype=np.int64)
    rng = np.random.default_rng(seed)
    curve = np.zeros((max_editors + 1, n_systems))
    for _ in range(repeats):
        # one random order of each output's editors per draw; k editors are its first k, so the sets are nested
        draw = rng.random(edit_output.size)
        order = np.lexsort((draw, edit_output))
        starts = np.r_[True, edit_output[order][1:] != edit_output[order][:-1]] if order.size else order
        group_start = np.maximum.accumulate(np.where(starts, np.arange(order.size), 0))
        rank = np.empty(order.size, dtype=np.int64)
        rank[order] = np.arange(order.size) - group_start
        for k in range(max_editors + 1):
            chosen = choose_closest(edit_output, edit_edits, edit_lengths, edit_passed, reference_edits,
                                    reference_lengths, keep=rank < k)
            curve[k] += corpus_hter(output_system, chosen.edits, chosen.lengths, n_systems)
    return curve / max(repeats, 1)

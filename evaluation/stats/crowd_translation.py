"""Crowd reference translations (docs/methods.md §9; Callison-Burch 2009 §5.1): who copied machine translation,
and how good each translator's sentences are.

BLEU is sacrebleu's (`sacrebleu.metrics.BLEU`, default settings: 13a tokenisation, case-sensitive, exponential
smoothing off), never a hand-written one. A translator's quality is corpus BLEU over their sentences with, as
multi-reference, the other translators' translations of the same sentences (leave one out); sentences with a
different number of references are padded with None, as sacrebleu allows. Plain Python and numpy; no Django.
"""
from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> float:
    """sacrebleu's corpus BLEU of `hypotheses`, sentence i against its own list of references `references[i]`
    (any number ≥ 1 per sentence; padded with None to the longest). NaN without sentences."""
    from sacrebleu.metrics import BLEU

    if not hypotheses:
        return float("nan")
    if len(references) != len(hypotheses) or any(not refs for refs in references):
        raise ValueError("every hypothesis needs at least one reference")
    width = max(len(refs) for refs in references)
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]
    return float(BLEU().corpus_score(list(hypotheses), streams).score)


@dataclass(frozen=True)
class TranslatorBleu:
    """One translator's BLEU and the number of their sentences it was computed over."""

    bleu: float
    sentences: int


def leave_one_out_bleu(translations: Mapping[Hashable, Mapping[Hashable, str]],
                       reference_pool: set | None = None) -> dict[Hashable, TranslatorBleu]:
    """Per translator: corpus BLEU of their translations (`translations[translator][sentence]`) against the
    translations of the same sentences by the other translators in `reference_pool` (all translators when None)
    as multi-reference. A sentence nobody else in the pool translated is left out; a translator with no sentence
    left gets NaN over 0 sentences."""
    pool = set(translations) if reference_pool is None else set(reference_pool)
    by_sentence: dict[Hashable, list[tuple[Hashable, str]]] = {}
    for translator in sorted(translations, key=str):
        for sentence, text in translations[translator].items():
            by_sentence.setdefault(sentence, []).append((translator, text))
    out = {}
    for translator, own in translations.items():
        hypotheses, references = [], []
        for sentence in sorted(own, key=str):
            others = [text for other, text in by_sentence[sentence] if other != translator and other in pool]
            if others:
                hypotheses.append(own[sentence])
                references.append(others)
        out[translator] = TranslatorBleu(corpus_bleu(hypotheses, references), len(hypotheses))
    return out


def printed(score: float | None) -> float | None:
    """A BLEU score as sacrebleu prints it: its own `Score.format` (2 decimals), read back as a number, so that
    an API, a page and a CSV never show 100.00000000000004. None or NaN stays None."""
    from sacrebleu.metrics.base import Score

    if score is None or not np.isfinite(score):
        return None
    return float(Score("BLEU", float(score)).format(score_only=True))


def _same(text: str) -> str:
    return " ".join(str(text).split())


@dataclass(frozen=True)
class JunkFlags:
    """One translation's junk marks: `repeated` when the same translator typed the same text (up to white space)
    for another sentence with a different source, `source_copy` when it equals its source."""

    repeated: bool
    source_copy: bool


def junk_flags(rows: Sequence[tuple[Hashable, Hashable, str, str]]) -> list[JunkFlags]:
    """Per row `(translator, sentence, translation, source)`: whether the translation repeats verbatim (after
    white-space normalisation) the translator's translation of another sentence whose source differs, and whether
    it copies its source. Honest translators rarely repeat a whole sentence across different sources; the
    same junk typed on every item does."""
    sentences: dict[tuple[Hashable, str], set[str]] = {}
    for translator, _sentence, text, source in rows:
        sentences.setdefault((translator, _same(text)), set()).add(_same(source))
    return [JunkFlags(len(sentences[(translator, _same(text))]) > 1, _same(text) == _same(source))
            for translator, _sentence, text, source in rows]


def reference_bleu(translations: Mapping[Hashable, str], references: Mapping[Hashable, str]) -> TranslatorBleu:
    """Corpus BLEU of one translator's sentences against the professional reference, over the sentences that have
    one (an empty reference counts as none)."""
    keys = [k for k in sorted(translations, key=str) if (references.get(k) or "").strip()]
    return TranslatorBleu(corpus_bleu([translations[k] for k in keys], [[references[k]] for k in keys]), len(keys))


def majority_flagged(marked: np.ndarray, votes: np.ndarray) -> np.ndarray:
    """A translation is flagged as machine-made when more than half of the detect-stage judges who saw it
    marked it (strict majority: 2 of 3, 2 of 2, 3 of 4; never without a vote)."""
    marked, votes = np.asarray(marked), np.asarray(votes)
    return (votes > 0) & (2 * marked > votes)


def flagged_shares(translator: np.ndarray, flagged: np.ndarray, judged: np.ndarray, n_translators: int
                   ) -> np.ndarray:
    """Per translator code: the share of their judged translations (those with at least one detect vote) that
    are flagged; NaN for a translator none of whose translations was judged yet."""
    translator = np.asarray(translator, dtype=np.int64)
    judged = np.asarray(judged, dtype=bool)
    flagged = np.asarray(flagged, dtype=bool) & judged
    n = np.bincount(translator[judged], minlength=n_translators).astype(float)
    k = np.bincount(translator[flagged], minlength=n_translators).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, k / np.maximum(n, 1), np.nan)


def excluded(shares: np.ndarray, threshold: float) -> np.ndarray:
    """Translators flagged in at least `threshold` of their judged sentences; an unjudged one (NaN) is not."""
    shares = np.asarray(shares, dtype=float)
    return np.where(np.isnan(shares), False, shares >= threshold - 1e-12)


__all__ = ["JunkFlags", "TranslatorBleu", "corpus_bleu", "excluded", "flagged_shares", "junk_flags",
           "leave_one_out_bleu", "majority_flagged", "printed", "reference_bleu"]

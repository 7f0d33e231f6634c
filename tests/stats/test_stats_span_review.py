"""Review of error spans (docs/methods.md "Review of error spans"): change counts and per-rater precision and recall
on small tables computed by hand."""
import numpy as np
import pytest

from evaluation.stats import span_review as sr


def test_change_counts_by_rater_category_and_severity():
    """Rater 0: two minor Accuracy spans, one kept one deleted; one major Fluency span, changed. Rater 1: one minor
    Accuracy span, kept; two major Accuracy spans, both changed."""
    rater = [0, 0, 0, 1, 1, 1]
    category = [0, 0, 1, 0, 0, 0]
    severity = [0, 0, 1, 0, 1, 1]
    action = [0, 2, 1, 0, 1, 1]
    result = sr.change_counts(rater, category, severity, action, 2, 2, 2)
    assert result.counts.shape == (2, 2, 2, 3)
    assert result.counts[0, 0, 0].tolist() == [1, 0, 1]
    assert result.counts[0, 1, 1].tolist() == [0, 1, 0]
    assert result.counts[1, 0, 0].tolist() == [1, 0, 0]
    assert result.counts[1, 0, 1].tolist() == [0, 2, 0]
    assert result.counts.sum() == 6
    assert result.shares[0, 0, 0].tolist() == [0.5, 0.0, 0.5]
    assert result.shares[1, 0, 1].tolist() == [0.0, 1.0, 0.0]
    assert np.isnan(result.shares[0, 1, 0]).all()  # rater 0 marked no minor Fluency span


def test_change_counts_without_categories_and_bad_actions():
    result = sr.change_counts([0, 0], [-1, -1], [1, 1], [2, 2], 1, 0, 2)
    assert result.counts[0, 0, 1].tolist() == [0, 0, 2]
    with pytest.raises(ValueError):
        sr.change_counts([0], [0], [0], [3], 1, 1, 1)


# Two units (reviews). Unit 0 reviews rater 0, unit 1 reviews rater 1.
# Unit 0, first pass: f0 [0, 10) minor cat0, f1 [20, 24) major cat1, f2 [30, 30) omission at 30 minor cat0.
#         reviewed:   r0 [0, 10) minor cat0 (f0 kept), r1 [21, 24) minor cat1 (f1 changed: 3 of 4 chars shared),
#                     r2 [40, 45) major cat0 (added). f2 deleted.
# Unit 1, first pass: f3 [0, 4) major cat0, f4 [10, 20) minor cat1.
#         reviewed:   r3 [0, 10) major cat0 (f3 widened: shares 4 of 10 chars), r4 [10, 20) major cat1 (f4 severity).
FIRST = {"unit": [0, 0, 0, 1, 1], "start": [0, 20, 30, 0, 10], "end": [10, 24, 30, 4, 20],
         "severity": [0, 1, 0, 1, 0], "category": [0, 1, 0, 0, 1]}
REVIEWED = {"unit": [0, 0, 0, 1, 1], "start": [0, 21, 40, 0, 10], "end": [10, 24, 45, 10, 20],
            "severity": [0, 0, 1, 1, 1], "category": [0, 1, 0, 0, 1]}


def test_exact_and_lenient_matching_by_hand():
    f, r = sr.match_spans(FIRST, REVIEWED, "exact")
    assert f.tolist() == [True, False, False, False, False]
    assert r.tolist() == [True, False, False, False, False]
    f, r = sr.match_spans(FIRST, REVIEWED, "lenient")
    # f1/r1: 3 shared ≥ 0.5 × 4; f3/r3: 4 shared < 0.5 × 10; f4/r4: same bounds
    assert f.tolist() == [True, True, False, False, True]
    assert r.tolist() == [True, True, False, False, True]


def test_precision_and_recall_per_rater_by_hand():
    exact = sr.rater_precision_recall(FIRST, REVIEWED, [0, 1], 2, "exact")
    assert exact.first.tolist() == [3, 2] and exact.reviewed.tolist() == [3, 2]
    assert exact.precision.tolist() == pytest.approx([1 / 3, 0.0])
    assert exact.recall.tolist() == pytest.approx([1 / 3, 0.0])
    lenient = sr.rater_precision_recall(FIRST, REVIEWED, [0, 1], 2, "lenient")
    assert lenient.precision.tolist() == pytest.approx([2 / 3, 1 / 2])
    assert lenient.recall.tolist() == pytest.approx([2 / 3, 1 / 2])
    looser = sr.rater_precision_recall(FIRST, REVIEWED, [0, 1], 2, "lenient", threshold=0.4)
    assert looser.precision.tolist() == pytest.approx([2 / 3, 1.0])  # f3/r3 now match (4 ≥ 0.4 × 10)


def test_a_rater_without_spans_has_no_precision_and_an_empty_review_no_recall():
    first = {"unit": [1], "start": [0], "end": [2], "severity": [0], "category": [-1]}
    reviewed = {"unit": [0], "start": [0], "end": [2], "severity": [0], "category": [-1]}
    result = sr.rater_precision_recall(first, reviewed, [0, 1], 2)
    assert np.isnan(result.precision[0]) and result.recall[0] == 0.0
    assert result.precision[1] == 0.0 and np.isnan(result.recall[1])
    with pytest.raises(ValueError):
        sr.match_spans(first, reviewed, "fuzzy")

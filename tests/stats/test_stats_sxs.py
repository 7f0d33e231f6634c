"""The side-by-side statistics core (evaluation/stats/sxs.py, docs/methods.md#side-by-side) against hand-computed
cases: win rates per screen, the pairs of identical words across columns, and the consistency shares."""
import math

import numpy as np

from evaluation.stats import error_spans, sxs


def test_win_rates_by_hand():
    # screen 0: A −1, B 0, C −5; screen 1: A 0, B −5, C 0; screen 2: A −2, B NaN (not compared), C −2
    screen = [0, 0, 0, 1, 1, 1, 2, 2, 2]
    system = [0, 1, 2, 0, 1, 2, 0, 1, 2]
    score = [-1, 0, -5, 0, -5, 0, -2, np.nan, -2]
    rates = sxs.win_rates(screen, system, score, 3)
    # A–B: B on 0, A on 1; A–C: A on 0, tie on 1 and 2; B–C: B on 0, C on 1
    assert rates.wins.tolist() == [[0, 1, 1], [1, 0, 1], [0, 1, 0]]
    assert rates.ties.tolist() == [[0, 0, 2], [0, 0, 0], [2, 0, 0]]
    assert rates.n.tolist() == [[0, 2, 3], [2, 0, 2], [3, 2, 0]]


def test_win_rates_ignore_a_system_shown_twice_against_itself_and_lone_rows():
    rates = sxs.win_rates([0, 0, 1], [1, 1, 0], [1.0, 2.0, 3.0], 2)
    assert rates.n.sum() == 0


def test_identical_pairs_by_hand():
    texts = ["The museum opens on Saturday.", "The museum opens Saturday.", "A museum reopens."]
    spans = [[(4, 10, "minor")],                     # A: museum
             [(4, 10, "minor"), (17, 25, "major")],  # B: museum, Saturday
             [(17, 17, "major")]]                    # C: an omission has no words
    pairs = {((p.column_a, p.start_a, p.severity_a), (p.column_b, p.start_b, p.severity_b))
             for p in sxs.identical_pairs(texts, spans)}
    assert pairs == {
        ((0, 4, "minor"), (1, 4, "minor")),   # museum A–B, counted once though both are marked
        ((0, 4, "minor"), (2, 2, None)),      # museum A–C
        ((1, 4, "minor"), (2, 2, None)),      # museum B–C
        ((0, 20, None), (1, 17, "major")),    # Saturday A–B
    }


def test_identical_pairs_find_every_occurrence_and_only_exact_marks():
    texts = ["a cat and a cat", "the cat"]
    spans = [[(2, 5, "minor")], [(0, 7, "major")]]  # B marks "the cat", not "cat" itself
    pairs = sxs.identical_pairs(texts, spans)
    found = sorted((p.column_a, p.start_a, p.column_b, p.start_b, p.severity_b) for p in pairs)
    assert found == [(0, 2, 1, 4, None)]  # "the cat" does not occur in A; A's "cat" is unmarked in B as "cat"


def test_consistency_shares_by_hand():
    # five pairs: minor–minor (alike), minor–unmarked, major–minor (both marked, not alike), major–major (alike),
    # unmarked–minor; the hint was shown on the second and the fourth
    a = [0, 0, 1, 1, -1]
    b = [0, -1, 0, 1, 0]
    hinted = [False, True, False, True, False]
    shares = sxs.consistency(a, b, hinted)
    assert (shares["all"].pairs, shares["all"].both_marked, shares["all"].alike) == (5, 3, 2)
    assert shares["all"].share == 2 / 5 and shares["all"].share_marked == 3 / 5
    assert (shares["hint"].pairs, shares["hint"].alike, shares["hint"].share) == (2, 1, 0.5)
    assert (shares["no hint"].pairs, shares["no hint"].alike) == (3, 1)
    assert math.isnan(sxs.consistency([], []).get("all").share)


def test_krippendorff_alpha_of_identical_scores_is_nan_not_an_error():
    """Two judges marking the same spans on every side-by-side column give every item the same MQM score (here
    0): alpha is undefined without variation; the krippendorff package raised ValueError, failing the results."""
    assert math.isnan(error_spans.krippendorff_interval([0, 0, 1, 1], [0, 1, 0, 1], [-1.0, -1.0, -1.0, -1.0]))
    assert error_spans.krippendorff_interval([0, 0, 1, 1], [0, 1, 0, 1], [-1.0, -1.0, -5.0, -5.0]) == 1.0

"""Pairwise ranking statistics (docs/methods.md §3, §6, §7; 003 §2.2 and Appendix; 004 §3)."""

import dataclasses
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from evaluation.stats import (
    CHOICE_A,
    CHOICE_B,
    CHOICE_TIE,
    excluded_raters,
    fleiss_kappa,
    landis_koch,
    majority_vote,
    pairwise_agreement,
    preference_counts,
    sign_test,
    spam_misses,
)

A, B, T = CHOICE_A, CHOICE_B, CHOICE_TIE


def pct(count, total):
    """Percent rounded half up, as the paper prints it (Python's round() would round 28.5 to 28)."""
    return int(math.floor(100.0 * count / total + 0.5))


# --------------------------------------------------------------------------- the paper's published data
#
# 003's ratings as released with the paper (github.com/laeubli/parity, data/ratings.csv; spam items and
# the overlapping sentences U-1..U-120 removed, as in the paper's analysis).  One character per item in
# item order: m = MT preferred (coded A), h = Human preferred (coded B), t = tie.  Documents: the 50
# non-spam articles (E-n and I-n are the same article); sentences: the 104 non-spam sentences O-n.
# The strings reproduce 003 Table 1 (per-rater counts) and all confusion matrices of Table 4.

PAPER_DOCUMENTS = {
    "A": "mthmmmmhhh" "hhmththmhm" "hmhmhhhthh" "hmhmhhhtht" "ththmhhhhh",
    "B2": "tttmhmthth" "hhtthmmmhh" "hhhmmhhtht" "hmthhthhht" "hhtttthhtt",
    "C": "hthmtmhtht" "hhtththmmm" "hhtmhhtmhh" "tmtmhhhthm" "hhhthhthmm",
    "D": "mththmtthh" "hththmhmht" "hhhmmtttth" "tmhmhhhthm" "tmtththhhm",
    "E": "mmhhmhhmmh" "hhhmhmhmhm" "mmhmhmmmhm" "hhmmmmhmhm" "mmhhhhmhhm",
    "F": "mthmtmthhh" "hhthhtmttm" "hhhmmhhhht" "tmhttthhhh" "thhhmthhtm",
    "G": "mmhmmmmhhh" "hmhmhhhtmm" "hhmmhhhmhh" "hmhmhmhthh" "hhhhmhthmt",
    "H": "mmhtmmhhhh" "hmmhhhmmmm" "mmthmhhmhm" "hmhhhmhthm" "hhmhhhhhmh",
}
PAPER_SENTENCES = {
    "A": "mmmhmhhhmh" "mmmttmthtt" "hhtthmthmm" "htmmhhhthm" "hmmhhhtmth" "ththhmhttt"
         "ttmtthmhhh" "hmthhhhtht" "tmmmhthhtt" "thhhhtmmmh" "ttmm",
    "B1": "mmhtmhhmmh" "mmmhhhmmhh" "hhhhmmmhmh" "mmhhhhhhhh" "mmmmhhhhhm" "hhhhhhhmmh"
          "mhthmhmhhm" "hhmhhhhhhh" "hhmhmhhhhh" "thtmhhhhmh" "mmmm",
    "E": "mmmmhhmhmh" "mmmmmmmhmh" "hmhmmmmhmh" "mtmmhhmhhh" "mmmtmhmmmh" "mmmmmmmmmm"
         "mhmmhhmhhm" "mmhmhhmmhh" "hhhmhtmhhm" "hmhhhmmhmh" "hmhh",
    "F": "mmmhhhhhth" "mmmhhmmmtt" "htttmhhtmm" "hmhmmhhtht" "hmthhtmmmh" "mhmhmmhhmm"
         "hmmhmhmhhm" "hmmhhthmhh" "mmttmmhhhm" "thhthmmmmh" "mmhh",
}
CODE = {"m": A, "h": B, "t": T}
# condition -> (ratings, raters counted in the paper's totals)
PAPER_CONDITIONS = {
    "fluency/document": (PAPER_DOCUMENTS, ["A", "B2", "C", "D"]),
    "fluency/sentence": (PAPER_SENTENCES, ["A", "B1"]),
    "adequacy/document": (PAPER_DOCUMENTS, ["E", "F", "G", "H"]),
    "adequacy/sentence": (PAPER_SENTENCES, ["E", "F"]),
}


def paper_rows(condition):
    """item, rater (0.. in listed order), choice arrays for one of the paper's conditions."""
    ratings, raters = PAPER_CONDITIONS[condition]
    item = np.concatenate([np.arange(len(ratings[r])) for r in raters])
    rater = np.concatenate([np.full(len(ratings[r]), k) for k, r in enumerate(raters)])
    choice = np.array([CODE[c] for r in raters for c in ratings[r]])
    return item, rater, choice


# --------------------------------------------------------------------------- sign test: the paper's totals


def test_sign_test_reproduces_methods_section_7():
    # docs/methods.md §7 / 003 §3: x = b (Human), n = a + b, ties dropped.
    res = sign_test(a=[103, 74, 66, 44], b=[86, 104, 106, 99])
    assert res.x.tolist() == [86, 104, 106, 99]
    assert res.n.tolist() == [189, 178, 172, 143]
    p = res.p
    assert round(float(p[0]), 3) == 0.244            # adequacy/sentence: p = .244, not significant
    assert 0.01 <= p[1] < 0.05                       # adequacy/document: p < .05
    assert 0.001 <= p[2] < 0.01                      # fluency/sentence: p < .01
    assert p[3] < 0.001                              # fluency/document: p < .001
    for x, n, pv in zip(res.x, res.n, p, strict=True):
        assert pv == binomtest(int(x), int(n), 0.5, alternative="two-sided").pvalue


def _table1_rows():
    """Judgment rows expanded from 003 Table 1 (per rater: MT, tie, Human), plus spam rows.

    Conditions 0 fluency/document, 1 fluency/sentence, 2 adequacy/document, 3 adequacy/sentence.
    Greyed-out fields (sentence ratings of raters who had seen the documents: C, D, G, H) and the
    spam rows are marked for exclusion.
    """
    raters = ["A", "B1", "B2", "C", "D", "E", "F", "G", "H"]
    table1 = [  # condition, rater, MT (a), tie (t), Human (b), greyed out
        (0, "A", 13, 8, 29, False), (0, "B2", 8, 18, 24, False), (0, "C", 12, 14, 24, False),
        (0, "D", 11, 17, 22, False),
        (1, "A", 30, 32, 42, False), (1, "B1", 36, 4, 64, False), (1, "C", 40, 14, 50, True),
        (1, "D", 32, 30, 42, True),
        (2, "E", 26, 0, 24, False), (2, "F", 10, 15, 25, False), (2, "G", 18, 4, 28, False),
        (2, "H", 20, 3, 27, False),
        (3, "E", 59, 3, 42, False), (3, "F", 44, 16, 44, False), (3, "G", 38, 23, 43, True),
        (3, "H", 38, 11, 55, True),
    ]
    cond, rater, choice, drop = [], [], [], []
    for c, name, a, t, b, grey in table1:
        for label, k in ((A, a), (T, t), (B, b)):
            cond += [c] * k
            rater += [raters.index(name)] * k
            choice += [label] * k
            drop += [grey] * k
    # 5 spam documents per rater and condition (003 §2.2), all answered "MT": they must not count
    for c, name, *_ in table1:
        if c in (0, 2):
            cond += [c] * 5
            rater += [raters.index(name)] * 5
            choice += [A] * 5
            drop += [True] * 5
    rng = np.random.default_rng(3)
    order = rng.permutation(len(cond))  # row order must not matter
    return (np.array(cond)[order], np.array(rater)[order], np.array(choice)[order],
            np.array(drop)[order], raters)


def test_table1_counts_through_preference_counts_and_sign_test():
    cond, rater, choice, drop, raters = _table1_rows()
    counts = preference_counts(cond, rater, choice, n_conditions=4, n_raters=len(raters), exclude=drop)
    # totals row of 003 Table 1: (MT, tie, Human)
    assert counts.a.tolist() == [44, 66, 74, 103]
    assert counts.t.tolist() == [57, 36, 22, 19]
    assert counts.b.tolist() == [99, 106, 104, 86]
    assert counts.n.tolist() == [200, 208, 200, 208]
    assert counts.n_excluded.tolist() == [20, 104 + 104, 20, 104 + 104]
    assert counts.rater_a[0, raters.index("A")] == 13 and counts.rater_t[0, raters.index("A")] == 8
    assert counts.rater_b[3, raters.index("F")] == 44 and counts.rater_n[3, raters.index("G")] == 0
    assert counts.rater_n.sum(axis=1).tolist() == counts.n.tolist()

    res = sign_test(counts.a, counts.b, counts.t)
    assert res.x.tolist() == [99, 106, 104, 86]
    assert res.n.tolist() == [143, 172, 178, 189]
    assert res.p[0] < 0.001 and 0.001 <= res.p[1] < 0.01 and 0.01 <= res.p[2] < 0.05
    assert round(float(res.p[3]), 3) == 0.244


def test_table1_rater_counts_from_published_ratings():
    expected = {  # 003 Table 1: MT, tie, Human
        "fluency/document": {"A": (13, 8, 29), "B2": (8, 18, 24), "C": (12, 14, 24), "D": (11, 17, 22)},
        "fluency/sentence": {"A": (30, 32, 42), "B1": (36, 4, 64)},
        "adequacy/document": {"E": (26, 0, 24), "F": (10, 15, 25), "G": (18, 4, 28), "H": (20, 3, 27)},
        "adequacy/sentence": {"E": (59, 3, 42), "F": (44, 16, 44)},
    }
    for condition, per_rater in expected.items():
        item, rater, choice = paper_rows(condition)
        names = PAPER_CONDITIONS[condition][1]
        counts = preference_counts(np.zeros_like(rater), rater, choice, 1, len(names))
        for k, name in enumerate(names):
            got = (counts.rater_a[0, k], counts.rater_t[0, k], counts.rater_b[0, k])
            assert got == per_rater[name], (condition, name)


@pytest.mark.parametrize("half", ["conservative", "average"])
def test_emerson_simon_keeps_the_papers_significance_levels(half):
    # 003 footnote 3: x = b + t/2, n = a + b + t "has no effect on the significance levels reported".
    a = np.array([44, 66, 74, 103])
    t = np.array([57, 36, 22, 19])
    b = np.array([99, 106, 104, 86])
    es = sign_test(a, b, t, ties="emerson-simon", half=half)
    assert es.x.tolist() == [127.5, 124.0, 115.0, 95.5]
    assert es.n.tolist() == [200, 208, 200, 208]
    assert es.p[0] < 0.001                   # fluency/document ***
    assert 0.001 <= es.p[1] < 0.01           # fluency/sentence **
    assert 0.01 <= es.p[2] < 0.05            # adequacy/document *
    assert es.p[3] >= 0.05                   # adequacy/sentence n.s.
    # t even -> x integer -> exactly binomtest
    assert es.p[1] == binomtest(124, 208, 0.5).pvalue
    assert es.p[2] == binomtest(115, 200, 0.5).pvalue


# --------------------------------------------------------------------------- sign test: properties and edges


def test_sign_test_equals_binomtest_on_a_grid():
    n = np.repeat(np.arange(0, 61), np.arange(0, 61) + 1)
    b = np.concatenate([np.arange(k + 1) for k in range(61)])
    res = sign_test(n - b, b)
    for bi, ni, p in zip(b, n, res.p, strict=True):
        if ni == 0:
            assert math.isnan(p)
        else:
            assert p == binomtest(int(bi), int(ni), 0.5, alternative="two-sided").pvalue


@settings(max_examples=200, deadline=None)
@given(a=st.integers(0, 3000), b=st.integers(0, 3000), t=st.integers(0, 400))
def test_sign_test_matches_scipy_binomtest(a, b, t):
    res = sign_test(a, b, t)
    if a + b == 0:
        assert math.isnan(float(res.p))
    else:
        ref = binomtest(b, a + b, 0.5, alternative="two-sided").pvalue
        assert math.isclose(float(res.p), ref, rel_tol=1e-12, abs_tol=1e-300)
        assert float(res.x) == b and int(res.n) == a + b
    # two-sided: swapping the systems changes nothing
    swapped = sign_test(b, a, t)
    assert np.array_equal(res.p, swapped.p, equal_nan=True)


@settings(max_examples=200, deadline=None)
@given(a=st.integers(0, 500), b=st.integers(0, 500), t=st.integers(0, 200))
def test_emerson_simon_half_integer_rules(a, b, t):
    n = a + b + t
    cons = sign_test(a, b, t, ties="emerson-simon")
    avg = sign_test(a, b, t, ties="emerson-simon", half="average")
    assert float(cons.x) == b + t / 2 and int(cons.n) == n
    if n == 0:
        assert math.isnan(float(cons.p)) and math.isnan(float(avg.p))
        return
    if t % 2 == 0:
        ref = binomtest(b + t // 2, n, 0.5).pvalue
        assert math.isclose(float(cons.p), ref, rel_tol=1e-12) and float(cons.p) == float(avg.p)
    else:
        lo = binomtest(b + t // 2, n, 0.5).pvalue
        hi = binomtest(b + t // 2 + 1, n, 0.5).pvalue
        assert math.isclose(float(cons.p), max(lo, hi), rel_tol=1e-12)
        assert math.isclose(float(avg.p), (lo + hi) / 2, rel_tol=1e-12)
        assert float(avg.p) <= float(cons.p)


def test_sign_test_edge_cases():
    # n = 0: nothing to test -> NaN (only ties, ties dropped)
    empty = sign_test(0, 0, 7)
    assert int(empty.n) == 0 and math.isnan(float(empty.p)) and math.isnan(float(empty.share))
    assert math.isnan(float(sign_test(0, 0).p))
    # a = b: no evidence either way
    assert float(sign_test(12, 12).p) == 1.0
    assert float(sign_test(5, 5, 3, ties="emerson-simon").p) == 1.0
    # all ties: excluded -> NaN; Emerson-Simon -> x = n/2 -> p = 1
    assert math.isnan(float(sign_test(0, 0, 9).p))
    es = sign_test(0, 0, 9, ties="emerson-simon")
    assert float(es.x) == 4.5 and int(es.n) == 9 and float(es.p) == 1.0
    # one-sided extreme: 10 of 10 -> 2 * 0.5^10
    assert math.isclose(float(sign_test(0, 10).p), 2 / 1024)
    # n odd, a and b one apart -> p = 1 as binomtest
    assert float(sign_test(4, 5).p) == 1.0 == binomtest(5, 9, 0.5).pvalue
    # scalars give 0-d arrays, arrays broadcast
    assert sign_test(3, 9).p.shape == ()
    assert sign_test([[1], [2]], [3, 4, 5]).p.shape == (2, 3)
    assert float(sign_test(3.0, 9.0).p) == float(sign_test(3, 9).p)


def test_sign_test_rejects_bad_input():
    with pytest.raises(ValueError):
        sign_test(-1, 3)
    with pytest.raises(ValueError):
        sign_test(1.5, 3)
    with pytest.raises(TypeError):
        sign_test(True, 3)
    with pytest.raises(ValueError):
        sign_test(1, 3, ties="split")
    with pytest.raises(ValueError):
        sign_test(1, 3, half="floor")


# --------------------------------------------------------------------------- preference counts


def test_preference_counts_excludes_spam_and_counts_per_rater():
    condition = np.array([0, 0, 0, 0, 1, 1, 1, 0])
    rater = np.array([0, 0, 1, 1, 0, 1, 1, 1])
    choice = np.array([A, B, T, B, A, A, T, A])
    is_spam = np.array([False, False, False, False, False, False, False, True])
    res = preference_counts(condition, rater, choice, n_conditions=2, n_raters=2, exclude=is_spam)
    # condition 0 (spam row 7 dropped): rater 0 A, B; rater 1 T, B
    assert res.a.tolist() == [1, 2] and res.b.tolist() == [2, 0] and res.t.tolist() == [1, 1]
    assert res.n.tolist() == [4, 3] and res.n_excluded.tolist() == [1, 0]
    assert res.rater_a.tolist() == [[1, 0], [1, 1]]
    assert res.rater_b.tolist() == [[1, 1], [0, 0]]
    assert res.rater_t.tolist() == [[0, 1], [0, 1]]
    with_spam = preference_counts(condition, rater, choice, 2, 2)
    assert with_spam.a.tolist() == [2, 2] and with_spam.n_excluded.tolist() == [0, 0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.a = None
    with pytest.raises(ValueError):
        res.a[0] = 7
    with pytest.raises(ValueError):
        preference_counts([0], [0], [3], 1, 1)
    with pytest.raises(ValueError):
        preference_counts([0, 0], [0, 0], [0, 1], 1, 1, exclude=[True])
    empty = preference_counts([], [], [], 2, 3)
    assert empty.n.tolist() == [0, 0] and empty.rater_n.shape == (2, 3)


# --------------------------------------------------------------------------- spam


def test_spam_misses_and_exclusion():
    # rater 0: 4 spam items, 1 tie -> 0.25; rater 1: 2 items, prefers spam once, tie once -> 1.0;
    # rater 2: 3 items, no miss -> 0.0; rater 3: no spam item seen -> NaN
    rater = np.array([0, 0, 0, 0, 1, 1, 2, 2, 2])
    choice = np.array([B, B, T, A, A, T, A, B, B])
    spam_side = np.array([A, A, B, B, A, B, B, A, A])
    res = spam_misses(rater, choice == spam_side, choice == T, n_raters=4)
    assert res.seen.tolist() == [4, 2, 3, 0]
    assert res.missed.tolist() == [1, 2, 0, 0]
    assert res.missed_spam.tolist() == [0, 1, 0, 0]
    assert res.missed_ties.tolist() == [1, 1, 0, 0]
    assert res.miss_rate[:3].tolist() == [0.25, 1.0, 0.0] and math.isnan(res.miss_rate[3])

    assert excluded_raters(res.miss_rate, 0.25).tolist() == [False, True, False, False]   # 0.25 is not > 0.25
    assert excluded_raters(res.miss_rate, 0.0).tolist() == [True, True, False, False]
    assert excluded_raters(res.miss_rate, 0.0, exclude_unassessed=True).tolist() == [True, True, False, True]
    with pytest.raises(ValueError):
        excluded_raters(res.miss_rate, 1.5)
    with pytest.raises(ValueError):
        spam_misses([0], [True], [True], 1)


def test_spam_exclusion_feeds_preference_counts():
    # the paper's procedure: drop spam rows and the rows of raters who miss too many spam items
    rater = np.array([0, 0, 0, 1, 1, 1])
    choice = np.array([A, B, T, T, A, B])
    is_spam = np.array([False, False, True, False, False, True])
    spam_side = np.array([0, 0, A, 0, 0, B])
    miss = spam_misses(rater[is_spam], choice[is_spam] == spam_side[is_spam], choice[is_spam] == T, 2)
    assert miss.missed_ties.tolist() == [1, 0] and miss.missed_spam.tolist() == [0, 1]
    bad = excluded_raters(miss.miss_rate, 0.5)
    res = preference_counts(np.zeros(6, dtype=int), rater, choice, 1, 2, exclude=is_spam | bad[rater])
    assert bad.tolist() == [True, True]
    assert res.n.tolist() == [0] and res.n_excluded.tolist() == [6]


# --------------------------------------------------------------------------- majority vote


def test_majority_vote_rules_and_ties():
    # item: votes                      net (ties abstain)   plurality
    # 0: A A B                         A                    A
    # 1: A B                           tie (1-1)            tie (shared top)
    # 2: A T                           A                    tie (shared top)
    # 3: T T A                         A                    T
    # 4: A A T T B                     A (2-1)              tie (A and T share top)
    # 5: B                             B                    B
    # 6: (no judgment)                 -1                   -1
    # 7: T T                           tie                  T
    votes = {0: [A, A, B], 1: [A, B], 2: [A, T], 3: [T, T, A], 4: [A, A, T, T, B], 5: [B], 7: [T, T]}
    item = np.array([i for i, v in votes.items() for _ in v])
    choice = np.array([c for v in votes.values() for c in v])
    cond = np.array([0 if i < 4 else 1 for i in item])
    net = majority_vote(item, choice, n_items=8, condition=cond, n_conditions=2)
    assert net.label.tolist() == [A, T, A, A, A, B, -1, T]
    assert net.votes_a.tolist() == [2, 1, 1, 1, 2, 0, 0, 0]
    assert net.votes_t.tolist() == [0, 0, 1, 2, 2, 0, 0, 2]
    assert net.item_condition.tolist() == [0, 0, 0, 0, 1, 1, -1, 1]
    # condition 0: items 0-3 -> A, tie, A, A; condition 1: items 4, 5, 7 -> A, B, tie
    assert net.a.tolist() == [3, 1] and net.b.tolist() == [0, 1] and net.t.tolist() == [1, 1]
    assert net.n.tolist() == [4, 3]
    plural = majority_vote(item, choice, n_items=8, condition=cond, n_conditions=2, rule="plurality")
    assert plural.label.tolist() == [A, T, T, T, T, B, -1, T]
    assert plural.a.tolist() == [1, 0] and plural.b.tolist() == [0, 1] and plural.t.tolist() == [3, 2]
    single = majority_vote(item, choice, n_items=8)
    assert single.n.tolist() == [7] and single.a.tolist() == [4]


def test_majority_vote_rejects_items_in_two_conditions():
    with pytest.raises(ValueError):
        majority_vote([0, 0], [A, B], 1, condition=[0, 1], n_conditions=2)
    with pytest.raises(ValueError):
        majority_vote([0, 0], [A, B], 1, rule="mode")
    with pytest.raises(ValueError):
        majority_vote([0], [A], 1, condition=[0])


def test_majority_and_average_reproduce_table2():
    # 003 Table 2, (MT, tie, Human) in %: "Average" = shares of all judgments, "Majority" per item
    expected = {
        "fluency/document": ((22, 29, 50), (24, 10, 66)),
        "fluency/sentence": ((32, 17, 51), (26, 23, 51)),
        "adequacy/document": ((37, 11, 52), (32, 18, 50)),
        "adequacy/sentence": ((50, 9, 41), (38, 32, 31)),
    }
    for condition, (average, majority) in expected.items():
        item, rater, choice = paper_rows(condition)
        counts = preference_counts(np.zeros_like(item), rater, choice, 1, int(rater.max()) + 1)
        n = int(counts.n[0])
        assert (pct(counts.a[0], n), pct(counts.t[0], n), pct(counts.b[0], n)) == average, condition
        mv = majority_vote(item, choice, n_items=int(item.max()) + 1)
        m = int(mv.n[0])
        assert (pct(mv.a[0], m), pct(mv.t[0], m), pct(mv.b[0], m)) == majority, condition


# --------------------------------------------------------------------------- pairwise agreement


def test_pairwise_agreement_hand_computed():
    # item 0: r0 A, r1 A, r2 B  -> pairs (r0,r1) A-A agree, (r0,r2) A-B, (r1,r2) A-B
    # item 1: r0 T, r1 T        -> (r0,r1) T-T agree
    # item 2: r0 B, r1 A, r2 A  -> (r0,r1) B-A, (r0,r2) B-A, (r1,r2) A-A agree
    # 7 pairs, 3 agree: P(A) = 3/7
    # judgments: A 4, B 2, T 2 of 8 -> shares 1/2, 1/4, 1/4
    # WMT: P(tie) = 1/4, P(A>B) = P(A<B) = 3/8 -> P(E) = 1/16 + 2 * 9/64 = 22/64 = 11/32
    #      kappa = (3/7 - 11/32) / (1 - 11/32) = (19/224) / (21/32) = 19/147
    # pooled: P(E) = 1/4 + 1/16 + 1/16 = 3/8 -> kappa = (3/7 - 3/8) / (5/8) = (3/56) * (8/5) = 3/35
    item = np.array([0, 0, 0, 1, 1, 2, 2, 2])
    rater = np.array([0, 1, 2, 0, 1, 0, 1, 2])
    choice = np.array([A, A, B, T, T, B, A, A])
    wmt = pairwise_agreement(item, rater, choice)
    assert wmt.n_judgments == 8 and wmt.n_pairs == 7 and wmt.n_agree == 3
    assert math.isclose(wmt.p_agree, 3 / 7)
    assert wmt.label_share.tolist() == [0.5, 0.25, 0.25] and wmt.p_tie == 0.25
    assert math.isclose(wmt.p_expected, 11 / 32)
    assert math.isclose(wmt.kappa, 19 / 147)
    pooled = pairwise_agreement(item, rater, choice, chance="pooled")
    assert math.isclose(pooled.p_expected, 3 / 8)
    assert math.isclose(pooled.kappa, 3 / 35)
    # pooled table, rows = label of the lower rater code: A-A 2, A-B 2, B-A 2, T-T 1
    assert wmt.table.tolist() == [[2, 2, 0], [2, 0, 0], [0, 0, 1]]
    assert wmt.rater_pairs.tolist() == [[0, 1], [0, 2], [1, 2]]
    assert wmt.rater_tables.tolist() == [
        [[1, 0, 0], [1, 0, 0], [0, 0, 1]],   # r0 vs r1: A-A, T-T, B-A
        [[0, 1, 0], [1, 0, 0], [0, 0, 0]],   # r0 vs r2: A-B, B-A
        [[1, 1, 0], [0, 0, 0], [0, 0, 0]],   # r1 vs r2: A-B, A-A
    ]
    # row order does not matter
    perm = np.array([7, 2, 5, 0, 3, 6, 1, 4])
    again = pairwise_agreement(item[perm], rater[perm], choice[perm])
    assert again.kappa == wmt.kappa and np.array_equal(again.table, wmt.table)


def test_pairwise_agreement_same_rater_twice_and_edge_cases():
    # rater 0 judged item 0 twice: those two judgments are not a pair; each pairs with rater 1
    res = pairwise_agreement([0, 0, 0], [0, 0, 1], [A, B, A])
    assert res.n_pairs == 2 and res.n_agree == 1
    # no pairs at all -> P(A), kappa NaN (P(E) still defined by the label shares)
    lone = pairwise_agreement([0, 1], [0, 1], [A, B])
    assert lone.n_pairs == 0 and math.isnan(lone.p_agree) and math.isnan(lone.kappa)
    assert lone.p_expected == 0.5 and lone.rater_tables.shape == (0, 3, 3)
    # everything a tie -> P(E) = 1 -> kappa NaN
    ties = pairwise_agreement([0, 0], [0, 1], [T, T])
    assert ties.p_agree == 1.0 and ties.p_expected == 1.0 and math.isnan(ties.kappa)
    empty = pairwise_agreement([], [], [])
    assert empty.n_pairs == 0 and math.isnan(empty.p_expected) and math.isnan(empty.kappa)
    # perfect agreement without ties: P(E) = 1/2 -> kappa 1
    assert pairwise_agreement([0, 0, 1, 1], [0, 1, 0, 1], [A, A, B, B]).kappa == 1.0
    with pytest.raises(ValueError):
        pairwise_agreement([0], [0], [A], chance="cohen")
    with pytest.raises(ValueError):
        pairwise_agreement([-1], [0], [A])


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.integers(0, 4), st.integers(0, 2)), max_size=40))
def test_pairwise_agreement_equals_explicit_pair_loop(rows):
    item = np.array([r[0] for r in rows], dtype=np.int64)
    rater = np.array([r[1] for r in rows], dtype=np.int64)
    choice = np.array([r[2] for r in rows], dtype=np.int64)
    res = pairwise_agreement(item, rater, choice, n_raters=5)
    table = np.zeros((3, 3), dtype=int)
    for (i1, r1, c1), (i2, r2, c2) in itertools.combinations(rows, 2):
        if i1 == i2 and r1 != r2:
            (_, lo_c), (_, hi_c) = sorted([(r1, c1), (r2, c2)])
            table[lo_c, hi_c] += 1
    assert np.array_equal(res.table, table)
    assert res.n_pairs == table.sum() and res.n_agree == np.trace(table)
    assert res.rater_tables.sum() == res.n_pairs
    if rows:
        p_tie = sum(c == T for *_, c in rows) / len(rows)
        assert math.isclose(res.p_expected, p_tie**2 + 2 * ((1 - p_tie) / 2) ** 2)


def test_pairwise_agreement_reproduces_table3_and_table4():
    # 003 Table 3: same label (%) and Cohen's kappa with P(E) as in WMT
    expected = {
        "fluency/document": (55, 0.32),
        "fluency/sentence": (45, 0.13),
        "adequacy/document": (49, 0.13),
        "adequacy/sentence": (50, 0.14),
    }
    for condition, (same_label, kappa) in expected.items():
        item, rater, choice = paper_rows(condition)
        res = pairwise_agreement(item, rater, choice)
        assert pct(res.n_agree, res.n_pairs) == same_label, condition
        assert round(res.kappa, 2) == kappa, condition
        assert landis_koch(res.kappa) in ("slight", "fair")
    # the pooled-marginal P(E) would not give the published 0.32
    item, rater, choice = paper_rows("fluency/document")
    assert round(pairwise_agreement(item, rater, choice, chance="pooled").kappa, 2) == 0.28
    # 003 Table 4(a): A (rows) vs B2 (columns), labels a, t, b  ->  our codes A, T, B
    res = pairwise_agreement(item, rater, choice)
    assert res.n_pairs == 300  # 50 documents x 6 rater pairs
    k = res.rater_pairs.tolist().index([0, 1])
    assert res.rater_tables[k][np.ix_([A, T, B], [A, T, B])].tolist() == [[5, 4, 4], [1, 5, 2], [2, 9, 18]]
    # Table 4(g): E vs F, adequacy/document
    item, rater, choice = paper_rows("adequacy/document")
    res = pairwise_agreement(item, rater, choice)
    k = res.rater_pairs.tolist().index([0, 1])
    assert res.rater_tables[k][np.ix_([A, T, B], [A, T, B])].tolist() == [[4, 9, 13], [0, 0, 0], [6, 6, 12]]


# --------------------------------------------------------------------------- Fleiss' kappa and labels


def test_fleiss_kappa_hand_computed():
    # 3 items x 3 raters, categories A, B, T:
    # item 0: A A A -> n = (3, 0, 0): P_0 = (9 - 3) / (3 * 2) = 1
    # item 1: A B T -> n = (1, 1, 1): P_1 = (3 - 3) / 6 = 0
    # item 2: B B T -> n = (0, 2, 1): P_2 = (4 + 1 - 3) / 6 = 1/3
    # P-bar = (1 + 0 + 1/3) / 3 = 4/9
    # p = (4/9, 3/9, 2/9) -> P-bar_e = (16 + 9 + 4) / 81 = 29/81
    # kappa = (4/9 - 29/81) / (1 - 29/81) = (7/81) / (52/81) = 7/52
    item = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    choice = np.array([A, A, A, A, B, T, B, B, T])
    res = fleiss_kappa(item, choice)
    assert res.n_items == 3 and res.n_ratings == 9 and res.equal_raters
    assert np.allclose(res.category_share, [4 / 9, 3 / 9, 2 / 9])
    assert math.isclose(res.p_observed, 4 / 9)
    assert math.isclose(res.p_expected, 29 / 81)
    assert math.isclose(res.kappa, 7 / 52)
    # an item with a single judgment carries no agreement information and is left out
    more = fleiss_kappa(np.r_[item, 9], np.r_[choice, A])
    assert more.n_items == 3 and math.isclose(more.kappa, 7 / 52)


def test_fleiss_kappa_classic_example():
    # Fleiss (1971)-style worked example (10 subjects, 14 raters, 5 categories), as on Wikipedia:
    # P-bar = 0.378, P-bar_e = 0.213, kappa = 0.210
    counts = [[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
              [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]]
    item = np.array([i for i, row in enumerate(counts) for j, c in enumerate(row) for _ in range(c)])
    choice = np.array([j for row in counts for j, c in enumerate(row) for _ in range(c)])
    res = fleiss_kappa(item, choice, n_categories=5)
    assert round(res.p_observed, 3) == 0.378
    assert round(res.p_expected, 3) == 0.213
    assert round(res.kappa, 3) == 0.210
    assert landis_koch(res.kappa) == "fair"


def test_fleiss_kappa_edge_cases():
    empty = fleiss_kappa([], [])
    assert empty.n_items == 0 and math.isnan(empty.kappa)
    singles = fleiss_kappa([0, 1, 2], [A, B, T])
    assert singles.n_items == 0 and math.isnan(singles.p_observed)
    one_label = fleiss_kappa([0, 0, 1, 1], [B, B, B, B])
    assert one_label.p_observed == 1.0 and one_label.p_expected == 1.0 and math.isnan(one_label.kappa)
    uneven = fleiss_kappa([0, 0, 1, 1, 1], [A, A, A, B, B])
    assert not uneven.equal_raters
    # P_0 = 1, P_1 = (1 + 4 - 3) / 6 = 1/3 -> P-bar = 2/3; p = (3/5, 2/5) -> P_e = 13/25
    assert math.isclose(uneven.kappa, (2 / 3 - 13 / 25) / (1 - 13 / 25))
    with pytest.raises(ValueError):
        fleiss_kappa([0, 0], [0, 3])


@settings(max_examples=100, deadline=None)
@given(pairs=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=30))
def test_fleiss_with_two_raters_equals_pooled_pairwise_kappa(pairs):
    # with exactly two judgments per item P-bar is the share of agreeing pairs and P-bar_e the pooled
    # shares -> Fleiss' kappa = pairwise kappa with chance="pooled" (Scott's pi)
    item = np.repeat(np.arange(len(pairs)), 2)
    rater = np.tile([0, 1], len(pairs))
    choice = np.array([c for pair in pairs for c in pair])
    fk = fleiss_kappa(item, choice)
    pk = pairwise_agreement(item, rater, choice, chance="pooled")
    assert math.isclose(fk.p_observed, pk.p_agree)
    assert math.isclose(fk.p_expected, pk.p_expected)
    assert (math.isnan(fk.kappa) and math.isnan(pk.kappa)) or math.isclose(fk.kappa, pk.kappa, abs_tol=1e-12)


def test_landis_koch_labels():
    # 004 §3: none < 0 <= slight <= 0.2 < fair <= 0.4 < moderate <= 0.6 < substantial <= 0.8 < almost perfect
    cases = [(-0.1, "none"), (0.0, "slight"), (0.2, "slight"), (0.21, "fair"), (0.4, "fair"),
             (0.5, "moderate"), (0.6, "moderate"), (0.8, "substantial"), (0.81, "almost perfect"),
             (1.0, "almost perfect")]
    assert [landis_koch(k) for k, _ in cases] == [label for _, label in cases]
    assert landis_koch(float("nan")) == "not computable"
    assert landis_koch(np.float64(0.32)) == "fair"

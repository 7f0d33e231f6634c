"""Error-span statistics against hand-computed cases and the references named in docs/methods.md §11: scipy's
wilcoxon and combine_pvalues, exhaustive enumeration for approximate randomization, the krippendorff package."""
import itertools
import math

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps

from evaluation.stats import error_spans as es

CATEGORIES = ["Accuracy/Mistranslation", "Fluency/Punctuation", "Non-translation", "Fluency/Grammar", "Style",
              "No-error", "Source issue"]
SEVERITIES = ["minor", "major"]


def test_mqm_weights_by_hand():
    w = es.GOOGLE
    assert w.weight("Accuracy/Mistranslation", "major") == 5
    assert w.weight("Fluency/Punctuation", "minor") == 0.1
    assert w.weight("Fluency/Punctuation", "major") == 5
    assert w.weight("Non-translation", "minor") == 25 and w.weight("Non-translation", "major") == 25
    assert w.weight("No-error", "minor") == 0
    assert w.weight("Accuracy/Omission", "major", source_side=True) == 5
    # the old name now means Marot's weights: an error marked in the source keeps its weight
    assert es.GOOGLE_SOURCE_ZERO.weight("Accuracy/Omission", "major", source_side=True) == 5
    assert es.GOOGLE_SOURCE_ZERO.weight("Source issue", "major") == 0


def test_mqm_segment_scores_by_hand():
    # Item 0: rater 0 marks a major mistranslation (5), a minor punctuation error (0.1) and a non-translation
    # (25): 30.1; rater 1 marks No-error: 0. Segment score -(30.1 + 0) / 2. Item 1: rater 0, a minor grammar and
    # a minor style error: -2. Item 2: nobody.
    category = [0, 1, 2, 3, 4]
    severity = [1, 0, 0, 0, 0]
    weight = es.error_weights(CATEGORIES, SEVERITIES, category, severity, [False] * 5)
    np.testing.assert_allclose(weight, [5, 0.1, 25, 1, 1])
    scores = es.mqm_segment_scores(rated_item=[0, 0, 1], rated_rater=[0, 1, 0], error_item=[0, 0, 0, 1, 1],
                                   error_rater=[0, 0, 0, 0, 0], error_weight=weight, n_items=3)
    np.testing.assert_allclose(scores[:2], [-15.05, -2.0])
    assert math.isnan(scores[2])
    with pytest.raises(ValueError):
        es.mqm_segment_scores([0], [0], [1], [0], [1.0], 2)  # an error of a rating not listed


def test_esa_scores_macro_and_plain():
    # Two judges of item 0 are averaged; system 0 has items in two domains.
    item_score = es.item_means([0, 0, 1, 2, 3], [60, 80, 50, 90, 30], 4)
    np.testing.assert_allclose(item_score, [70, 50, 90, 30])
    system = np.array([0, 0, 0, 1])
    domain = np.array([0, 0, 1, 0])
    np.testing.assert_allclose(es.system_means(system, item_score, 2), [70, 30])
    np.testing.assert_allclose(es.system_means(system, item_score, 2, domain, 2, macro=True)[0], (60 + 90) / 2)


def test_wilcoxon_is_scipys_call():
    rng = np.random.default_rng(1)
    d = np.round(rng.normal(2, 10, 80))
    for alternative in ("two-sided", "greater", "less"):
        expected = sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative=alternative).pvalue
        assert es.wilcoxon_p(d, alternative) == expected
    assert math.isnan(es.wilcoxon_p(np.zeros(5), "greater"))


def test_paired_significance_wmt25_and_wmt24_stouffer():
    rng = np.random.default_rng(2)
    n_items = 60
    key = np.tile(np.arange(n_items), 3)
    system = np.repeat([0, 1, 2], n_items)
    domain = np.tile(np.arange(n_items) % 3, 3)
    base = rng.normal(60, 15, n_items)
    score = np.concatenate([base + 6 + rng.normal(0, 5, n_items), base + rng.normal(0, 5, n_items),
                            base - 1 + rng.normal(0, 5, n_items)])
    wmt25 = es.paired_significance(system, key, score, 3, method="wmt25")
    d01 = score[:n_items] - score[n_items:2 * n_items]
    assert wmt25.p[0, 1] == sps.wilcoxon(d01, correction=False, alternative="greater").pvalue
    assert wmt25.n[0, 1] == n_items and math.isnan(wmt25.p[1, 1])
    directional = es.paired_significance(system, key, score, 3, item_domain=domain, method="stouffer")
    per_domain = [sps.wilcoxon(d01[np.arange(n_items) % 3 == d], correction=False, alternative="greater").pvalue
                  for d in range(3)]
    assert directional.p[0, 1] == pytest.approx(sps.combine_pvalues(per_domain, method="stouffer").pvalue,
                                                rel=1e-12)
    assert directional.per_domain[1, 0, 1] == sps.wilcoxon(d01[np.arange(n_items) % 3 == 1],
                                                            correction=False).pvalue
    assert directional.p[0, 1] < 0.05 < directional.p[1, 0]
    # WMT24 combines the two-sided p-values: the same p both ways
    wmt24 = es.paired_significance(system, key, score, 3, item_domain=domain, method="wmt24")
    two_sided = [sps.wilcoxon(d01[np.arange(n_items) % 3 == d], correction=False).pvalue for d in range(3)]
    z = sum(sps.norm.ppf(1 - q) for q in two_sided) / math.sqrt(3)
    assert wmt24.p[0, 1] == wmt24.p[1, 0] == pytest.approx(1 - sps.norm.cdf(z), rel=1e-12)


def test_approximate_randomization_enumerates_small_cases_and_approximates_them():
    a = np.array([70.0, 65, 80, 55, 90, 62, 71, 58, 77, 69])
    b = np.array([60.0, 66, 70, 50, 85, 64, 60, 57, 70, 65])
    d = a - b
    exact = np.mean([abs(np.dot(signs, d)) / d.size >= abs(d.mean()) - 1e-12
                     for signs in itertools.product([-1, 1], repeat=d.size)])
    assert es.approximate_randomization(a, b, trials=2**d.size) == pytest.approx(exact)
    sampled = es.approximate_randomization(a, b, trials=20_000, seed=7)
    assert sampled == es.approximate_randomization(a, b, trials=20_000, seed=7)  # seeded: reproducible
    assert abs(sampled - exact) < 0.01


def test_krippendorff_equals_the_package():
    unit = [0, 0, 1, 1, 1, 2, 2, 3, 3, 3]
    rater = [0, 1, 0, 1, 2, 1, 2, 0, 1, 2]
    score = [70, 75, 40, 35, 45, 90, 80, 20, 30, 25]
    data = np.full((3, 4), np.nan)
    data[rater, unit] = score
    assert es.krippendorff_interval(unit, rater, score) == pytest.approx(
        krippendorff.alpha(reliability_data=data, level_of_measurement="interval"), rel=1e-12)


def test_span_f1_by_hand():
    # Segment 0: judge 0 marks [0, 4) minor, judge 1 marks [2, 6) minor: 2 shared of 4 + 4 -> F1 0.5.
    # Segment 1: judge 0 marks an omission (zero-length at 10) major, judge 1 the same but minor, judge 2 nothing:
    # without severity, pairs (0,1) share 1 of 1 + 1, (0,2) 0 of 1, (1,2) 0 of 1.
    segment = [0, 0, 1, 1, 1]
    judge = [0, 1, 0, 1, 2]
    start = [0, 2, 10, 10, -1]
    end = [4, 6, 10, 10, -1]
    severity = [0, 0, 1, 0, 0]
    result = es.span_f1(segment, judge, start, end, severity)
    assert result.pairs == 4
    assert result.f1 == pytest.approx(2 * (2 + 1) / ((4 + 4) + (1 + 1) + 1 + 1))
    assert result.f1_severity == pytest.approx(2 * 2 / ((4 + 4) + (1 + 1) + 1 + 1))


@pytest.mark.parametrize("n", range(1, 14))
def test_small_samples_give_scipys_exact_and_permutation_p_values(n):
    """n ≤ 13: the vectorised enumeration equals scipy's `method="auto"` (exact without ties, its permutation
    test with ties or zeros), for every alternative."""
    rng = np.random.default_rng(n)
    cases = [rng.normal(size=n), rng.integers(-3, 4, size=n).astype(float), np.round(rng.normal(size=n), 1)]
    for d in cases:
        if not np.any(d):
            continue
        for alternative in ("greater", "less", "two-sided"):
            expected = sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative=alternative).pvalue
            assert es.wilcoxon_p(d, alternative) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_googles_category_labels_as_they_appear_in_the_published_files():
    """Google's TSVs write 'Non-translation!' and 'Source error'; the weights read them as the presets mean."""
    assert es.GOOGLE.weight("Non-translation!", "Major") == 25.0
    assert es.GOOGLE.weight("Non-translation!", "minor") == 25.0
    assert es.GOOGLE.weight("Source error", "Minor") == 1.0
    assert es.GOOGLE_SOURCE_ZERO.weight("Source error", "Major") == 0.0
    assert es.GOOGLE.weight("Fluency/Punctuation", "Minor") == 0.1
    assert es.GOOGLE.weight("No-error", "No-error") == 0.0


@pytest.mark.parametrize("n", [5, 13, 14, 30, 50, 51, 80, 400])
def test_one_call_gives_scipys_three_p_values(n):
    """wilcoxon_both_ways equals three separate scipy calls (method="auto"), with ties and zeros and without;
    "less" for d is "greater" for -d, as the significance matrix reads it."""
    rng = np.random.default_rng(n)
    for d in (rng.normal(size=n), rng.integers(-4, 5, size=n).astype(float), np.round(rng.normal(size=n), 1)):
        if not np.any(d):
            continue
        greater, less, two = es.wilcoxon_both_ways(d)
        for got, alternative in ((greater, "greater"), (less, "less"), (two, "two-sided")):
            expected = sps.wilcoxon(d, zero_method="wilcox", correction=False, alternative=alternative).pvalue
            assert got == pytest.approx(expected, rel=1e-9, abs=1e-15)
        assert less == pytest.approx(sps.wilcoxon(-d, zero_method="wilcox", correction=False,
                                                  alternative="greater").pvalue, rel=1e-9, abs=1e-15)


def test_span_f1_without_any_marks_is_undefined_not_an_error():
    """Two judges of one segment, neither marking anything: the pair is counted, F1 is NaN (0/0)."""
    agreement = es.span_f1(segment=[0, 0], judge=[0, 1], start=[-1, -1], end=[-1, -1], severity=[0, 0])
    assert agreement.pairs == 1 and math.isnan(agreement.f1) and math.isnan(agreement.f1_severity)

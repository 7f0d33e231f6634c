"""Per-translation means at WMT's precision (docs/methods.md §5): summed in a canonical order and rounded to
15 significant digits, the number of digits a parameter; checked against scipy on the rounded means."""
import numpy as np
from scipy import stats as sps

from evaluation.stats import round_significant, significance, system_scores
from evaluation.stats.systems import TRANSLATION_DIGITS

# One judgment per translation, so each translation mean is its score. System 0's first translation and system
# 1's first differ in the 13th significant digit: 12 digits merge them into a tie, 15 keep them apart.
SYSTEM0 = [0.1234567890123, 0.81, -0.42, 1.37, 0.05]
SYSTEM1 = [0.1234567890124, -0.66, 0.29, -1.18, 0.57]


def toy(digits=None):
    system = np.repeat([0, 1], 5)
    segment = np.tile(np.arange(5), 2)
    z = np.array(SYSTEM0 + SYSTEM1)
    kwargs = {} if digits is None else {"digits": digits}
    return system_scores(system, segment, z * 10 + 50, z, n_systems=2, **kwargs)


def test_fifteen_digits_keep_apart_what_twelve_merge():
    default, twelve = toy(), toy(digits=12)
    assert TRANSLATION_DIGITS == 15
    t15 = default.translation_z
    assert t15[0] != t15[5] and twelve.translation_z[0] == twelve.translation_z[5]
    p15 = significance(default.translation_system, t15, 2).p[0, 1]
    p12 = significance(twelve.translation_system, twelve.translation_z, 2).p[0, 1]
    x = [float(f"{v:.14e}") for v in SYSTEM0]  # the means as WMT prints them, 15 significant digits
    y = [float(f"{v:.14e}") for v in SYSTEM1]
    assert p15 == sps.mannwhitneyu(x, y, alternative="greater").pvalue  # no tie: the exact distribution
    x12 = [float(f"{v:.11e}") for v in SYSTEM0]
    y12 = [float(f"{v:.11e}") for v in SYSTEM1]
    assert p12 == sps.mannwhitneyu(x12, y12, alternative="greater").pvalue  # a tie: the normal approximation
    assert p15 != p12


def test_the_same_scores_in_another_row_order_give_the_same_bits():
    """Summed in row order, these three scores give means that round apart even at 15 digits; summed in
    ascending order, the two translations (same scores, reversed rows) are bit-identical."""
    v = [0.260948, -1.099119, 0.592197]
    forward, backward = (v[0] + v[1] + v[2]) / 3, (v[2] + v[1] + v[0]) / 3
    assert round_significant(forward, 15) != round_significant(backward, 15)
    system = np.array([0, 0, 0, 1, 1, 1])
    segment = np.zeros(6, dtype=np.int64)
    z = np.array(v + v[::-1])
    res = system_scores(system, segment, z, z, n_systems=2)
    assert res.translation_z[0] == res.translation_z[1] == round_significant(sum(sorted(v)) / 3, 15)
    assert res.translation_raw[0] == res.translation_raw[1]

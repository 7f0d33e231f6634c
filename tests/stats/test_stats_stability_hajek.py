"""ESA^AI's Hájek estimator inside the ranking-stability bootstrap (docs/methods.md#esa-ai, §12.4): with the
population's strata, the bootstrap's observed scores are `esa_ai.ipw_scores`' scores (a direct computation), and a
resample of the segments re-weights to the same estimator on the resampled matrix, draw for draw the scores of
`esa_ai.bootstrap_scores` (the same segment draws)."""
import numpy as np
import pytest

from evaluation.stats import esa_ai
from evaluation.stats import stability as core

N_SEG, N_SYS = 24, 3


def ai_campaign(seed=3):
    """Scores (NaN where unsent: AI-clean outputs sent at 0.4), verdicts and domains; one judgment per item."""
    rng = np.random.default_rng(seed)
    clean = rng.random((N_SEG, N_SYS)) < 0.5
    clean[:2] = [True, False, True]  # every system keeps a judged AI-clean item in both domains
    sent = ~clean | (rng.random((N_SEG, N_SYS)) < 0.4)
    sent[:2] = True
    level = np.array([85.0, 75.0, 70.0])
    score = np.where(sent, level + rng.normal(0, 8, (N_SEG, N_SYS)) - 15 * ~clean, np.nan)
    group = np.arange(N_SEG) % 2
    seg, sys_ = np.nonzero(sent)
    rows = dict(worker=seg % 5, segment=seg, system=sys_, score=score[seg, sys_])
    population = dict(segment=np.repeat(np.arange(N_SEG), N_SYS), system=np.tile(np.arange(N_SYS), N_SEG),
                      group=np.repeat(group, N_SYS), clean=clean.ravel())
    return score, clean, group, rows, population


@pytest.mark.parametrize("macro", [False, True])
def test_observed_scores_are_the_hajek_scores(macro):
    score, clean, group, rows, population = ai_campaign()
    data = core.prepare(**rows, system_names=["a", "b", "c"], population=population, macro=macro)
    mean, _, n = core.weighted_scores(data, np.ones((1, data.n_workers)), np.ones((1, data.n_segments)))
    direct = esa_ai.ipw_scores(score, clean, group=group, macro=macro).score
    assert mean[0] == pytest.approx(direct, rel=1e-12)
    assert n[0].tolist() == np.isfinite(score).sum(axis=0).tolist()  # judged translations, as before
    plain = core.prepare(**rows, system_names=["a", "b", "c"])  # without strata: the naive mean of the judged
    naive, _, _ = core.weighted_scores(plain, np.ones((1, plain.n_workers)), np.ones((1, plain.n_segments)))
    assert naive[0] == pytest.approx(np.nanmean(score, axis=0)) and not np.allclose(naive[0], direct)


@pytest.mark.parametrize("macro", [False, True])
def test_segment_resamples_reweight_to_the_estimator_of_the_resampled_matrix(macro):
    score, clean, group, rows, population = ai_campaign()
    data = core.prepare(**rows, system_names=["a", "b", "c"], population=population, macro=macro)
    n_boot, seed = 40, 11
    draws = np.random.default_rng(seed).integers(0, N_SEG, size=(n_boot, N_SEG))  # bootstrap_scores' own draws
    counts = np.stack([np.bincount(d, minlength=N_SEG) for d in draws]).astype(float)
    mean, _, _ = core.weighted_scores(data, np.ones((n_boot, data.n_workers)), counts)
    expected = esa_ai.bootstrap_scores(score, clean, group=group, macro=macro, n_boot=n_boot, seed=seed)
    assert mean == pytest.approx(expected, rel=1e-9, nan_ok=True)
    # and one resample by hand: the rows repeated as drawn, the estimator computed afresh
    picked = draws[0]
    again = esa_ai.ipw_scores(score[picked], clean[picked], group=group[picked], macro=macro).score
    assert mean[0] == pytest.approx(again, rel=1e-12)

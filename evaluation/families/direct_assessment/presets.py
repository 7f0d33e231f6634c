"""The Direct Assessment family's statistics presets (docs/methods.md §4.7), declared as `Family.presets`."""
from ...presets import Preset

FAMILY = "direct-assessment"

PRESETS = (
    Preset(name="wmt21-da", label="WMT21 DA: one-sided paired t-test, p < 0.05, pooled over the study, WMT clusters",
           family=FAMILY, test="paired-t", threshold=0.05, threshold_rule="lt", cluster_rule="wmt",
           win_rule="higher", scope="study", default=True),
    Preset(name="appraise", label="Appraise: Mann-Whitney U on z-scores, p ≤ 0.01, per campaign",
           family=FAMILY, test="appraise", threshold=0.01, threshold_rule="le", cluster_rule="wmt",
           win_rule="higher", scope="campaign"),
    Preset(name="crowd-alone",
           label="Crowd-alone scripts (Graham et al.): one-sided paired t-test, p ≤ 0.05, per campaign",
           family=FAMILY, test="paired-t", threshold=0.05, threshold_rule="le", cluster_rule="above",
           win_rule="higher", scope="campaign"),
)

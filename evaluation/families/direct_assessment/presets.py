"""The Direct Assessment family's statistics presets (docs/methods.md §4-§5)."""
from ...presets import Preset, register

FAMILY = "direct-assessment"

register(Preset("wmt21-da", "WMT21 DA: one-sided paired t-test, p < 0.05, pooled over the study, WMT clusters",
                FAMILY, test="paired-t", threshold=0.05, threshold_rule="lt", cluster_rule="wmt",
                win_rule="higher", scope="study", default=True))
register(Preset("appraise", "Appraise: Mann-Whitney U on z-scores, p ≤ 0.01, per campaign", FAMILY,
                test="appraise", threshold=0.01, threshold_rule="le", cluster_rule="wmt", win_rule="higher",
                scope="campaign"))
register(Preset("crowd-alone", "Crowd-alone scripts (Graham et al.): one-sided paired t-test, p ≤ 0.05, per campaign",
                FAMILY, test="paired-t", threshold=0.05, threshold_rule="le", cluster_rule="above",
                win_rule="higher", scope="campaign"))

"""The error-span family's statistics presets (docs/methods.md §11): the worker test on perturbed items and
the cluster rule, declared as `Family.presets`, and which judgments count and how systems are compared
in `SPAN_RULES` under the same names. MQM weights are presets of their own (`MQM_WEIGHTS`, option
`mqm_weights`)."""
from dataclasses import replace

from ...presets import Preset
from ...stats.error_spans import MQM_PRESETS
from .analysis import WMT24, WMT25

FAMILY = "error-spans"

PRESETS = (
    Preset(name="wmt24-esa", label="WMT24 ESA as WMT24 computed it (humeval/tools.py): drop attention checks, "
           "tutorials, unfinished HITs; later rating wins; macro over domains; per-domain two-sided Wilcoxon + "
           "Stouffer (the same p both ways); get_clusters",
           family=FAMILY, test="wilcoxon", threshold=0.05, threshold_rule="lt", cluster_rule="wmt24",
           win_rule="higher", scope="campaign", default=True),
    Preset(name="esa-stouffer", label="ESA with WMT24's filters and macro average, and a directional test: "
           "per-domain one-sided Wilcoxon + Stouffer; WMT clusters",
           family=FAMILY, test="wilcoxon", threshold=0.05, threshold_rule="lt", cluster_rule="wmt",
           win_rule="higher", scope="campaign"),
    Preset(name="wmt25-esa", label="WMT25 ESA (humeval/05-compute_clusters.py): drop tutorials only; a later "
           "rating of an (item, system, wave) slot overwrites an earlier one; plain mean; one-sided Wilcoxon "
           "between neighbours; rank ranges to the first significant neighbour",
           family=FAMILY, test="wilcoxon", threshold=0.05, threshold_rule="lt", cluster_rule="adjacent",
           win_rule="higher", scope="campaign"),
)

SPAN_RULES = {"wmt24-esa": WMT24, "esa-stouffer": replace(WMT24, significance="stouffer"), "wmt25-esa": WMT25}
#: The MQM weight presets by name (evaluation/stats/error_spans.py).
MQM_WEIGHTS = MQM_PRESETS

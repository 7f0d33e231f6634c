"""The error-span family's statistics presets (docs/methods.md §11): the worker test on perturbed items and
the cluster rule, declared as `Family.presets`, and which judgments count and how systems are compared
in `SPAN_RULES` under the same names."""
from ...presets import Preset
from .analysis import WMT24, WMT25

FAMILY = "error-spans"

PRESETS = (
    Preset(name="wmt24-esa", label="WMT24 ESA: drop attention checks, tutorials, unfinished HITs; later rating wins; "
           "macro over domains; per-domain Wilcoxon + Stouffer; WMT clusters",
           family=FAMILY, test="wilcoxon", threshold=0.05, threshold_rule="lt", cluster_rule="wmt",
           win_rule="higher", scope="campaign", default=True),
    Preset(name="wmt25-esa", label="WMT25 ESA: drop tutorials only; every rating counts; plain mean; one-sided "
           "Wilcoxon between neighbours",
           family=FAMILY, test="wilcoxon", threshold=0.05, threshold_rule="lt", cluster_rule="adjacent",
           win_rule="higher", scope="campaign"),
)

SPAN_RULES = {"wmt24-esa": WMT24, "wmt25-esa": WMT25}

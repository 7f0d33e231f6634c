"""Statistics presets: a named set of conventions (docs/methods.md §4-§5), chosen per campaign.

A preset fixes the reliability test and its threshold, whether a worker passes at p < α or
p ≤ α, the cluster rule, which significant results count as wins, and whether a worker is
judged on their pairs in the campaign or in its whole study. The import options of a protocol
default to its family's default preset; options given explicitly override it, and the results
say which preset was used and what differs from it.

A family declares its presets (`Family.presets`); this registry collects those of the families
`settings.MTEVAL_RESULT_FAMILIES` names, in the families' order, without importing a family.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from config.registry import Registry

from .registry import FAMILIES

THRESHOLD_RULES = (("lt", "reliable when p < threshold"), ("le", "reliable when p ≤ threshold"))
CLUSTER_RULES = (("wmt", "WMT: a boundary below a system that wins against every system below it"),
                 ("above", "a system opens a cluster when significantly worse than every member of the one above"),
                 ("adjacent", "WMT25: a boundary between neighbours where the upper one is significantly better"),
                 ("wmt24", "WMT24 (get_clusters): a boundary only where every system above differs from all below"))
SCOPES = (("study", "a worker's pairs in every campaign of the study"), ("campaign", "the campaign's pairs only"))
WIN_RULES = (("higher", "only a higher-ranked system can win"),)


@dataclass(frozen=True)
class Rules:
    """The conventions a preset names and a campaign uses."""

    test: str
    threshold: float
    threshold_rule: str
    cluster_rule: str
    win_rule: str
    scope: str
    #: Significant digits of the per-translation means (docs/methods.md §5; WMT prints 15).
    digits: int = 15


@dataclass(frozen=True, kw_only=True)
class Preset(Rules):
    name: str
    label: str
    family: str
    default: bool = False


def _presets() -> Registry[Preset]:
    """Every registered family's declared presets, by name (a name declared twice is a programming error)."""
    registry: Registry[Preset] = Registry("statistics preset", ValueError)
    for family in FAMILIES.values():
        for preset in family.presets:
            registry.register(preset)
    return registry


def get_preset(name: str) -> Preset:
    return _presets().get_registered(name)


def presets_of(family: str) -> list[Preset]:
    """The presets the family registered under that name declares (none for an unknown name)."""
    found = FAMILIES.get(family)
    return list(found.presets) if found is not None else []


def default_preset(family: str) -> Preset | None:
    return next((p for p in presets_of(family) if p.default), None)


@dataclass(frozen=True, kw_only=True)
class Conventions(Rules):
    """What one campaign's statistics use, with the preset they start from and what differs from it."""

    preset: str

    def differences(self) -> list[str]:
        """The conventions that differ from the preset's, by name."""
        preset = _presets().get(self.preset)
        if preset is None:
            return []
        return [key for key in Rules.__dataclass_fields__ if getattr(preset, key) != getattr(self, key)]

    def as_dict(self) -> dict:
        return {**asdict(self), "preset_label": getattr(_presets().get(self.preset), "label", self.preset),
                "differs_from_preset": self.differences()}


def conventions_of(campaign, family: str) -> Conventions:
    """The campaign's conventions: its stored options, and its preset's (or the family default's) for the rest."""
    options = campaign.options or {}
    preset = _presets().get(options.get("statistics_preset", "")) or default_preset(family)
    if preset is None:
        raise ValueError(f"no statistics preset for the {family!r} family")
    return Conventions(
        preset=preset.name, test=campaign.qc_test or preset.test,
        threshold=float(campaign.qc_threshold if campaign.qc_threshold is not None else preset.threshold),
        threshold_rule=options.get("threshold_rule", preset.threshold_rule),
        cluster_rule=options.get("cluster_rule", preset.cluster_rule),
        win_rule=options.get("win_rule", preset.win_rule), scope=options.get("reliability_scope", preset.scope),
        digits=preset.digits)


def settings_notices(campaign, family: str) -> list[dict]:
    """What the researcher should check in the campaign's settings, as {"what", "text"}. An imported campaign
    whose reliability test is the model's default `paired-t` while its preset tests with another: imports before
    they took their preset's test stored `paired-t`, and a `paired-t` chosen since (import option, PATCH, admin)
    is stored the same way, so no migration can tell the two apart; the notice asks instead (docs/api.md)."""
    legacy = type(campaign)._meta.get_field("qc_test").default
    if not campaign.analysis_only or campaign.qc_test != legacy:
        return []
    preset = _presets().get((campaign.options or {}).get("statistics_preset", "")) or default_preset(family)
    if preset is None or preset.test == legacy:
        return []
    return [{"what": "qc_test", "text": (
        f"The reliability test is {legacy}, which judgment imports stored before they took their preset's test; "
        f"the preset {preset.name} tests workers with {preset.test}. Unless {legacy} was chosen on purpose, put "
        f"the test back to the preset's: PATCH /api/campaigns/{campaign.slug}/ with "
        '{"options": {"qc_test": null}}, or the admin\'s Statistics options; the results then recompute.')}]


def passes(p, threshold: float, rule: str):
    """Whether p-values pass: p < threshold ("lt") or p ≤ threshold ("le"); NaN never passes."""
    import numpy as np

    p = np.asarray(p, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return (p <= threshold) if rule == "le" else (p < threshold)


# Import-option hooks (annotation/protocols/options.py): choices and defaults from the chosen preset.

def _chosen(values: dict) -> Preset | None:
    """The preset the parsed values chose, or their protocol's family default."""
    from annotation.protocols import UnknownProtocol, get_protocol

    chosen = _presets().get(values.get("statistics_preset") or "")
    if chosen is not None:
        return chosen
    try:
        return default_preset(get_protocol(values.get("_protocol", "")).family)
    except UnknownProtocol:
        return None


def install(options_module, reliability_tests) -> None:
    """Fill the import options' choices and defaults from the presets (called from the app's `ready`)."""
    options_module.set_choices("statistics_preset", lambda: [(p.name, p.label) for p in _presets().all()])
    options_module.set_choices("threshold_rule", lambda: THRESHOLD_RULES)
    options_module.set_choices("cluster_rule", lambda: CLUSTER_RULES)
    options_module.set_choices("reliability_scope", lambda: SCOPES)
    from .stats.error_spans import MQM_PRESETS

    options_module.set_choices("mqm_weights", lambda: [(name, w.label or name) for name, w in MQM_PRESETS.items()])

    def preset_default(values):
        preset = _chosen(values)
        return preset.name if preset else None

    def test_default(values):
        preset = _chosen(values)
        return preset.test if preset else None

    def threshold_default(values):
        preset = _chosen(values)
        if preset is not None and values.get("qc_test") in (None, preset.test):
            return preset.threshold
        return reliability_tests.default_threshold(values)

    def from_preset(key):
        return lambda values: getattr(_chosen(values), key, None)

    options_module.set_default("statistics_preset", preset_default)
    options_module.set_default("qc_test", test_default)
    options_module.set_default("qc_threshold", threshold_default)
    options_module.set_default("threshold_rule", from_preset("threshold_rule"))
    options_module.set_default("cluster_rule", from_preset("cluster_rule"))
    options_module.set_default("reliability_scope", from_preset("scope"))

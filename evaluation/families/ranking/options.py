"""A ranking campaign's analysis options, from its stored options (docs/methods.md §8)."""
from __future__ import annotations

from annotation.models import Campaign

from ...stats import trueskill as ts
from ..common.ranked import bootstrap_runs
from .analysis import RankingOptions


def options_of(campaign: Campaign) -> RankingOptions:
    o = campaign.options or {}
    settings = o.get("trueskill") or {}
    return RankingOptions(
        min_gold=int(o.get("min_gold", 4)), min_gold_accuracy=float(o.get("min_gold_accuracy", 0.7)),
        gold_filter=str(o.get("gold_filter", "failed")),
        include_reference=bool(o.get("include_reference", True)),
        bootstrap_runs=bootstrap_runs(campaign),
        seed=int(campaign.seed or 0),
        trueskill=ts.TrueSkillSettings(**{k: settings[k] for k in ("mu", "sigma", "beta", "tau", "draw_probability",
                                                                   "backend") if k in settings}),
    )

"""Test-set difficulty calibration between two DA campaigns that share a benchmark system (docs/methods.md §5).

The API's `calibration/` and the comparison page both read through `calibration()`, from the
per-translation arrays stored with each campaign's results.
"""
from __future__ import annotations

import io
from collections.abc import Mapping

import numpy as np

from annotation.models import Campaign

from ... import charts, stats
from ...models import CampaignResults, SystemResult
from ...presenters.formatting import finite, fixed, signed
from ...services.storing import jsonable


class CalibrationError(ValueError):
    pass


def _translations(campaign: Campaign, workers: str) -> dict[str, dict[str, np.ndarray]]:
    header = CampaignResults.objects.filter(campaign=campaign).only("translations").first()
    if header is None or not header.translations:
        raise CalibrationError(f"campaign {campaign.slug!r} has no computed results yet")
    arrays = np.load(io.BytesIO(bytes(header.translations)))
    names = [str(n) for n in arrays[f"{workers}_names"]]
    system = arrays[f"{workers}_system"]
    return {name: {"raw": arrays[f"{workers}_raw"][system == code], "z": arrays[f"{workers}_z"][system == code]}
            for code, name in enumerate(names)}


def calibration(new: Campaign, old: Campaign, benchmark: str, system_new: str, system_old: str,
                workers: str = "reliable") -> dict:
    """Δ from the benchmark system on both test sets, and the compared systems' gain corrected by Δ."""
    new_t, old_t = _translations(new, workers), _translations(old, workers)
    for campaign, table, name in ((new, new_t, benchmark), (old, old_t, benchmark), (new, new_t, system_new),
                                  (old, old_t, system_old)):
        if name not in table:
            raise CalibrationError(f"system {name!r} has no scores in campaign {campaign.slug!r}")
    result = {}
    for scale in ("raw", "z"):
        values = [t[n][scale] for t, n in ((old_t, benchmark), (new_t, benchmark), (old_t, system_old),
                                             (new_t, system_new))]
        values = [v[np.isfinite(v)] for v in values]
        result[scale] = jsonable(vars(stats.calibrate(*values)))
    return {"benchmark": benchmark, "old": {"campaign": old.slug, "system": system_old},
            "new": {"campaign": new.slug, "system": system_new}, "workers": workers, **result}


def ranked_systems(campaigns: list[Campaign], workers: str) -> dict[int, list[str]]:
    """Per campaign id, its systems (not the human reference) best first; unranked last, on every database."""
    ranked: dict[int, list[tuple[int, str]]] = {c.pk: [] for c in campaigns}
    for campaign_id, name, rank in SystemResult.objects.filter(
            campaign__in=campaigns, workers=workers, is_reference=False).values_list("campaign_id", "system", "rank"):
        ranked[campaign_id].append((rank or 10**9, name))
    return {pk: [name for _, name in sorted(rows)] for pk, rows in ranked.items()}


def top_system(names: list[str], benchmark: str) -> str:
    """The best-ranked system other than the benchmark."""
    return next((name for name in names if name != benchmark), "")


def compare_context(params: Mapping[str, str], candidates: list[Campaign]) -> dict:
    """The comparison page: two campaigns, the shared benchmark, the calibration and its table and chart."""
    workers = params.get("workers", "reliable")
    workers = workers if workers in ("reliable", "all") else "reliable"
    by_slug = {c.slug: c for c in candidates}
    old, new = by_slug.get(params.get("old", "")), by_slug.get(params.get("new", ""))
    context = {"candidates": candidates, "old": old, "new": new, "workers": workers, "error": None,
               "result": None, "shared": [], "old_systems": [], "new_systems": []}
    if params.get("old") and old is None or params.get("new") and new is None:
        context["error"] = "Pick two Direct Assessment campaigns with computed results."
    if old is None or new is None:
        return context
    names = ranked_systems([old, new], workers)
    shared = sorted(set(names[old.pk]) & set(names[new.pk]))
    context.update(shared=shared, old_systems=names[old.pk], new_systems=names[new.pk])
    benchmark = params.get("benchmark") or (shared[0] if len(shared) == 1 else "")
    context["benchmark"] = benchmark
    if not shared:
        context["error"] = "The two campaigns share no system, so there is no benchmark to calibrate with."
        return context
    if not benchmark:
        return context
    if benchmark not in shared:
        context["error"] = f"“{benchmark}” was not evaluated in both campaigns."
        return context
    old_system = params.get("old_system") or top_system(names[old.pk], benchmark)
    new_system = params.get("new_system") or top_system(names[new.pk], benchmark)
    context.update(old_system=old_system, new_system=new_system)
    try:
        result = calibration(new, old, benchmark, new_system, old_system, workers)
    except CalibrationError as exc:
        context["error"] = str(exc)
        return context
    context["result"] = result
    context["table"] = _calibration_table(result)
    context["csv"] = (CALIBRATION_COLUMNS, [{"scale": scale, **result[scale]} for scale in ("raw", "z")])
    context["chart"] = charts.change_chart(
        [{"label": f"benchmark: {benchmark}", "old": result["raw"]["curr_old"], "new": result["raw"]["curr_new"],
          "old_label": old.name, "new_label": new.name},
         {"label": f"compared: {old_system} → {new_system}", "old": result["raw"]["best_old"],
          "new": result["raw"]["best_new"], "old_label": old.name, "new_label": new.name}],
        title="Mean raw score on the old and the new test set", x_label="mean raw score (0–100)")
    return context


CALIBRATION_COLUMNS = ["scale", "curr_old", "curr_new", "delta", "best_old", "best_new", "difference", "gain",
                       "n_curr_old", "n_curr_new", "n_best_old", "n_best_new", "p_curr_old_better",
                       "p_curr_new_better", "p_best_new_better", "p_best_old_better"]


def _smaller_p(a, b) -> float:
    return min(finite(a) or 1, finite(b) or 1)


def _calibration_table(result: dict) -> list[dict]:
    """Rows score, z, n; columns CURR_old, CURR_new, Δ, BEST_old, BEST_new (difference), gain."""
    rows = []
    for scale, label, decimals in (("raw", "score", 1), ("z", "z", 2)):
        r = result[scale]
        p_curr = _smaller_p(r["p_curr_old_better"], r["p_curr_new_better"])
        p_best = _smaller_p(r["p_best_new_better"], r["p_best_old_better"])
        rows.append({"label": label, "curr_old": fixed(r["curr_old"], decimals),
                     "curr_new": fixed(r["curr_new"], decimals), "delta": fixed(r["delta"], decimals),
                     "delta_stars": charts.stars(p_curr), "best_old": fixed(r["best_old"], decimals),
                     "best_new": fixed(r["best_new"], decimals), "difference": signed(r["difference"], decimals),
                     "difference_stars": charts.stars(p_best), "gain": fixed(r["gain"], decimals),
                     "p_curr": charts.format_p(p_curr), "p_best": charts.format_p(p_best)})
    raw = result["raw"]
    rows.append({"label": "n", "curr_old": f"{raw['n_curr_old']:,}", "curr_new": f"{raw['n_curr_new']:,}", "delta": "",
                 "best_old": f"{raw['n_best_old']:,}", "best_new": f"{raw['n_best_new']:,}", "difference": "",
                 "gain": "", "is_n": True})
    return rows

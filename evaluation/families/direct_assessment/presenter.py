"""The Direct Assessment section of the results page: workers, rankings, significance, agreement.

Every figure comes from the stored tables, in a fixed number of queries whatever the campaign's size.
"""
from __future__ import annotations

from collections.abc import Mapping

from ... import charts
from ...models import CampaignResults, SignificanceResult, SystemResult
from ...presenters.formatting import finite, fixed, interval
from ...services.latex import booktabs
from ..common.stability import page_section as stability_section
from .serializers import SystemResultSerializer
from .storage import DOCUMENT_KEY

WORKER_FILTERS = ("reliable", "all")
FILTER_TITLES = {"reliable": "Quality-controlled: reliable workers only", "all": "Unfiltered: all workers"}
SYSTEM_COLUMNS = ["workers", *SystemResultSerializer.Meta.fields]
KAPPA_BINS = ("5", "4", "2")


def system_rows(campaign) -> dict[str, list[dict]]:
    """Per worker filter, the systems in rank order, with the serializer's columns and the filter."""
    tables: dict[str, list[dict]] = {w: [] for w in WORKER_FILTERS}
    for s in SystemResult.objects.filter(campaign=campaign).order_by("workers", "rank", "system"):
        tables.setdefault(s.workers, []).append({"workers": s.workers, **SystemResultSerializer(s).data})
    return tables


def matrices(campaign) -> dict[str, SignificanceResult]:
    return {m.workers: m for m in SignificanceResult.objects.filter(campaign=campaign)}


# Page ------------------------------------------------------------------------------------------

def _worker_display(row: dict) -> dict:
    return {**row, "p_text": charts.format_p(row["p_value"]), "seconds_text": fixed(row["mean_seconds"], 1),
            "mean_raw_text": fixed(row["mean_raw"], 1), "sd_raw_text": fixed(row["sd_raw"], 1),
            "a_p_text": charts.format_p(row["assumption_a_p"])}


def _scatter(rows: list[dict], threshold: float):
    """p-value against mean seconds per judgment, one mark per worker; and how many could not be drawn."""
    points = []
    for r in rows:
        status = "reliable" if r["reliable"] else "not reliable"
        tip = (f"{r['worker']}: {fixed(r['mean_seconds'], 1)} s per judgment, p = "
               f"{charts.format_p(r['p_value'])} over {r['pairs']} pairs, {status}")
        points.append({"x": r["mean_seconds"], "y": r["p_value"], "label": tip,
                       "group": "reliable" if r["reliable"] else "unreliable"})
    svg = charts.scatter_chart(
        points, title="Reliability p-value against mean seconds per judgment, one mark per worker",
        x_label="mean seconds per judgment", y_label="p-value (log scale)", log_y=True, threshold=threshold,
        threshold_label=f"p = {threshold:g}", zone_label=f"reliable (p < {threshold:g})")
    plotted = sum(1 for p in points if finite(p["x"]) is not None and finite(p["y"]) is not None)
    return svg, len(points) - plotted


def _ranking_display(rows: list[dict], other: list[dict]) -> list[dict]:
    other_rank = {r["system"]: r["rank"] for r in other}
    out = []
    for r in rows:
        moved = None
        if r["rank"] is not None and other_rank.get(r["system"]) is not None:
            moved = other_rank[r["system"]] - r["rank"]
        out.append({**r, "z_text": fixed(r["mean_z"]), "z_ci": interval(r["z_low"], r["z_high"], 3),
                    "raw_text": fixed(r["mean_raw"], 1), "raw_ci": interval(r["raw_low"], r["raw_high"], 1),
                    "other_rank": other_rank.get(r["system"]), "moved": moved,
                    "new_cluster": bool(out) and out[-1]["cluster"] != r["cluster"]})
    return out


def _ranking_charts(tables: dict[str, list[dict]]) -> dict[str, object]:
    """The two rankings' charts on shared axes, so their positions can be compared across."""
    domains = {}
    for key, low, high in (("z", "z_low", "z_high"), ("raw", "raw_low", "raw_high")):
        values = [v for rows in tables.values() for r in rows
                  for v in (r[low], r[high], r[f"mean_{key}"]) if finite(v) is not None]
        domains[key] = (min(values), max(values)) if values else (0.0, 1.0)
    out = {}
    for workers, rows in tables.items():
        chart_rows = [{"label": f"{r['rank'] or '–'}. {r['system']}", "cluster": r["cluster"],
                       "is_reference": r["is_reference"], "z": (r["mean_z"], r["z_low"], r["z_high"]),
                       "raw": (r["mean_raw"], r["raw_low"], r["raw_high"])} for r in rows]
        out[workers] = charts.ranking_chart(chart_rows, title=f"System ranking, {FILTER_TITLES.get(workers, workers)}",
                                            domains=domains)
    return out


def _significance_display(matrix: SignificanceResult) -> dict:
    systems = matrix.systems
    rows = []
    for i, name in enumerate(systems):
        cells = []
        for j in range(len(systems)):
            p = matrix.p_values[i][j] if i != j else None
            counts = bool(matrix.wins[i][j]) if matrix.wins else i < j
            fill, ink, _ = charts.p_bin(p) if i != j and counts else ("#FFFFFF", charts.MUTED, "")
            cells.append({"p": charts.format_p(p) if i != j else "", "stars": charts.stars(p) if counts else "",
                          "fill": fill, "ink": ink, "diagonal": i == j})
        rows.append({"rank": i + 1, "system": name, "cells": cells})
    return {"systems": systems, "rows": rows,
            "svg": charts.heatmap(systems, matrix.p_values, wins=matrix.wins or None,
                                  title=f"Significance matrix, {FILTER_TITLES.get(matrix.workers, matrix.workers)}")}


def _agreement_display(agreement: dict) -> list[dict]:
    out = []
    for key, label in (("intra", "same judge (ask again)"), ("inter", "distinct judges")):
        block = agreement.get(key)
        if not block:
            continue
        kappa = block.get("kappa", {})
        out.append({"key": key, "label": label, "pairs": block.get("pairs"),
                    "mean": fixed(block.get("mean_abs_diff"), 2), "sd": fixed(block.get("sd_abs_diff"), 2),
                    "raw": [fixed(kappa.get("raw", {}).get(k)) for k in KAPPA_BINS],
                    "z": [fixed(kappa.get("z", {}).get(k)) for k in KAPPA_BINS]})
    return out


def page_context(campaign, header, workers: list[dict]) -> dict:
    summary = header.summary if header else {}
    scatter, not_plotted = _scatter(workers, float(summary.get("threshold", campaign.qc_threshold)))
    tables = system_rows(campaign)
    rank_charts = _ranking_charts(tables)
    stored = matrices(campaign)
    return {
        "workers": [_worker_display(r) for r in workers], "scatter": scatter, "not_plotted": not_plotted,
        "rankings": [{"workers": w, "title": FILTER_TITLES[w], "svg": rank_charts.get(w),
                      "rows": _ranking_display(tables.get(w, []), tables.get("all" if w == "reliable" else "reliable",
                                                                             []))}
                     for w in WORKER_FILTERS],
        "significance": [{"workers": w, "title": FILTER_TITLES[w], **_significance_display(stored[w])}
                         for w in WORKER_FILTERS if w in stored],
        "agreement_rows": _agreement_display(header.agreement if header else {}),
        "assumption_a": summary.get("assumption_a") or {},
        "document_rankings": _document_rankings(campaign, summary),
        "stability": stability_section(campaign, header),
    }


def _document_rankings(campaign, summary: dict) -> list[dict]:
    """Document-level DA (docs/methods.md §1.1): the ranking of the whole-document scores, per worker filter."""
    if not (campaign.options or {}).get("document_mode"):
        return []
    documents = summary.get(DOCUMENT_KEY) or {}
    tables = {w: (documents.get(w) or {}).get("results", []) for w in WORKER_FILTERS}
    return [{"workers": w, "title": FILTER_TITLES[w],
             "rows": _ranking_display(tables[w], tables["all" if w == "reliable" else "reliable"])}
            for w in WORKER_FILTERS]


# Tables ----------------------------------------------------------------------------------------

def systems_table(campaign, params: Mapping[str, str]):
    """Per worker filter, the systems; for document-level DA (docs/methods.md §1.1) a first column `unit` and
    the document-level rows after the segment-level ones."""
    tables = system_rows(campaign)
    rows = [r for w in WORKER_FILTERS for r in tables.get(w, [])]
    if not (campaign.options or {}).get("document_mode"):
        return SYSTEM_COLUMNS, rows
    header = CampaignResults.objects.filter(campaign=campaign).only("summary").first()
    documents = (header.summary if header else {}).get(DOCUMENT_KEY) or {}
    rows = [{"unit": "segment", **r} for r in rows] + [
        {"unit": "document", "workers": w, **r} for w in WORKER_FILTERS for r in (documents.get(w) or {}).get(
            "results", [])]
    return ["unit", *SYSTEM_COLUMNS], rows


def systems_latex(campaign, params: Mapping[str, str]) -> str:
    """The ranking of one worker filter (default reliable) as a booktabs table, clusters split by rules."""
    workers = params.get("workers", "reliable")
    rows = system_rows(campaign).get(workers if workers in WORKER_FILTERS else "reliable", [])
    columns = [("Rank", "rank", "r"), ("System", "system", "l"), ("z", "mean_z", "r"), ("Raw", "mean_raw", "r"),
               ("N", "translations", "r"), ("N.all", "judgments", "r")]
    formats = {"mean_z": lambda v: fixed(v, 3), "mean_raw": lambda v: fixed(v, 1)}
    return booktabs(columns, rows, formats, group="cluster",
                    caption=f"{campaign.name}: {FILTER_TITLES.get(workers, workers)}")


def significance_table(campaign, params: Mapping[str, str]):
    rows = []
    stored = matrices(campaign)
    for workers in WORKER_FILTERS:
        matrix = stored.get(workers)
        if matrix is None:
            continue
        for i, name in enumerate(matrix.systems):
            for j, other in enumerate(matrix.systems):
                if i != j:
                    p = matrix.p_values[i][j]
                    rows.append({"workers": workers, "system": name, "better_than": other, "p_value": p,
                                 "stars": charts.stars(p)})
    return ["workers", "system", "better_than", "p_value", "stars"], rows


def agreement_table(campaign, params: Mapping[str, str]):
    header = CampaignResults.objects.filter(campaign=campaign).only("agreement").first()
    agreement = header.agreement if header else {}
    columns = ["judges", "pairs", "mean_abs_diff", "sd_abs_diff"] + [
        f"kappa_{scale}_{k}" for scale in ("raw", "z") for k in KAPPA_BINS]
    rows = []
    for key in ("intra", "inter"):
        block = agreement.get(key)
        if block:
            row = {"judges": "same" if key == "intra" else "distinct", "pairs": block.get("pairs"),
                   "mean_abs_diff": block.get("mean_abs_diff"), "sd_abs_diff": block.get("sd_abs_diff")}
            for scale in ("raw", "z"):
                for k in KAPPA_BINS:
                    row[f"kappa_{scale}_{k}"] = block.get("kappa", {}).get(scale, {}).get(k)
            rows.append(row)
    return columns, rows

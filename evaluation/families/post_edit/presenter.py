"""The post-editing section of the results page: HTER per system, the editors curve, the stages, the edits."""
from __future__ import annotations

from annotation.services.stages import stage_progress

from ... import charts
from ...presenters.formatting import fixed
from ...services.results_read import stored_rows


def page_context(campaign, header, workers: list[dict], request) -> dict:
    summary = header.summary if header else {}
    systems = stored_rows(campaign, "systems")
    curve = stored_rows(campaign, "curve")
    series: dict[str, list[tuple[int, float]]] = {}
    for row in curve:
        series.setdefault(row["system"], []).append((row["editors"], row["hter"]))
    chart_rows = [{"label": r["system"], "cluster": r.get("cluster"), "is_reference": False,
                   "score": (r["score"], None, None)} for r in systems]
    edits = stored_rows(campaign, "edits")
    return {
        "summary": summary,
        "systems": [{**r, "score_text": fixed(r["score"], 2)} for r in systems],
        "ranking_chart": charts.ranking_chart(chart_rows, title="HTER (lower is better)", panels=(("score", "hter"),),
                                              width=560) if chart_rows else "",
        "curve_chart": charts.curve_chart(series, title="HTER against the number of editors",
                                          x_label="editors per output", y_label="HTER") if series else "",
        "curve_rows": curve, "stages": stage_progress(campaign),
        "edits": edits[:200], "edits_total": len(edits),
    }

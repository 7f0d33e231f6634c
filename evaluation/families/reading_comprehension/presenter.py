"""The reading-comprehension section of the results page: per system the share of questions answered correctly
(Wilson 95 % interval, the human translation as a control row), the questions and the stages."""
from __future__ import annotations

from annotation.services.stages import stage_progress

from ... import charts
from ...presenters.formatting import fixed
from ...services.results_read import stored_rows
from .storage import root_of


def page_context(campaign, header, workers: list[dict], request) -> dict:
    campaign = root_of(campaign)
    summary = header.summary if header else {}
    systems = stored_rows(campaign, "systems")
    chart_rows = [{"label": r["system"], "cluster": r.get("cluster"), "is_reference": r.get("is_control", False),
                   "score": (r["score"], r.get("low"), r.get("high"))} for r in systems]
    questions = stored_rows(campaign, "questions")
    return {
        "summary": summary,
        "systems": [{**r, "score_text": fixed(100 * r["score"], 1) if r["score"] is not None else "–",
                     "low_text": fixed(100 * r["low"], 1) if r.get("low") is not None else "–",
                     "high_text": fixed(100 * r["high"], 1) if r.get("high") is not None else "–"} for r in systems],
        "ranking_chart": charts.ranking_chart(chart_rows, title="Questions answered correctly",
                                              panels=(("score", "share correct"),), width=560) if chart_rows else "",
        "stages": stage_progress(campaign),
        "questions": questions[:200], "questions_total": len(questions),
    }

"""The crowd reference-translation section of the results page: the translators, the stages, the accepted
translations."""
from __future__ import annotations

from annotation.services.stages import stage_progress

from ...presenters.formatting import fixed
from ...services.results_read import stored_rows


def _percent(value) -> str:
    return "–" if value is None else f"{100 * value:.0f} %"


def page_context(campaign, header, workers: list[dict], request) -> dict:
    summary = header.summary if header else {}
    translators = stored_rows(campaign, "systems")
    accepted = stored_rows(campaign, "accepted")
    return {
        "summary": summary,
        "translators": [{**r, "score_text": fixed(r["score"], 2),
                         "professional_text": fixed(r["bleu_vs_professional"], 2),
                         "flagged_text": _percent(r["flagged_share"]), "pasted_text": _percent(r["pasted_share"]),
                         "repeated_text": _percent(r.get("repeated_share")),
                         "source_copy_text": _percent(r.get("source_copy_share"))}
                        for r in translators],
        "threshold_text": _percent(summary.get("flag_threshold")),
        "mt_marked_text": _percent(summary.get("mt_marked_share")),
        "stages": stage_progress(campaign),
        "accepted": accepted[:200], "accepted_total": len(accepted),
    }

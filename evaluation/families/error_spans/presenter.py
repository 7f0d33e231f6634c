"""The error-span section of the results page: the system table with clusters, errors by category and severity as
stacked bars, scores per domain, the workers' perturbation test, agreement, and one document with every judge's
spans side by side, for reading disagreements."""
from __future__ import annotations

from django.db.models import Q

from annotation.models import Document, Judgment, System, SystemOutput

from ... import charts
from ...presenters.formatting import fixed, percent
from ...services.results_read import stored_rows
from ..base import BadQuery
from ..common.stability import page_section as stability_section
from .applies import flags

#: How the page's ranking stability section names the score it ranks by, in prose.
RANKED_BY = {"esa": "the mean ESA score of the items", "mqm": "the MQM score (minus the weighted errors) of the items"}
SCORE_LABELS = {"esa": "ESA score (mean 0–100)", "mqm": "MQM score (minus weighted errors per segment)"}


def pieces(text: str, spans: list[dict]) -> list[dict]:
    """The text cut at the spans' edges: [{text, severity?, category?}], for marking in a template (which
    escapes each piece). Offsets are code points; an omission becomes a `[missing]` piece at the end."""
    cuts, out, at = sorted(spans, key=lambda s: (s["start"], s["end"])), [], 0
    for span in cuts:
        start, end = max(span["start"], at), span["end"]
        if start > at:
            out.append({"text": text[at:start]})
        if end > start:  # omissions (empty, at the end) come after the text; a span inside an earlier one adds nothing
            out.append({"text": text[start:end], "severity": span.get("severity"), "category": span.get("category")})
            at = end
    if at < len(text):
        out.append({"text": text[at:]})
    out += [{"text": "[missing]", "severity": s.get("severity"), "category": s.get("category")}
            for s in cuts if s["start"] == s["end"] == len(text)]
    return out


def document_view(campaign, doc_id: str, system: str) -> dict:
    """Every segment of one document as one system translated it, with each judge's spans and score. A judgment
    counts when its item shows the system: as its one output (ESA, MQM) or as one of its side-by-side columns
    (contrastive ESA, MQM-SxS: no output of their own; the column's candidate key picks its spans)."""
    document = Document.objects.filter(campaign=campaign, doc_id=doc_id).first()
    if document is None:
        raise BadQuery(f"no document {doc_id[:60]!r} in this campaign")
    target = System.objects.filter(campaign=campaign, name=system).first()
    if target is None:
        raise BadQuery(f"no system {system[:60]!r} in this campaign")
    judgments = (Judgment.objects.filter(Q(item__output__system=target) | Q(item__output__isnull=True),
                                         campaign=campaign, item__segment__document=document, item__item_type="system")
                 .select_related("annotator__user", "item__segment", "item__output").order_by("item__segment__seg_id",
                                                                                             "annotator_id", "id"))
    texts = dict(SystemOutput.objects.filter(segment__document=document, system=target)
                 .values_list("segment_id", "text"))
    segments: dict[int, dict] = {}
    for j in judgments:
        segment = j.item.segment
        shown = _shown(j, system)
        if shown is None:
            continue
        spans, score = shown
        text = j.item.output.text if j.item.output_id else texts.get(segment.pk, "")
        entry = segments.setdefault(segment.pk, {"seg_id": segment.seg_id, "source": segment.source,
                                                 "target": text, "judges": []})
        entry["judges"].append({"worker": j.annotator.label, "score": score, "spans": spans,
                                "pieces": pieces(text, spans)})
    scored = {r["seg_id"]: r["score"] for r in stored_rows(campaign, "segments")
              if r["system"] == system and r["doc_id"] == doc_id}
    for entry in segments.values():  # the item score the system table is built from (MQM: not stored per judgment)
        entry["score"] = scored.get(entry["seg_id"])
    return {"document": doc_id, "system": system, "domain": document.domain, "segments": list(segments.values())}


def _shown(judgment, system: str) -> tuple[list[dict], float | None] | None:
    """The judgment's spans on the system's translation and its score for it (None for MQM-SxS, which scores
    nothing); None when its item does not show that system. A side-by-side item names its columns in its payload
    (`candidates`: key, kind, name); the system's column is its `system` candidate of that name (a degraded copy
    is a `bad` one), and that column's spans and score carry its key."""
    if judgment.item.output_id is not None:
        return judgment.spans or [], judgment.score
    key = next((c.get("key") for c in (judgment.item.payload or {}).get("candidates", ())
                if c.get("kind") == "system" and c.get("name") == system), None)
    if key is None:
        return None
    return [s for s in judgment.spans or () if s.get("candidate") == key], (judgment.scores or {}).get(key)


def page_context(campaign, header, workers: list[dict], request) -> dict:
    summary = header.summary if header else {}
    kind = summary.get("score_name", "esa")
    systems = stored_rows(campaign, "systems")
    breakdown = stored_rows(campaign, "breakdown")
    order = [r["system"] for r in systems]
    chart_rows = [{"label": r["system"], "cluster": r.get("cluster"), "is_reference": False,
                   "score": (r["score"], None, None)} for r in systems if r.get("rank")]
    params = request.GET if request is not None else {}
    documents = list(Document.objects.filter(campaign=campaign).order_by("position")
                     .values_list("doc_id", flat=True)[:500])
    view = None
    chosen_doc = params.get("document") or (documents[0] if documents else "")
    chosen_system = params.get("system") or (order[0] if order else "")
    if chosen_doc and chosen_system:
        try:
            view = document_view(campaign, chosen_doc, chosen_system)
        except BadQuery as exc:
            view = {"error": str(exc)}
    return {
        "summary": summary, "score_label": SCORE_LABELS.get(kind, kind),
        "systems": [{**r, "score_text": fixed(r["score"], 2 if kind == "mqm" else 1),
                     "mean_text": fixed(r.get("mean_score"), 1), "low_text": fixed(r.get("score_low"), 1),
                     "high_text": fixed(r.get("score_high"), 1), "naive_text": fixed(r.get("naive_score"), 1)}
                    for r in systems],
        "ai_saved_text": percent((summary.get("ai_assist") or {}).get("saved")),
        "ai_tau_text": fixed((summary.get("ai_assist") or {}).get("kendall_tau_vs_naive"), 2),
        "ranking_chart": charts.ranking_chart(chart_rows, title=SCORE_LABELS.get(kind, kind),
                                              panels=(("score", kind),), width=560) if chart_rows else "",
        "error_bars": charts.stacked_error_bars(breakdown, order, title="Errors per judgment by category and severity"),
        "breakdown": breakdown,
        "domains": stored_rows(campaign, "domains"),
        "perturbation": [{**r, "p_text": charts.format_p(r["p_value"]), "major_text": percent(r["major_on_perturbed"])}
                         for r in stored_rows(campaign, "perturbation")],
        "agreement": [{**r, "value_text": fixed(r["value"], 3)} for r in stored_rows(campaign, "agreement")],
        "win_rates": [{**r, "rate_text": percent(r["win_rate"])} for r in stored_rows(campaign, "win_rates")],
        "consistency": [{**r, "share_text": percent(r["share_alike"]), "marked_text": percent(r["share_both_marked"])}
                        for r in stored_rows(campaign, "consistency")],
        "documents": documents, "system_names": order, "chosen_document": chosen_doc,
        "chosen_system": chosen_system, "document_view": view,
        "stability": stability_section(campaign, header), "ranked_by": RANKED_BY.get(kind, kind),
        "review": review_section(campaign), "applies": flags(campaign),
    }


def review_section(campaign) -> dict | None:
    """The review stage's tables (review.py), formatted; empty lists while nothing is reviewed."""
    systems = stored_rows(campaign, "review_systems")
    digits = 2 if systems and systems[0]["score_name"] == "mqm" else 1
    return {"systems": [{**r, "first_text": fixed(r["first_pass_score"], digits),
                         "reviewed_text": fixed(r["reviewed_score"], digits)} for r in systems],
            "changes": [{**r, **{f"{a}_text": percent(r[f"{a}_share"]) for a in ("kept", "changed", "deleted")}}
                        for r in stored_rows(campaign, "review_changes")],
            "raters": [{**r, **{k + "_text": percent(r[k]) for k in ("precision_exact", "recall_exact",
                                                                      "precision_lenient", "recall_lenient")}}
                       for r in stored_rows(campaign, "review_raters")]}

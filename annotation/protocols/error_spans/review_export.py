"""The review stage's export in Google's MQM layout (docs/api.md, "Review of error spans"): `mqm-review-tsv`, a row
per reviewed span as `mqm-tsv` writes it (the reviewer as `rater`), with two more columns: `review`, what the
reviewer did (kept, changed, added or restored; `No-error` rows: empty), `first_rater`, whose first pass was
reviewed, `restored` ("restored" on a span the reviewer restored from the errors the first pass deleted over a prior
rater's pass, an imported Anthea judgment; else empty) and `span_rater`, whose span it is: the first rater's (kept,
changed), the prior rater's (restored) or the reviewer's (added)."""
from collections.abc import Iterator

from annotation.building.judgment_files import ExportFormat
from annotation.models import Campaign, Judgment

from .export import CHUNK, MQM_HEADER, _cell, _field, _marked
from .mqm_tsv import spreadsheet_safe

HEADER = (*MQM_HEADER, "review", "first_rater", "restored", "span_rater")


def mqm_review_lines(campaign: Campaign) -> Iterator[str]:
    yield "\t".join(HEADER) + "\n"
    rows = (Judgment.objects.filter(campaign=campaign, item__output__isnull=False).order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__output__system__name",
        "item__segment__document__doc_id", "item__segment__seg_id", "item__segment__source", "item__output__text",
        "spans", "answer").iterator(chunk_size=CHUNK))
    for external_id, username, system, doc, seg_id, source, target, spans, answer in rows:
        source, target = _field(source), _field(target)
        answer, reviewer = answer or {}, external_id or username
        first = _cell(answer.get("first_rater", ""))
        head = f"{_cell(system)}\t{_cell(doc)}\t{seg_id}\t{seg_id}\t{_cell(reviewer)}\t"
        if not spans:
            yield (f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(target)}\tNo-error\tNo-error\t\t\t{first}"
                   "\t\t\n")
            continue
        whose = {"kept": first, "changed": first, "restored": _cell(answer.get("prior_rater", "")),
                 "added": _cell(reviewer)}
        for span in spans:
            start, end, origin = span["start"], span["end"], span.get("origin", "")
            shown = target if start == end == len(target) else _marked(target, start, end)
            yield (f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(shown)}\t"
                   f"{_cell(span.get('category', ''))}\t{_cell(span['severity'])}\t\t{_cell(origin)}"
                   f"\t{first}\t{'restored' if origin == 'restored' else ''}\t{whose.get(origin, '')}\n")


MQM_REVIEW_TSV = ExportFormat("mqm-review-tsv", mqm_review_lines, "text/tab-separated-values; charset=utf-8", "tsv",
                              lambda spec: spec.stage_name == "review" and "spans" in spec.export_columns)

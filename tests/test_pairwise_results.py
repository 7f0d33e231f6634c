"""Pairwise statistics through the whole stack: the paper's totals (docs/methods.md §7, 003 §3) via a
pairwise-csv import and the API, and simulated judges through the annotator API."""
import json
import random
from collections import Counter

import pytest
from django.test import Client
from scipy.stats import binomtest

from annotation.models import HitItem
from annotation.services.campaign_import import import_campaign
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from .conftest import as_bytes, campaign_lines

pytestmark = pytest.mark.django_db
# 003 Table 1 totals: (MT preferred, tie, Human preferred) per condition.
PAPER = {("adequacy", "sentence"): (103, 19, 86), ("adequacy", "document"): (74, 22, 104),
         ("fluency", "sentence"): (66, 36, 106), ("fluency", "document"): (44, 57, 99)}


def paper_csv() -> list[bytes]:
    lines = ["rater,criterion,unit,item,choice,spam"]
    for (criterion, unit), (mt, tie, human) in PAPER.items():
        choices = ["MT"] * mt + ["tie"] * tie + ["Human"] * human
        lines += [f"r{i % 4},{criterion},{unit},{unit}-{i},{c}," for i, c in enumerate(choices)]
    return [(line + "\n").encode() for line in lines]


def test_the_papers_totals_give_its_p_values(api, researcher):
    campaign = import_judgments(paper_csv(), fmt="pairwise-csv", name="Laeubli 2018", systems=["MT", "Human"],
                                owner=researcher).campaign
    compute_results(campaign)
    body = api.get(f"/api/campaigns/{campaign.slug}/pairwise/").json()
    assert body["systems"] == ["MT", "Human"]
    got = {(c["criterion"], c["unit"]): c for c in body["conditions"]}
    # x = b (Human preferred), n = a + b; two-sided sign test.
    assert (got["adequacy", "sentence"]["x"], got["adequacy", "sentence"]["n"]) == (86, 189)
    assert round(got["adequacy", "sentence"]["p_value"], 3) == 0.244
    assert (got["adequacy", "document"]["x"], got["adequacy", "document"]["n"]) == (104, 178)
    assert got["adequacy", "document"]["p_value"] < 0.05
    assert (got["fluency", "sentence"]["x"], got["fluency", "sentence"]["n"]) == (106, 172)
    assert got["fluency", "sentence"]["p_value"] < 0.01
    assert (got["fluency", "document"]["x"], got["fluency", "document"]["n"]) == (99, 143)
    assert got["fluency", "document"]["p_value"] < 0.001
    for (criterion, unit), (mt, tie, human) in PAPER.items():
        row = got[criterion, unit]
        assert (row["a"], row["t"], row["b"]) == (mt, tie, human)
        # scipy directly: binomtest(x, n, 0.5, alternative="two-sided")
        assert row["p_value"] == pytest.approx(binomtest(human, mt + human, 0.5).pvalue, rel=1e-12)
        assert sum(r["a"] + r["b"] + r["t"] for r in row["raters"]) == mt + tie + human
        # Emerson-Simon keeps the paper's significance levels (its footnote 3).
        assert (row["p_value_emerson_simon"] < 0.05) == (row["p_value"] < 0.05)


class Judge:
    """Prefers `favourite` (0 first system, 1 second) with probability `p`, tie with `tie`; careful
    judges never fall for spam. A random clicker picks A, B or tie uniformly."""

    def __init__(self, name, careful=True, p=0.75, tie=0.1, favourite=1):
        self.name, self.careful, self.p, self.tie, self.favourite = name, careful, p, tie, favourite

    def choose(self, item: HitItem, rng: random.Random) -> tuple[str, int]:
        """The screen choice and what it means (0 first system, 1 second, 2 tie)."""
        left = item.payload["left"]
        side_of = {left: "A", 1 - left: "B"}  # system index → screen side
        if not self.careful:
            choice = rng.choice(["A", "B", "tie"])
        elif item.item_type == "spam":
            spam = item.payload["spam_side"]
            choice = "B" if spam == "A" else "A"
        else:
            roll = rng.random()
            system = self.favourite if roll < self.p else (1 - self.favourite if roll < 1 - self.tie else None)
            choice = "tie" if system is None else side_of[system]
        meaning = 2 if choice == "tie" else (left if choice == "A" else 1 - left)
        return choice, meaning


def run_judge(client, campaign, judge, rng, tally):
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": judge.name})
    if response.status_code != 302:
        return False
    token = response["Location"].split("/")[2]
    items = {i.id: i for i in HitItem.objects.filter(hit__assignments__token=token)}
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        item = items[state["item"]["id"]]
        choice, meaning = judge.choose(item, rng)
        if item.item_type != "spam":
            tally[(judge.name, item.payload["unit"])][meaning] += 1
        response = client.post(f"/api/hit/{token}/", json.dumps({"item": item.id, "choice": choice}),
                               content_type="application/json")
        assert response.status_code == 201
        state = response.json()
    return True


def test_simulated_judges_the_clicker_is_excluded_and_the_preference_found(api, researcher):
    lines = as_bytes(campaign_lines(60, systems=("human", "mt"), docs=12, length=12))
    campaign = import_campaign(lines, name="Parity", protocol="pairwise-adequacy", redundancy=4, seed=11, options={
        "systems": ["mt", "human"], "unit": "both", "docs_per_hit": 4,
        "spam_rates": {"document": 0.5, "sentence": 0.3}}, owner=researcher).campaign
    rng = random.Random(7)
    judges = [Judge(f"careful-{i}") for i in range(11)] + [Judge("clicker", careful=False)]
    rng.shuffle(judges)
    tally = {(j.name, u): Counter() for j in judges for u in ("document", "sentence")}
    client = Client()
    done = [j.name for j in judges if run_judge(client, campaign, j, rng, tally)]
    assert "clicker" in done and len(done) == 12

    compute_results(campaign)
    body = api.get(f"/api/campaigns/{campaign.slug}/pairwise/").json()
    conditions = {c["unit"]: c for c in body["conditions"]}
    assert set(conditions) == {"document", "sentence"}
    for unit, condition in conditions.items():
        raters = {r["rater"]: r for r in condition["raters"]}
        for name in done:
            mine = tally[(name, unit)]
            if sum(mine.values()):
                assert (raters[name]["a"], raters[name]["b"], raters[name]["t"]) == (mine[0], mine[1], mine[2])
        assert raters["clicker"]["excluded"] is True
        assert not any(r["excluded"] for n, r in raters.items() if n != "clicker")
        careful = Counter()
        for name in done:
            if name != "clicker":
                careful.update(tally[(name, unit)])
        # totals leave out the excluded clicker and never count spam items
        assert (condition["a"], condition["b"], condition["t"]) == (careful[0], careful[1], careful[2])
        assert condition["x"] == careful[1] and condition["n"] == careful[0] + careful[1]
        assert condition["p_value"] == pytest.approx(binomtest(careful[1], careful[0] + careful[1]).pvalue)
        assert condition["p_value"] < 0.01  # judges prefer the second system ("human") 75 % of the time
        assert condition["spam_missed"] >= raters["clicker"]["spam_missed"]
    # the clicker is excluded for missing spam items (over both units), the careful judges never miss one
    clicker = [r for c in conditions.values() for r in c["raters"] if r["rater"] == "clicker"]
    assert sum(r["spam_missed"] for r in clicker) > 0
    assert all(r["spam_missed"] == 0 for c in conditions.values() for r in c["raters"] if r["rater"] != "clicker")
    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]}
    assert workers["clicker"]["reliable"] is False and workers["careful-0"]["reliable"] is True
    assert workers["careful-0"]["pairs"] > 0  # spam items seen


def test_export_tells_which_system_was_on_which_side(api, client, researcher):
    lines = as_bytes(campaign_lines(20, systems=("human", "mt"), docs=4))
    campaign = import_campaign(lines, name="Sides", protocol="pairwise-fluency", seed=3,
                               options={"systems": ["mt", "human"], "unit": "document"}, owner=researcher).campaign
    run_judge(client, campaign, Judge("j1"), random.Random(1), {("j1", u): Counter() for u in ("document",)})
    rows = json.loads(b"".join(api.get(f"/api/campaigns/{campaign.slug}/judgments/",
                                       {"format": "json"}).streaming_content))
    assert rows and all({r["system_A"], r["system_B"]} == {"mt", "human"} for r in rows)
    for row in rows:
        item = HitItem.objects.get(hit__number=row["hit"], hit__campaign=campaign, position=row["position"] - 1)
        assert row["system_A"] == ["mt", "human"][item.payload["left"]]
        assert row["preferred"] == {"A": row["system_A"], "B": row["system_B"], "tie": "tie"}[row["choice"]]
        assert row["unit"] == "document" and row["doc_id"] == item.payload["doc_id"]
    header = b"".join(api.get(f"/api/campaigns/{campaign.slug}/judgments/").streaming_content).split(b"\r\n")[0]
    assert header.endswith(b"unit,system_A,system_B,preferred")


def test_results_show_in_the_admin(client, researcher):
    researcher.is_superuser = True
    researcher.save()
    campaign = import_judgments(paper_csv(), fmt="pairwise-csv", name="Admin view", systems=["MT", "Human"]).campaign
    client.force_login(researcher)
    response = client.post("/admin/evaluation/campaignstatistics/", {
        "action": "recompute", "_selected_action": [campaign.pk]})
    assert response.status_code == 302
    page = client.get(f"/admin/evaluation/campaignstatistics/{campaign.pk}/change/")
    assert page.status_code == 200
    assert b"adequacy" in page.content and b"0.244" in page.content.replace(b"0.2440", b"0.244")
    listing = client.get("/admin/evaluation/campaignstatistics/")
    assert b"Admin view" in listing.content and b"4 / 4" in listing.content

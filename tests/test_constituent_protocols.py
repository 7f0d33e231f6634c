"""WMT08's constituent variants (docs/methods.md §8.7; Callison-Burch 2009 §4): ranking of, or acceptance of,
one highlighted phrase per output, with the spans from the campaign file in code points."""
import json
import re

import pytest
from django.test import Client

from annotation.models import Judgment
from annotation.services.campaign_import import CampaignFileError, import_campaign
from evaluation.analyses import compute_results
from evaluation.services.results_read import stored_rows

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db
SYSTEMS = ("sysA", "sysB", "sysC")


def lines(n: int = 6, bad: dict | None = None) -> list[str]:
    out = []
    for i in range(n):
        source = f"😀 Der Rat hat heute entschieden ({i})"
        systems = {name: f"é The council decided {name} today ({i})" for name in SYSTEMS}
        spans = {"source": [2, 9], "systems": {name: [2, 13] for name in SYSTEMS}}
        record = {"doc_id": "d", "seg_id": i, "source": source, "reference": f"The council decided ({i})",
                  "systems": systems, "constituent": spans}
        if bad and i == 1:
            record["constituent"] = bad
        out.append(json.dumps(record, ensure_ascii=False))
    return out


def campaign(protocol: str, **kw):
    return import_campaign(lines(**kw), name=protocol, protocol=protocol, redundancy=2, seed=1, hit_size=10,
                           options={"screen_size": 3}).campaign


def one_judge(c, answer_of) -> None:
    """Worker w1 through one HIT of `c`, answering each item with `answer_of(item)`."""
    client = Client()
    token = start(client, c, "w1")
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        response = post_answer(client, token, {"item": state["item"]["id"], **answer_of(state["item"])})
        assert response.status_code == 201, response.content
        state = response.json()


@pytest.mark.parametrize("protocol", ["ranking-constituent", "constituent-acceptance"])
def test_annotators_get_the_spans_in_code_points(protocol):
    c = campaign(protocol)
    client = Client()
    token = start(client, c, "w1")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert set(item) == {"id", "protocol", "source", "reference", "candidates", "source_span"}
    s, e = item["source_span"]
    assert item["source"][s:e] == "Der Rat"  # code points: the emoji before it is one character
    for candidate in item["candidates"]:
        s, e = candidate["span"]
        assert candidate["text"][s:e] == "The council"
        assert set(candidate) == {"key", "text", "span"}


@pytest.mark.parametrize("bad, reason", [
    (None, "constituent"),
    ({"source": [2, 9], "systems": {"sysA": [2, 13], "sysB": [2, 13]}}, "no constituent span for system 'sysC'"),
    ({"source": [5, 99], "systems": {name: [2, 13] for name in SYSTEMS}}, "source span"),
    ({"source": [2, 9], "systems": {"sysA": [3, 3], "sysB": [2, 13], "sysC": [2, 13]}}, "system 'sysA' span"),
    ({"source": [True, 9], "systems": {name: [2, 13] for name in SYSTEMS}}, "source span"),
])
def test_bad_spans_refuse_the_file(bad, reason):
    with pytest.raises(CampaignFileError) as caught:
        campaign("ranking-constituent", bad=bad or {"oops": 1})
    assert reason in str(caught.value) and "seg_id=1" in str(caught.value)


def test_acceptance_answers_are_validated_stored_as_codes_and_scored():
    c = campaign("constituent-acceptance")
    client = Client()
    for worker in ("w1", "w2"):
        token = start(client, c, worker)
        state = client.get(f"/api/hit/{token}/").json()
        item = state["item"]
        keys = [cand["key"] for cand in item["candidates"]]
        for body in ({"item": item["id"], "accept": {k: "yes" for k in keys[1:]}},
                     {"item": item["id"], "accept": {**{k: "yes" for k in keys}, "zz": "no"}},
                     {"item": item["id"], "accept": {k: "maybe" for k in keys}},
                     {"item": item["id"], "ranks": {k: 1 for k in keys}},
                     {"item": item["id"], "accept": {k: "yes" for k in keys}, "extra": 1}):
            assert post_answer(client, token, body).status_code == 400, body
        while not state["done"]:
            item = state["item"]
            texts = {cand["key"]: cand["text"] for cand in item["candidates"]}
            answer = {k: "yes" if "sysA" in t or "sysB" in t else "no" for k, t in texts.items()}
            response = post_answer(client, token, {"item": item["id"], "accept": answer})
            assert response.status_code == 201, response.content
            state = response.json()
    assert set(v for j in Judgment.objects.filter(campaign=c) for v in j.ranks.values()) == {1, 2}
    compute_results(c)
    rows = {r["system"]: r for r in stored_rows(c, "systems")}
    assert rows["sysA"]["score"] == rows["sysB"]["score"] == 1.0 and rows["sysC"]["score"] == 0.0
    assert rows["sysC"]["rank"] == 3 and rows["sysC"]["code_2"] == rows["sysC"]["n"]
    agreement = stored_rows(c, "agreement")
    assert agreement and agreement[0]["p_agree"] == 1.0


def test_constituent_ranking_is_scored_by_the_ranking_family():
    c = campaign("ranking-constituent")

    def ranked_by_text(item):  # sysA < sysB < sysC by text
        order = sorted(item["candidates"], key=lambda cand: cand["text"])
        return {"ranks": {cand["key"]: i + 1 for i, cand in enumerate(order)}}

    one_judge(c, ranked_by_text)
    compute_results(c)
    assert [r["system"] for r in stored_rows(c, "systems")] == list(SYSTEMS)


def test_acceptance_agreement_without_double_judged_answers_shows_dashes_not_empty_cells(admin_client):
    """One judge only: the agreement row has 0 comparisons and no P(A) or κ, which the page shows as "–" (it
    showed empty cells; found in the Chromium walk)."""
    c = campaign("constituent-acceptance")
    one_judge(c, lambda item: {"accept": {cand["key"]: "yes" for cand in item["candidates"]}})
    compute_results(c)
    page = admin_client.get(f"/results/{c.slug}/").content.decode()
    agreement = page[page.index('id="agreement"'):]
    row = re.search(r"<tr><td>inter</td>(.*?)</tr>", agreement, re.S).group(1)
    cells = re.findall(r'<td class="num">(.*?)</td>', row)
    assert cells[0] == "0" and cells[1] == "–" and cells[3] == "–", cells

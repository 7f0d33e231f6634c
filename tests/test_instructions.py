"""Instructions (issue 26, docs/api.md#instructions): a line's `instructions` (or its document's) reach every screen's
payload through the one judging read; the option `instruction_judgment` asks yes / partly / no per translation,
refused whole (400, nothing stored) when missing or malformed, stored with the judgment and exported; the
instruction-following results are computed (API, CSV, LaTeX, page); esa-jsonl carries `instructions` through."""
import csv
import io
import json
import re

import pytest

from annotation.models import Assignment, Document, Judgment, Segment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db
RULE = "Formal register (Sie); keep product names in English; at most 20 words."
DOC_RULE = "Write for children aged 8; no jargon."


def lines(systems=("alpha", "beta"), n=8, instructions=True) -> list[bytes]:
    """Two documents of `n // 2` segments; doc-0's first line carries its own instructions, doc-1's lines the
    document's."""
    out = []
    for i in range(n):
        record = {"doc_id": f"doc-{i % 2}", "seg_id": i // 2 + 1, "source": f"Quelle Nummer {i} ist hier.",
                  "reference": f"Reference number {i}.",
                  "systems": {s: f"Translation {i} by {s} goes here." for s in systems}}
        if instructions and i == 0:
            record["instructions"] = RULE
        if instructions and i % 2 == 1:
            record["document_instructions"] = DOC_RULE
        out.append((json.dumps(record) + "\n").encode())
    return out


def make(protocol="adequacy", judged=True, data=None, owner=None, **raw):
    options = {"seed": 3, "source_language": "de", "redundancy": 2,
               **({"hit_size": 20} if protocol == "adequacy" else {}),
               **({"instruction_judgment": "true"} if judged else {}), **raw}
    parsed = get_protocol(protocol).parse_options(options)
    return import_campaign(data or lines(), name=f"{protocol} instructions", protocol=protocol, parsed=parsed,
                           owner=owner).campaign


def test_instructions_stored_per_segment_and_document_and_shown(client):
    campaign = make(judged=False)
    by_id = {(s.document.doc_id, s.seg_id): s.instructions for s in Segment.objects.filter(campaign=campaign)}
    assert by_id == {("doc-0", 1): RULE, ("doc-0", 2): "", ("doc-0", 3): "", ("doc-0", 4): "",
                     **{("doc-1", k): DOC_RULE for k in (1, 2, 3, 4)}}
    assert dict(Document.objects.filter(campaign=campaign).values_list("doc_id", "instructions")) == {
        "doc-0": "", "doc-1": DOC_RULE}
    token = start(client, campaign, "w-shown")
    seen = {}
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        item = state["item"]
        assert "instruction_targets" not in item  # the option is off
        seen[item["candidate"]] = item.get("instructions")
        state = post_answer(client, token, {"item": item["id"], "score": 50}).json()
    shown = {v for v in seen.values()}
    assert shown == {RULE, DOC_RULE, None}


def test_bad_instructions_refuse_the_file_with_the_line():
    data = lines(n=4)
    record = json.loads(data[2])
    record["instructions"] = ["not", "text"]
    data[2] = (json.dumps(record) + "\n").encode()
    record = json.loads(data[3])
    record["document_instructions"] = "Other rules for the same document."
    data[3] = (json.dumps(record) + "\n").encode()
    with pytest.raises(CampaignFileError) as refused:
        make(data=data)
    text = str(refused.value)
    assert "line 3" in text and "'instructions' must be a string" in text
    assert "line 4" in text and "document_instructions" in text
    assert not Segment.objects.exists()


def _nothing_stored(assignment_id: int, position: int) -> None:
    assert not Judgment.objects.filter(assignment_id=assignment_id).exists()
    assert Assignment.objects.get(pk=assignment_id).position == position


@pytest.mark.parametrize("instruction, reason", [
    (None, "'instruction' is missing"),
    ({"answer": "maybe"}, "'answer' must be \"yes\", \"partly\" or \"no\""),
    ({"answer": "yes", "note": "x" * 1001}, "at most 1000 characters"),
    ({"answer": "yes", "colour": "red"}, "must be {\"answer\""),
    ({"answer": ["yes"]}, "'answer' must be"),
    ("yes", "must be {\"answer\""),
    ({"some-key": {"answer": "yes"}}, "on this screen"),
])
def test_a_bad_instruction_judgment_is_refused_and_nothing_stored(client, instruction, reason):
    campaign = make()
    token = start(client, campaign, "w-bad")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["instruction_targets"] == [{"key": "", "label": "The translation"}]
    body = {"item": item["id"], "score": 40}
    if instruction is not None:
        body["instruction"] = instruction
    response = post_answer(client, token, body)
    assert response.status_code == 400 and reason in response.json()["error"]
    _nothing_stored(Assignment.objects.get(token=token).pk, 0)


def test_the_instruction_judgment_is_stored_once_and_exported(client, api, researcher):
    campaign = make(owner=researcher)
    token = start(client, campaign, "w-good")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    body = {"item": item["id"], "score": 40, "instruction": {"answer": "partly", "note": "  too   long "}}
    assert post_answer(client, token, body).status_code == 201
    assert post_answer(client, token, body).status_code == 201  # a replay: answered as before, stored once
    judgment = Judgment.objects.get(item_id=item["id"])
    assert judgment.instruction == {"": {"answer": "partly", "note": "too long"}} and judgment.score == 40
    rows = list(csv.DictReader(io.StringIO(b"".join(api.get(
        f"/api/campaigns/{campaign.slug}/judgments/", {"format": "csv"}).streaming_content).decode())))
    assert rows[0]["instruction"] == "partly" and rows[0]["instruction_note"] == "too long"
    assert rows[0]["instructions"] == (item.get("instructions") or "")


def test_without_the_option_an_instruction_field_is_refused(client):
    campaign = make(judged=False)
    token = start(client, campaign, "w-off")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    response = post_answer(client, token, {"item": item["id"], "score": 5, "instruction": {"answer": "yes"}})
    assert response.status_code == 400 and "unexpected field 'instruction'" in response.json()["error"]


def test_contrastive_esa_judges_each_translation(client):
    campaign = make("contrastive-esa", perturbation_rate=0)
    token = start(client, campaign, "w-ces")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    keys = [c["key"] for c in item["candidates"]]
    assert [t["key"] for t in item["instruction_targets"]] == keys
    assert [t["label"] for t in item["instruction_targets"]] == ["Translation A", "Translation B"]
    own = {"item": item["id"], "candidates": {k: {"spans": [], "score": 70} for k in keys}}
    one = {**own, "instruction": {keys[0]: {"answer": "yes"}}}
    response = post_answer(client, token, one)
    assert response.status_code == 400 and "every translation shown" in response.json()["error"]
    stranger = {**own, "instruction": {keys[0]: {"answer": "yes"}, keys[1]: {"answer": "no"}, "zz": {"answer": "no"}}}
    assert "'zz', which is not a translation shown" in post_answer(client, token, stranger).json()["error"]
    _nothing_stored(Assignment.objects.get(token=token).pk, 0)
    both = {**own, "instruction": {keys[0]: {"answer": "yes"}, keys[1]: {"answer": "no", "note": "informal"}}}
    assert post_answer(client, token, both).status_code == 201
    assert Judgment.objects.get(item_id=item["id"]).instruction == {
        keys[0]: {"answer": "yes", "note": ""}, keys[1]: {"answer": "no", "note": "informal"}}


def test_mqm_offers_the_instruction_violation_category_only_when_enabled(client):
    plain = make("mqm", judged=False, perturbation_rate=0)
    enabled = make("mqm", judged=False, perturbation_rate=0, instruction_violation="true")
    assert "Instruction violation" not in get_protocol("mqm").categories(plain.options)
    token = start(client, enabled, "w-mqm")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["categories"][-1] == "Instruction violation"
    body = {"item": item["id"], "score": 30,
            "spans": [{"start": 0, "end": 3, "severity": "major", "category": "Instruction violation"}]}
    assert post_answer(client, token, body).status_code == 201


def _answer_all(client, campaign, worker: str, answer_of) -> None:
    token = start(client, campaign, worker)
    state = client.get(f"/api/hit/{token}/").json()
    while not state["done"]:
        item = state["item"]
        found = re.search(r"Translation (\d+) by (\w+)", item["candidate"])
        answer = answer_of(int(found.group(1)), found.group(2)) if found else "no"
        body = {"item": item["id"], "score": 50, "instruction": {"answer": answer}}
        state = post_answer(client, token, body).json()
        assert "item" in state or state["done"], state


def test_instruction_following_results_api_tables_and_page(client, api, researcher):
    campaign = make(owner=researcher)
    # alpha follows the instructions, beta only partly on its even segments and not at all elsewhere
    for worker in ("w1", "w2"):
        _answer_all(client, campaign, worker, lambda i, system: "yes" if system == "alpha" else
                    "partly" if i % 2 == 0 else "no")
    compute_results(campaign)
    body = api.get(f"/api/campaigns/{campaign.slug}/instruction-following/").json()
    by_system = {r["system"]: r for r in body["systems"]}
    alpha, beta = by_system["alpha"], by_system["beta"]
    judged = list(Judgment.objects.filter(campaign=campaign, item__item_type="system").values_list(
        "item__output__system__name", "item__segment_id", "instruction"))
    counted = {(s, j[""]["answer"]): sum(1 for s2, _, j2 in judged if s2 == s and j2[""]["answer"] == j[""]["answer"])
               for s, _, j in judged}
    assert (alpha["yes"], alpha["n"], alpha["yes_share"]) == (counted["alpha", "yes"], counted["alpha", "yes"], 1.0)
    assert (beta["partly"], beta["no"], beta["yes"]) == (counted["beta", "partly"], counted["beta", "no"], 0)
    assert alpha["n"] == 14 and beta["n"] == 14  # two workers, seven items of each system in the HIT
    assert alpha["yes_low"] == pytest.approx(0.7846, abs=1e-4) and alpha["yes_high"] == 1.0  # Wilson, 14 of 14
    shared = {seg for s, seg, _ in judged if s == "alpha"} & {seg for s, seg, _ in judged if s == "beta"}
    (pair,) = body["pairs"]
    assert (pair["system_a"], pair["a_better"], pair["b_better"], pair["ties"]) == ("alpha", len(shared), 0, 0)
    assert pair["p_value"] == pytest.approx(2 / 2 ** len(shared))  # exact sign test: every shared item won
    csv_text = api.get(f"/api/campaigns/{campaign.slug}/tables/instruction_following/", {"format": "csv"})
    assert b"yes_share" in b"".join(csv_text.streaming_content) if csv_text.streaming else b"yes_share" in \
        csv_text.content
    latex = api.get(f"/api/campaigns/{campaign.slug}/tables/instruction_pairs/", {"format": "latex"})
    assert latex.status_code == 200 and b"\\toprule" in latex.content and b"alpha" in latex.content
    client.force_login(campaign.owner)
    page = client.get(f"/results/{campaign.slug}/").content.decode()
    assert 'id="instruction-following"' in page and "<svg" in page and "instruction_following.csv" in page


def test_a_campaign_without_the_option_has_no_instruction_results(api, researcher):
    campaign = make(judged=False, owner=researcher)
    response = api.get(f"/api/campaigns/{campaign.slug}/instruction-following/")
    assert response.status_code == 400 and "instruction following" in response.json()["detail"]
    names = [t["name"] for t in api.get(f"/api/campaigns/{campaign.slug}/tables/").json()["tables"]]
    assert "instruction_following" not in names


def test_esa_jsonl_carries_instructions_through(api, researcher):
    records = [{"system": s, "doc_id": "d1", "seg_id": k, "rater": "r1", "score": 60.5 + k, "spans": [],
                "source": f"Quelle {k}.", "target": f"Target {k} of {s}.",
                **({"instructions": f"Rule {k}: be brief."} if k == 1 else {})}
               for k in (1, 2) for s in ("alpha", "beta")]
    data = [(json.dumps(r) + "\n").encode() for r in records]
    first = import_judgments(data, fmt="esa-jsonl", name="esa in", owner=researcher).campaign
    assert sorted(Segment.objects.filter(campaign=first).values_list("seg_id", "instructions")) == [
        (1, "Rule 1: be brief."), (2, "")]
    exported = b"".join(api.get(f"/api/campaigns/{first.slug}/judgments/", {"format": "esa-jsonl"})
                        .streaming_content).decode().splitlines()
    assert sorted(json.dumps(json.loads(line), sort_keys=True) for line in exported) == sorted(
        json.dumps(r, sort_keys=True) for r in records)
    again = import_judgments([(line + "\n").encode() for line in exported], fmt="esa-jsonl", name="esa again",
                             owner=researcher).campaign
    assert sorted(Segment.objects.filter(campaign=again).values_list("seg_id", "instructions")) == [
        (1, "Rule 1: be brief."), (2, "")]
    conflicting = [*data, (json.dumps({**records[0], "system": "gamma", "instructions": "Other."}) + "\n").encode()]
    with pytest.raises(Exception, match="instructions differ"):
        import_judgments(conflicting, fmt="esa-jsonl", name="esa bad", owner=researcher)


def test_scores_split_by_media_kind(api, researcher):
    """An esa-jsonl file whose document d1 shows an image, d2's first segment an audio clip and its second nothing:
    per system the mean score per media group, with and without media (docs/methods.md#instruction-following)."""
    image = [{"kind": "image", "src": "https://example.org/a.png"}]
    audio = [{"kind": "audio", "src": "https://example.org/b.mp3"}]
    scores = {("d1", 1): (80.0, 40.0), ("d1", 2): (70.0, 30.0), ("d2", 1): (90.0, 50.0), ("d2", 2): (60.0, 60.0)}
    records = []
    for (doc, seg), pair in scores.items():
        for system, score in zip(("alpha", "beta"), pair, strict=True):
            records.append({"system": system, "doc_id": doc, "seg_id": seg, "rater": "r1", "score": score,
                            **({"doc_media": image} if doc == "d1" else {}),
                            **({"media": audio} if (doc, seg) == ("d2", 1) else {})})
    campaign = import_judgments([(json.dumps(r) + "\n").encode() for r in records], fmt="esa-jsonl",
                                name="esa media", owner=researcher).campaign
    compute_results(campaign)
    rows = api.get(f"/api/campaigns/{campaign.slug}/media-split/").json()["results"]
    got = {(r["system"], r["media"]): (r["n"], r["mean_score"]) for r in rows}
    assert got == {("alpha", "image"): (2, 75.0), ("alpha", "audio"): (1, 90.0), ("alpha", "none"): (1, 60.0),
                   ("alpha", "with media"): (3, 80.0), ("alpha", "without media"): (1, 60.0),
                   ("beta", "image"): (2, 35.0), ("beta", "audio"): (1, 50.0), ("beta", "none"): (1, 60.0),
                   ("beta", "with media"): (3, 40.0), ("beta", "without media"): (1, 60.0)}
    with_media = next(r for r in rows if (r["system"], r["media"]) == ("alpha", "with media"))
    assert (with_media["score_low"], with_media["score_high"]) == (pytest.approx(55.1595, abs=1e-3),
                                                                   pytest.approx(104.8405, abs=1e-3))
    latex = api.get(f"/api/campaigns/{campaign.slug}/tables/media_split/", {"format": "latex"})
    assert latex.status_code == 200 and b"with media" in latex.content


def test_esa_errors_may_be_marked_as_instruction_violations(client):
    campaign = make("esa", judged=False, perturbation_rate=0, instruction_violation="true")
    token = start(client, campaign, "w-esa-iv")
    item = client.get(f"/api/hit/{token}/").json()["item"]
    assert item["categories"] == ["Error", "Instruction violation"]
    span = {"start": 0, "end": 3, "severity": "minor"}
    refused = post_answer(client, token, {"item": item["id"], "score": 50, "spans": [span]})
    assert refused.status_code == 400 and "'category' is missing" in refused.json()["error"]
    body = {"item": item["id"], "score": 50, "spans": [{**span, "category": "Instruction violation"}]}
    assert post_answer(client, token, body).status_code == 201
    plain = make("esa", judged=False, perturbation_rate=0)
    assert "categories" not in client.get(f"/api/hit/{start(client, plain, 'w-esa')}/").json()["item"]


def test_instructions_and_targets_cost_no_statement_on_the_annotator_path(client):
    """The payload's instructions come with the one judging read (annotation/services/judging_sql.py): a GET and a
    POST of a campaign with instructions and the instruction judgment run as many statements as without them."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = []
    for campaign in (make(judged=False, data=lines(instructions=False)), make()):
        token = start(client, campaign, f"w-count-{campaign.pk}")
        client.get(f"/api/hit/{token}/")  # starts the item's clock (one write, once)
        with CaptureQueriesContext(connection) as got:
            item = client.get(f"/api/hit/{token}/").json()["item"]
            body = {"item": item["id"], "score": 50, **({"instruction": {"answer": "no"}}
                                                        if "instruction_targets" in item else {})}
            assert post_answer(client, token, body).status_code == 201
        # a statement's PREPARE runs once per connection, on its first use (judging_sql.py), whichever campaign
        counts.append(sum(1 for q in got.captured_queries if not q["sql"].startswith("PREPARE")))
    assert counts[0] == counts[1] == 3  # the read of the GET, the read and the write of the POST

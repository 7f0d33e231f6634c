"""Relative-ranking campaigns (docs/methods.md §8.1): the screens planned, gold units, what annotators are sent, the
validation of their answers, the command-line flags."""
import io
import itertools
import json
from collections import Counter

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from annotation.models import Assignment, Campaign, HitItem, Judgment, SystemOutput
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign

from .conftest import post_answer, start

pytestmark = pytest.mark.django_db

SYSTEMS = ("online-A", "online-B", "uedin", "cmu", "limsi", "human")
WORDS = ("die Regierung hat am Montag neue Regeln für kleine Betriebe vorgestellt die ab dem kommenden Frühjahr "
         "gelten sollen nachdem lange mit den Verbänden verhandelt worden war").split()
ENGLISH = ("the government on monday presented new rules for small businesses that are to apply from next spring "
           "after long talks with the associations had taken place").split()


def words(pool, i: int, n: int = 10) -> str:
    return " ".join(pool[(i * 5 + k * 3) % len(pool)] for k in range(n))


def ranking_lines(segments: int = 30, systems=SYSTEMS, gold_every: int = 3) -> list[str]:
    """A campaign file: `segments` lines of 5 documents; every `gold_every`-th line carries its own "gold"."""
    lines = []
    for i in range(segments):
        record = {"doc_id": f"doc-{i % 5}", "seg_id": i // 5 + 1, "source": f"{words(WORDS, i)} ({i}).",
                  "reference": f"{words(ENGLISH, i)} (ref {i}).",
                  "systems": {name: f"{words(ENGLISH, i + 7 * j, 9 + j % 3)} [{name} {i}]"
                              for j, name in enumerate(systems)}}
        if gold_every and i % gold_every == 0:
            record["gold"] = f"{words(ENGLISH, i + 1)} (gold {i})."
        lines.append(json.dumps(record, ensure_ascii=False))
    return lines


def ranking(screen_size=5, gold="none", segments=30, systems=SYSTEMS, seed=5, **raw):
    """Import through the Python entry with options parsed as the front-ends parse them."""
    parsed = get_protocol("ranking").parse_options({"screen_size": screen_size, "gold": gold, "screens_per_hit": 10,
                                                    "seed": seed, "source_language": "de", **raw})
    lines = [(line + "\n").encode() for line in ranking_lines(segments, systems)]
    return import_campaign(lines, name=f"rank {screen_size} {gold}", protocol="ranking", parsed=parsed).campaign


def screens(campaign) -> list[HitItem]:
    return list(HitItem.objects.filter(hit__campaign=campaign).select_related("segment__document")
                .order_by("hit__number", "position"))


def output_texts(campaign) -> dict[tuple[int, str], str]:
    return {(segment, name): text for segment, name, text in SystemOutput.objects.filter(segment__campaign=campaign)
            .values_list("segment_id", "system__name", "text")}


GRID = list(itertools.product((3, 4, 5), ("none", "best", "best-worst")))


@pytest.mark.parametrize("size,gold", GRID)
def test_screens_rank_one_segment_and_balance_the_pairs(size, gold):
    campaign = ranking(size, gold)
    items = screens(campaign)
    n_segments, n_systems = campaign.segments.count(), len(SYSTEMS)
    per_segment = -(-n_systems // size)
    assert len(items) == n_segments * per_segment  # ⌈S/N⌉ screens a segment
    assert campaign.hits.count() == -(-len(items) // 10)
    assert all(hit.items.count() <= 10 for hit in campaign.hits.all())
    texts = output_texts(campaign)
    lines = {(json.loads(line)["doc_id"], json.loads(line)["seg_id"]): json.loads(line) for line in ranking_lines()}
    shown, met, replaced, gold_from = Counter(), Counter(), Counter(), Counter()
    for item in items:
        candidates = item.payload["candidates"]
        assert len(candidates) == min(size, n_systems)
        keys = [c["key"] for c in candidates]
        assert len(set(keys)) == len(keys) and all(not any(s in k for s in SYSTEMS) for k in keys)
        systems = [c["name"] for c in candidates if c["kind"] == "system"]
        assert len(set(systems)) == len(systems)  # an output is never twice on one screen
        for name in systems:
            shown[item.segment_id, name] += 1
        for a, b in itertools.combinations(sorted(systems), 2):
            met[a, b] += 1
        kinds = Counter(c["kind"] for c in candidates)
        if item.item_type == "gold":
            line = lines[item.segment.document.doc_id, item.segment.seg_id]
            [good] = [c for c in candidates if c["kind"] == "gold"]
            assert good["text"] == line.get("gold", line["reference"])  # the line's gold, else the reference
            gold_from["gold" in line] += 1
            assert item.payload["gold_mode"] == gold
            replaced[item.segment_id] += 1 + (gold == "best-worst")
            if gold == "best-worst":
                assert kinds == {"system": len(candidates) - 2, "gold": 1, "bad": 1}
                [bad] = [c for c in candidates if c["kind"] == "bad"]
                original = texts[item.segment_id, bad["name"]]
                assert bad["text"] and bad["text"] != original
                assert len(bad["text"].split()) < len(original.split())  # adequacy degradation: a run deleted
            else:
                assert kinds == {"system": len(candidates) - 1, "gold": 1}
        else:
            assert item.item_type == "system" and kinds == {"system": len(candidates)}
            assert item.payload["gold_mode"] is None
            assert all("text" not in c for c in candidates)  # system texts come from the stored outputs
    # Every output of every segment is shown. The controls take the places of outputs shown twice on the
    # segment first (the last screen's fill-up); only beyond those spare places can they take an only place.
    spare = per_segment * min(size, n_systems) - n_systems
    for segment in campaign.segments.all():
        missing = [name for name in SYSTEMS if shown[segment.id, name] == 0]
        assert len(missing) <= max(0, replaced[segment.id] - spare), (segment, missing)
        if gold == "none":
            assert not missing
    # Pairs of systems meet about equally often. Gold units replace outputs after the balancing, which
    # unbalances the pairs a little (a spread of 2 to 6 meetings over seeds 1-5 here).
    counts = [met[pair] for pair in itertools.combinations(sorted(SYSTEMS), 2)]
    assert max(counts) - min(counts) <= (2 if gold == "none" else 6), counts
    assert min(counts) >= 0.7 * sum(counts) / len(counts), counts
    # Gold units on about gold_rate (10 %) of the screens.
    n_gold = sum(item.item_type == "gold" for item in items)
    if gold == "none":
        assert n_gold == 0
    else:
        assert abs(n_gold - round(0.10 * len(items))) <= 1, (n_gold, len(items))
        assert gold_from[True] and gold_from[False]  # both the lines' own gold and references were used


def test_a_larger_gold_rate_and_fewer_systems_than_the_screen_size():
    campaign = ranking(5, "best", systems=SYSTEMS[:3], gold_rate=0.5)
    items = screens(campaign)
    assert len(items) == 30  # one screen a segment with all three systems
    assert all(len(item.payload["candidates"]) == 3 for item in items)
    assert sum(item.item_type == "gold" for item in items) == 15


def test_best_worst_needs_three_outputs_a_screen():
    with pytest.raises(Exception, match="best-worst needs at least 3"):
        ranking(2, "best-worst")
    assert not Campaign.objects.exists()


def _state(client, token):
    response = client.get(f"/api/hit/{token}/")
    assert response.status_code == 200
    return response.json()


@pytest.mark.parametrize("gold,raw,reference_shown", [
    ("none", {}, True), ("best", {}, False), ("best-worst", {"show_reference": False}, False),
    ("best", {"show_reference": True}, True),
])
def test_annotators_see_texts_and_keys_only(gold, raw, reference_shown):
    campaign = ranking(4, gold, gold_rate=0.3, **raw)
    client = Client()
    token = start(client, campaign, "reader")
    assignment = Assignment.objects.get(token=token)
    texts = output_texts(campaign)
    seen_kinds = Counter()
    state = _state(client, token)
    while not state["done"]:
        item = state["item"]
        stored = HitItem.objects.select_related("segment").get(pk=item["id"], hit=assignment.hit)
        expected_keys = {"id", "protocol", "source", "candidates"} | ({"reference"} if reference_shown else set())
        assert set(item) == expected_keys
        assert item["protocol"] == "ranking" and item["source"] == stored.segment.source
        if reference_shown:
            assert item["reference"] == stored.segment.reference
        assert len(item["candidates"]) == 4
        for sent, planned in zip(item["candidates"], stored.payload["candidates"], strict=True):
            assert set(sent) == {"key", "text"} and sent["key"] == planned["key"]
            seen_kinds[planned["kind"]] += 1
            if planned["kind"] == "system":
                assert sent["text"] == texts[stored.segment_id, planned["name"]]
            else:
                assert sent["text"] == planned["text"]
        body = json.dumps(item)
        assert not any(name in body.replace(f"[{name} ", "") for name in SYSTEMS)  # only inside the texts
        assert "gold" not in body.replace("(gold ", "") and "kind" not in body and "system" not in body
        answer = {"item": item["id"], "ranks": {c["key"]: 1 + i % 3 for i, c in enumerate(item["candidates"])}}
        response = post_answer(client, token, answer)
        assert response.status_code == 201, response.json()
        state = response.json()
    assert Judgment.objects.filter(assignment=assignment).count() == assignment.hit.items.count()
    if gold != "none":
        assert seen_kinds["gold"] >= 1


@pytest.fixture
def first_screen():
    """A worker's HIT on a 5-output ranking campaign, at its first screen."""
    campaign = ranking(5, "none", segments=10)
    client = Client()
    token = start(client, campaign, "validator")
    return client, token, _state(client, token)["item"]


def _ranks(item, *values):
    return {c["key"]: v for c, v in zip(item["candidates"], values, strict=True)}


BAD_ANSWERS = {
    "missing key": lambda item: {"item": item["id"], "ranks": dict(list(_ranks(item, 1, 2, 3, 4, 5).items())[:4])},
    "unknown key": lambda item: {"item": item["id"], "ranks": {**dict(list(_ranks(item, 1, 2, 3, 4, 5).items())[:4]),
                                                               "deadbeef": 5}},
    "extra key": lambda item: {"item": item["id"], "ranks": {**_ranks(item, 1, 2, 3, 4, 5), "deadbeef": 1}},
    "rank 0": lambda item: {"item": item["id"], "ranks": _ranks(item, 0, 1, 2, 3, 4)},
    "rank N+1": lambda item: {"item": item["id"], "ranks": _ranks(item, 1, 2, 3, 4, 6)},
    "negative": lambda item: {"item": item["id"], "ranks": _ranks(item, 1, 2, 3, -4, 5)},
    "float": lambda item: {"item": item["id"], "ranks": _ranks(item, 1, 2.5, 3, 4, 5)},
    "whole float": lambda item: {"item": item["id"], "ranks": _ranks(item, 1.0, 2, 3, 4, 5)},
    "bool": lambda item: {"item": item["id"], "ranks": _ranks(item, True, 2, 3, 4, 5)},
    "string": lambda item: {"item": item["id"], "ranks": _ranks(item, "1", 2, 3, 4, 5)},
    "null rank": lambda item: {"item": item["id"], "ranks": _ranks(item, None, 2, 3, 4, 5)},
    "extra field": lambda item: {"item": item["id"], "ranks": _ranks(item, 1, 2, 3, 4, 5), "score": 50},
    "ranks a list": lambda item: {"item": item["id"], "ranks": [1, 2, 3, 4, 5]},
    "ranks a string": lambda item: {"item": item["id"], "ranks": "1,2,3,4,5"},
    "ranks null": lambda item: {"item": item["id"], "ranks": None},
    "ranks empty": lambda item: {"item": item["id"], "ranks": {}},
    "no ranks": lambda item: {"item": item["id"], "choice": "A"},
    "item a string": lambda item: {"item": str(item["id"]), "ranks": _ranks(item, 1, 2, 3, 4, 5)},
}


@pytest.mark.parametrize("case", BAD_ANSWERS)
def test_malformed_answers_get_400_and_store_nothing(first_screen, case):
    client, token, item = first_screen
    response = post_answer(client, token, BAD_ANSWERS[case](item))
    assert response.status_code == 400, (case, response.content)
    assert response.json()["error"]  # a reason
    assert not Judgment.objects.exists()
    state = _state(client, token)
    assert state["position"] == 1 and state["item"]["id"] == item["id"]


def test_a_valid_answer_is_stored_once_and_replays_are_judged(first_screen):
    client, token, item = first_screen
    ranks = _ranks(item, 2, 1, 2, 5, 3)  # ties allowed, ranks need not be consecutive
    response = post_answer(client, token, {"item": item["id"], "ranks": ranks})
    assert response.status_code == 201
    state = response.json()
    assert state["position"] == 2 and state["item"]["id"] != item["id"]
    judgment = Judgment.objects.get()
    assert judgment.ranks == ranks and judgment.item_id == item["id"]
    assert judgment.score is None and judgment.choice in (None, "")

    again = post_answer(client, token, {"item": item["id"], "ranks": dict(reversed(list(ranks.items())))})
    assert again.status_code == 201 and again.json() == state  # the same answer, in another key order
    assert Judgment.objects.count() == 1

    other = post_answer(client, token, {"item": item["id"], "ranks": _ranks(item, 1, 1, 1, 1, 1)})
    assert other.status_code == 409
    body = other.json()
    assert body["stored"] == {"item": item["id"], "ranks": ranks}
    assert body["state"]["position"] == 2
    assert Judgment.objects.get().ranks == ranks

    malformed = dict(list(ranks.items())[1:])  # a replay that leaves a candidate out is malformed, not a conflict
    response = post_answer(client, token, {"item": item["id"], "ranks": malformed})
    assert response.status_code == 400 and "missing" in response.json()["error"]
    assert Judgment.objects.get().ranks == ranks


def test_all_tied_is_a_ranking(first_screen):
    client, token, item = first_screen
    response = post_answer(client, token, {"item": item["id"], "ranks": _ranks(item, 5, 5, 5, 5, 5)})
    assert response.status_code == 201
    assert set(Judgment.objects.get().ranks.values()) == {5}


def test_a_later_screen_is_refused_with_409(first_screen):
    client, token, item = first_screen
    assignment = Assignment.objects.get(token=token)
    later = assignment.hit.items.get(position=1)
    ranks = {c["key"]: 1 for c in later.payload["candidates"]}
    response = post_answer(client, token, {"item": later.id, "ranks": ranks})
    assert response.status_code == 409 and response.json()["state"]["item"]["id"] == item["id"]
    assert not Judgment.objects.exists()


def test_command_line_flags(tmp_path):
    path = tmp_path / "ranking.jsonl"
    path.write_text("\n".join(ranking_lines(20)) + "\n", encoding="utf-8")
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "Ranking CLI", "--protocol", "ranking", "--screen-size", "4",
                 "--gold", "best", "--gold-rate", "0.2", "--screens-per-hit", "8", "--seed", "3", stdout=out)
    result = json.loads(out.getvalue())
    campaign = Campaign.objects.get(slug=result["campaign"])
    assert campaign.protocol == "ranking"
    assert campaign.options["screen_size"] == 4 and campaign.options["gold"] == "best"
    assert campaign.options["show_reference"] is False  # the reference may be the gold
    items = screens(campaign)
    assert len(items) == 20 * 2 and result["hits"] == campaign.hits.count() == 5
    assert all(len(item.payload["candidates"]) == 4 for item in items)
    assert sum(item.item_type == "gold" for item in items) == 8


@pytest.mark.parametrize("flags,problem", [
    (["--screen-size", "1"], "screen_size"),
    (["--screen-size", "21"], "screen_size"),
    (["--gold", "worst"], "gold"),
    (["--gold-rate", "1.5"], "gold_rate"),
])
def test_command_line_refuses_bad_flags(tmp_path, flags, problem):
    path = tmp_path / "ranking.jsonl"
    path.write_text("\n".join(ranking_lines(6)) + "\n", encoding="utf-8")
    with pytest.raises(CommandError, match=problem):
        call_command("import_campaign", str(path), "--name", "Bad", "--protocol", "ranking", *flags,
                     stdout=io.StringIO())
    assert not Campaign.objects.exists()

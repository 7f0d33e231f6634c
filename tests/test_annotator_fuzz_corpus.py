"""A corpus of hostile bodies for every registered protocol and stage (docs/api.md §8.3): each is answered 4xx and
changes nothing. The protocols come from the registry, so a new one fails `test_every_protocol_has_a_valid_answer`
until it gets an entry in VALID; the corpus is then derived from its valid answer by mutation: huge integers,
negative and out-of-range numbers, NaN and Infinity, lone surrogates and NUL bytes (in values and in keys), wrong
types, deep nesting, unknown and missing keys; plus whole bodies that are not objects, not UTF-8 or not JSON. After
the corpus the valid answer is still stored (201), which shows that the HIT was answerable all along."""
import copy
import json

import pytest
from django.apps import apps
from django.test import Client, TestCase

from annotation.models import Assignment, Campaign, Judgment
from annotation.protocols import all_protocols, get_protocol
from annotation.services import stages
from annotation.services.campaign_import import import_campaign

from .conftest import post_answer

pytestmark = pytest.mark.django_db

SYSTEMS = ("sysA", "sysB", "sysC")
HUGE = 10**400
#: Values no field of any answer may take; `DEEP` stands for a list nested 900 deep (spliced into the JSON text).
DEEP = "\u2063deep\u2063"
NEVER_VALID = (HUGE, -HUGE, float("nan"), float("inf"), float("-inf"), "\ud800", "\udfff x", "x\x00", DEEP)
#: Keys an answer may leave out (their absence is an answer).
OPTIONAL = {"spans", "redundant_with", "added"}  # a review adds no span unless it says so


def lines(docs: int = 2, per_doc: int = 6) -> list[bytes]:
    """A campaign file every protocol takes: references, three systems, constituent spans."""
    out = []
    for d in range(docs):
        for s in range(per_doc):
            record = {"doc_id": f"d{d}", "seg_id": s + 1, "source": f"Die Quelle {d}.{s} hier",
                      "reference": f"In town {d}, the shop {s} closed because of rain.",
                      "systems": {name: f"The {name} output {d}.{s} of the text" for name in SYSTEMS},
                      "constituent": {"source": [0, 3], "systems": {name: [0, 3] for name in SYSTEMS}}}
            out.append((json.dumps(record) + "\n").encode())
    return out


#: Import options per family of protocol (small HITs, one worker per stage).
OPTIONS = {
    "direct-assessment": {"hit_size": 20},
    "pairwise": {"systems": "sysA,sysB"},
    "ranking": {"screen_size": 3, "screens_per_hit": 2},
    "acceptance": {"screen_size": 3, "screens_per_hit": 2},
    "error-spans": {"segments_per_hit": 4},
    "post-edit": {"screens_per_hit": 1, "redundancy": 1, "verifiers": 1, "verify_items_per_hit": 2,
                  "exclude_own_work": False},
    "reference-translation": {"screens_per_hit": 1, "redundancy": 1, "detectors": 1, "detect_items_per_hit": 1,
                              "exclude_own_work": False},
    "reading-comprehension": {"redundancy": 1, "voters": 1, "answerers": 1, "graders": 1, "grade_items_per_hit": 1,
                              "exclude_own_work": False},
}

#: The options a first stage needs to declare the later stage named (review stages are asked for).
STAGE_OPTIONS = {name: {"review": "judges", "review_items_per_hit": 2} for name in ("mqm-review", "esa-review")}


def _span(text: str) -> dict:
    return {"start": 0, "end": min(3, len(text)), "severity": "minor"}


#: A valid answer (without "item") to each protocol's item as the screen gets it.
VALID = {
    "fluency": lambda item: {"score": 50},
    "adequacy": lambda item: {"score": 50},
    "source-adequacy": lambda item: {"score": 50},
    "pairwise-adequacy": lambda item: {"choice": "A"},
    "pairwise-fluency": lambda item: {"choice": "tie"},
    "ranking": lambda item: {"ranks": {c["key"]: 1 + k for k, c in enumerate(item["candidates"])}},
    "ranking-constituent": lambda item: {"ranks": {c["key"]: 1 for c in item["candidates"]}},
    "constituent-acceptance": lambda item: {"accept": {c["key"]: "yes" for c in item["candidates"]}},
    "esa": lambda item: {"spans": [_span(item["candidate"])], "score": 40},
    "mqm": lambda item: {"spans": [{**_span(item["candidate"]), "category": item["categories"][0]}],
                         "score": 40},
    "contrastive-esa": lambda item: {"candidates": {c["key"]: {"spans": [_span(c["text"])], "score": 60}
                                                    for c in item["candidates"]}},
    "mqm-sxs": lambda item: {"candidates": {c["key"]: {"spans": [{**_span(c["text"]), "category": "Style"}]}
                                            for c in item["candidates"]}},
    "mqm-review": lambda item: {"review": [{"action": "kept"} for _ in item["first_pass"]], "added": [],
                                "score": 40},
    "esa-review": lambda item: {"review": [{"action": "deleted"} for _ in item["first_pass"]], "added": [],
                                "score": 40},
    "post-edit": lambda item: {"edits": [f"{o} fixed" for o in item["outputs"]]},
    "post-edit-verify": lambda item: {"same_meaning": "yes", "acceptable": "no"},
    "reference-translation": lambda item: {
        "translations": [f"translation of {s}" for s in item["source"]], "pasted": [False] * len(item["source"]),
        **({"background": {"native_language": "English", "target_language_years": 12, "country": "Ireland"}}
           if item["ask_background"] else {})},
    "reference-translation-detect": lambda item: {"machine": [item["candidates"][0]["key"]]},
    "reading-comprehension": lambda item: {"questions": [
        {"question": f"Why did shop {k} close?", "answer": "because of rain"} for k in range(3)]},
    "reading-comprehension-vote": lambda item: {"good": "yes", "redundant_with": None},
    "reading-comprehension-answer": lambda item: {"answers": {q["id"]: "rain" for q in item["questions"]}},
    "reading-comprehension-grade": lambda item: {"correct": "yes"},
}


def enter(campaign, worker):
    client = Client(raise_request_exception=False)  # a 500 is recorded as a failure, not raised
    response = client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker})
    if response.status_code != 302:
        return None, None
    return client, response.url.rstrip("/").split("/")[-1]


def finish(campaign) -> None:
    """One worker of this stage answers every HIT it is given, validly; then the stages it feeds are built."""
    worker = f"worker-{campaign.stage_name}"
    while True:
        client, token = enter(campaign, worker)
        if client is None:
            break
        while not (state := client.get(f"/api/hit/{token}/").json()).get("done"):
            item = state["item"]
            response = post_answer(client, token, {"item": item["id"], **VALID[campaign.protocol](item)})
            assert response.status_code == 201, response.content
    stages.build_stages(campaign)


def live_hit(name: str):
    """A fuzzer's client and token on a HIT of protocol `name` with a current item: a first stage is imported, a
    later stage is reached by answering every stage before it."""
    spec = get_protocol(name)
    extra = STAGE_OPTIONS.get(name, {})
    root = spec if not spec.stage_only else next(
        p for p in all_protocols() if name in {s.protocol for s in p.next_stages(extra)})
    parsed = root.parse_options({"seed": 3, **OPTIONS[root.family], **extra})
    campaign = import_campaign(lines(), name=f"corpus {name}", protocol=root.name, parsed=parsed).campaign
    target = Campaign.objects.get(protocol=name, name__startswith=campaign.name)
    chain = []
    node = target
    while node.stage_input_id is not None:
        node = node.stage_input
        chain.insert(0, node)
    for stage in chain:
        with TestCase.captureOnCommitCallbacks(execute=True):  # what a finished HIT's commit sets off (stage input)
            finish(stage)
    client, token = enter(target, "fuzzer")
    assert client is not None, f"no HIT of {name} reached"
    state = client.get(f"/api/hit/{token}/").json()
    assert state["item"]["protocol"] == name
    return client, token, state


# Mutations of a valid body --------------------------------------------------------------------------------------

def paths(value, prefix=()):
    """Every path into `value` (dict keys, and a list's first entry: the others are checked alike), the root
    excluded."""
    if isinstance(value, dict):
        children = value.items()
    elif isinstance(value, list):
        children = enumerate(value[:1])
    else:
        return
    for key, child in children:
        yield (*prefix, key)
        yield from paths(child, (*prefix, key))


def at(body, path):
    for key in path:
        body = body[key]
    return body


def replaced(body, path, value):
    out = copy.deepcopy(body)
    at(out, path[:-1])[path[-1]] = value
    return out


def other_type(value):
    """A value of another JSON type where `value` stands, never a valid stand-in for it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return [value]
    if value is None:
        return 5
    return {} if isinstance(value, list) else []


def corpus(valid: dict) -> list[tuple[str, object]]:
    """(what, body) pairs: each body a dict to encode, or raw text/bytes."""
    out = []
    for path in paths(valid):
        value = at(valid, path)
        where = "/".join(map(str, path))
        out += [(f"{where} = {v!r:.20}", replaced(valid, path, v)) for v in NEVER_VALID]
        out.append((f"{where} of another type", replaced(valid, path, other_type(value))))
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out += [(f"{where} = {v}", replaced(valid, path, v)) for v in (-1, 10**6, 2**63, -(2**63) - 1)]
        if isinstance(value, str):
            out += [(f"{where} with a lone surrogate", replaced(valid, path, value + "\udc00")),
                    (f"{where} with NUL", replaced(valid, path, value[:1] + "\x00" + value[1:]))]
        if isinstance(path[-1], str) and path[-1] not in OPTIONAL:
            missing = copy.deepcopy(valid)
            del at(missing, path[:-1])[path[-1]]
            out.append((f"{where} missing", missing))
        if isinstance(path[-1], str):
            renamed = copy.deepcopy(valid)
            parent = at(renamed, path[:-1])
            parent[path[-1] + "\ud800"] = parent.pop(path[-1])
            out.append((f"{where} key with a lone surrogate", renamed))
    for path in [(), *paths(valid)]:
        if isinstance(at(valid, path), dict):
            where = "/".join(map(str, path)) or "body"
            for key in ("unknown_field", "\ud800", "k\x00"):
                extra = copy.deepcopy(valid)
                at(extra, path)[key] = 1
                out.append((f"{where} + key {key!r}", extra))
    out += [
        ("empty body", b""), ("not JSON", "{'item': 1}"), ("truncated", json.dumps(valid)[:-1]),
        ("a list", "[]"), ("a number", "1"), ("a string", '"x"'), ("null", "null"), ("true", "true"),
        ("NaN", "NaN"), ("Infinity", "Infinity"), ("nesting past the parser", "[" * 10_000 + "]" * 10_000),
        ("a 400-digit number", "1" + "0" * 400), ("too large", json.dumps({**valid, "pad": "x" * 70_000})),
        ("invalid UTF-8", json.dumps(valid)[:-1].encode() + b', "x": "\xff\xfe"}'),
        ("an encoded surrogate", json.dumps(valid)[:-1].encode() + b', "x": "\xed\xa0\x80"}'),
        ("deep in an unknown key", {**valid, "deep": DEEP}),
    ]
    return out


def encode(body) -> str | bytes:
    if isinstance(body, (str, bytes)):
        return body
    return json.dumps(body).replace(json.dumps(DEEP), "[" * 900 + "]" * 900)


def snapshot(assignment_id: int) -> tuple:
    return (Judgment.objects.count(),
            Assignment.objects.filter(pk=assignment_id).values_list(
                "position", "status", "last_item_id", "item_served_at", "last_activity_at", "completion_code").get())


def every_count() -> dict:
    return {model._meta.label: model.objects.count() for model in apps.get_models()}


def test_every_protocol_has_a_valid_answer():
    assert sorted(p.name for p in all_protocols()) == sorted(VALID)


@pytest.mark.parametrize("name", sorted(p.name for p in all_protocols()))
def test_hostile_bodies_get_4xx_and_change_nothing(name, django_capture_on_commit_callbacks):
    client, token, state = live_hit(name)
    item = state["item"]
    valid = {"item": item["id"], **VALID[name](item)}
    assignment = Assignment.objects.get(token=token).pk
    before, counts = snapshot(assignment), every_count()
    accepted, crashed = [], []
    with django_capture_on_commit_callbacks() as callbacks:
        for what, body in corpus(valid):
            response = post_answer(client, token, encode(body))
            if response.status_code >= 500:
                crashed.append((what, response.status_code))
            elif response.status_code < 400 or snapshot(assignment) != before:
                accepted.append((what, response.status_code))
    assert (crashed, accepted) == ([], [])
    assert callbacks == [] and every_count() == counts
    assert client.get(f"/api/hit/{token}/").json()["item"]["id"] == item["id"]
    stored = post_answer(client, token, valid)
    assert stored.status_code == 201, stored.content
    assert Judgment.objects.count() == before[0] + 1
    # the same hostile bodies as replays of the item just stored: refused, nothing stored twice
    after = snapshot(assignment)
    replays = [(what, post_answer(client, token, encode(body)).status_code) for what, body in corpus(valid)[::4]]
    assert [r for r in replays if not 400 <= r[1] < 500] == [] and snapshot(assignment) == after

"""Loading error-span judgments (evaluation/families/error_spans/loading.py): the PostgreSQL path that counts and
reads the rows and the spans (as codes) by binary COPY gives exactly the arrays of the portable path (rows as tuples,
spans grouped in SQL); counts and MQM penalties are those the judgments hold; the breakdown by category and severity
equals counting the counted judgments' spans one by one; and the binary COPY reader refuses what is not the
declared layout."""
import random
import struct

import numpy as np
import pytest
from django.db import connection
from django.test import Client

from annotation.models import Assignment, Hit, HitItem, Judgment
from evaluation.families import family_of
from evaluation.families.error_spans import loading
from evaluation.families.error_spans.analysis import SYSTEM, counted_rows
from evaluation.families.error_spans.storage import rules_of
from evaluation.services.binary_copy import CopyFormatError, parse
from evaluation.services.results_read import stored_rows
from evaluation.stats.error_spans import GOOGLE_SOURCE_ZERO

from .conftest import post_answer, start
from .test_error_span_protocols import span_campaign, span_lines

pytestmark = pytest.mark.django_db

ERRORS = [
    {"severity": "minor", "category": "Fluency/Punctuation"},
    {"severity": "major", "category": "Accuracy/Mistranslation"},
    {"severity": "minor", "category": "Non-translation"},
    {"severity": "critical", "category": "Accuracy/Omission"},
    {"severity": "major", "category": "Style"},
]
#: What imported files hold beyond what the screen sends: Google's labels and errors marked in the source.
IMPORTED = [{"start": 0, "end": 3, "severity": "major", "category": "Non-translation!"},
            {"start": 4, "end": 7, "severity": "major", "category": "Style", "side": "source"},
            {"start": 8, "end": 11, "severity": "minor", "category": "Source error", "side": "source"}]


def some_spans(rng: random.Random, text: str) -> list[dict]:
    spans, at = [], 0
    for error in rng.sample(ERRORS, rng.randint(0, 3)):
        if at + 3 > len(text):
            break
        spans.append({"start": at, "end": at + 3, **error})
        at += 4
    return spans


def judged_mqm_campaign():
    """An MQM campaign judged by two workers in full and a third who stops half way through a HIT, with one judge
    rating an output a second time in a copy of its HIT (only the later rating counts under WMT24)."""
    campaign = span_campaign("mqm", lines=span_lines(tutorial=1, prefill=False), perturbation_rate=0.2,
                             redundancy=3, min_items=1, critical=True)
    rng = random.Random(5)

    def answer(client, token):
        state = client.get(f"/api/hit/{token}/").json()
        if state.get("done"):
            return False
        item = state["item"]
        body = {"item": item["id"], "score": rng.randint(0, 100),
                "spans": some_spans(rng, item["candidate"])}
        response = post_answer(client, token, body)
        assert response.status_code == 201, response.content
        return True

    for worker in ("w1", "w2", "w3"):
        client = Client()  # one browser per worker: a worker id stays with the browser it started in
        while client.get(f"/c/{campaign.slug}/start/", {"worker_id": worker}).status_code == 302:
            token = start(client, campaign, worker)
            if worker == "w3":
                for _ in range(4):
                    answer(client, token)
                break
            while answer(client, token):
                pass
    for judgment in Judgment.objects.filter(campaign=campaign).order_by("id")[::7]:
        judgment.spans = IMPORTED
        judgment.save(update_fields=["spans"])
    first = Judgment.objects.filter(campaign=campaign, annotator__external_id="w1",
                                    item__item_type="system").order_by("id").first()
    copy = Hit.objects.create(campaign=campaign, number=Hit.objects.filter(campaign=campaign).count() + 1,
                              size=1)
    item = HitItem.objects.get(pk=first.item_id)
    item.pk, item.hit = None, copy
    item.save()
    assignment = Assignment.objects.create(campaign=campaign, hit=copy, annotator=first.annotator,
                                           status=Assignment.Status.COMPLETED)
    Judgment.objects.create(campaign=campaign, assignment=assignment, annotator=first.annotator, item=item,
                            score=12, spans=[{"start": 0, "end": 3, "severity": "major", "category": "Style"}])
    return campaign


def arrays(campaign, weights, copied=False):
    """The observations with their span counts, by the PostgreSQL path (`copied`) or the portable one."""
    last_id = Judgment.objects.filter(campaign=campaign).order_by("-id").values_list("id", flat=True).first()
    pks = list(campaign.systems.order_by("pk").values_list("pk", flat=True))
    if copied:
        obs = loading._observations_copied(campaign, last_id, pks)
        counts = loading._span_codes(campaign, last_id, obs)
    else:
        obs = loading._observation_rows(campaign, last_id, pks, contrastive=False)
        counts = loading._grouped_span_counts(campaign, last_id, obs)
    loading.add_counts(obs, counts, weights)
    return obs


def test_spans_are_counted_and_weighed_as_the_judgments_hold_them():
    campaign = judged_mqm_campaign()
    obs = arrays(campaign, GOOGLE_SOURCE_ZERO)
    for row, judgment in enumerate(Judgment.objects.filter(campaign=campaign).order_by("id")):
        spans = judgment.spans or []
        assert obs.judgment[row] == judgment.pk
        assert obs.n_spans[row] == len(spans)
        assert obs.n_major[row] == sum(s["severity"] == "major" for s in spans)
        assert obs.penalty[row] == pytest.approx(sum(GOOGLE_SOURCE_ZERO.weight(
            s["category"], s["severity"], s.get("side") == "source") for s in spans))


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the binary COPY path is PostgreSQL's")
def test_the_postgresql_path_gives_the_portable_paths_arrays():
    campaign = judged_mqm_campaign()
    portable = arrays(campaign, GOOGLE_SOURCE_ZERO)
    copied = arrays(campaign, GOOGLE_SOURCE_ZERO, copied=True)
    assert portable.size == copied.size > 0
    for name in ("judgment", "annotator", "completed", "kind", "segment", "system", "document", "partner",
                 "n_minor", "n_major", "n_critical", "n_spans"):
        assert np.array_equal(getattr(portable, name), getattr(copied, name)), name
    for name in ("score", "seconds", "penalty"):
        assert np.allclose(getattr(portable, name), getattr(copied, name), equal_nan=True, rtol=0, atol=1e-12), name
    assert (copied.partner >= 0).any() and not copied.completed.all() and (copied.kind == 2).any()


def test_the_breakdown_counts_the_spans_of_the_counted_judgments():
    campaign = judged_mqm_campaign()
    family_of(campaign).compute(campaign)
    obs = arrays(campaign, GOOGLE_SOURCE_ZERO, copied=connection.vendor == "postgresql")
    counted = counted_rows(obs, rules_of(campaign, "wmt24-esa"))
    assert (~counted & (obs.kind == SYSTEM) & obs.completed).any()  # the earlier rating
    names = dict(campaign.systems.values_list("pk", "name"))
    pks = sorted(names)
    expected: dict = {}
    spans = dict(Judgment.objects.filter(pk__in=obs.judgment.tolist()).values_list("pk", "spans"))
    for row in np.flatnonzero(counted & (obs.kind == SYSTEM)):
        for span in spans[int(obs.judgment[row])] or []:
            key = (names[pks[obs.system[row]]], span["category"], span["severity"])
            expected[key] = expected.get(key, 0) + 1
    stored = {(r["system"], r["category"], r["severity"]): r["errors"] for r in stored_rows(campaign, "breakdown")}
    assert stored == expected and sum(expected.values()) > 20


def binary_copy(rows: list[tuple], null_at: tuple[int, int] | None = None) -> bytes:
    out = b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0)
    for r, (a, b, c) in enumerate(rows):
        out += struct.pack(">h", 3) + struct.pack(">iq", 8, a)
        out += struct.pack(">i", -1) if null_at == (r, 1) else struct.pack(">id", 8, b)
        out += struct.pack(">i?", 1, c)
    return out + struct.pack(">h", -1)


def test_the_binary_copy_reader():
    columns = [("id", "int8"), ("score", "float8"), ("done", "bool")]
    arrays_ = parse(binary_copy([(1, 2.5, True), (-7, float("nan"), False)]), columns)
    assert arrays_["id"].tolist() == [1, -7] and arrays_["done"].tolist() == [True, False]
    assert arrays_["score"][0] == 2.5 and np.isnan(arrays_["score"][1])
    assert parse(binary_copy([]), columns)["id"].size == 0
    with pytest.raises(CopyFormatError):
        parse(binary_copy([(1, 2.5, True), (2, 3.0, False)], null_at=(1, 1)), columns)
    with pytest.raises(CopyFormatError):
        parse(b"not a copy stream at all", columns)

"""The tutorial tries in the results and the export (docs/api.md §6.4 and "Training", docs/methods.md §12.5): the
`training` result part's tables against a hand count of three workers' tries, its API answer, its CSV and results-page
section, and the judgment export's `tutorial_tries` / `tutorial_passed` columns in CSV, JSON and Parquet."""
import csv
import io
import json

import pyarrow.parquet as pq
import pytest
from django.test import Client

from annotation.models import Judgment
from evaluation.analyses import compute_results

from .conftest import post_answer, start
from .test_training_protocols import da_campaign


def answer_tutorial(client, campaign, worker: str, scores: list[float]) -> str:
    """The worker's tries on the HIT's opening tutorial (expected score 0–30), then one ordinary item."""
    token = start(client, campaign, worker)
    item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    for score in scores:
        post_answer(client, token, {"item": item, "score": score})
    nxt = client.get(f"/api/hit/{token}/").json()["item"]["id"]
    assert post_answer(client, token, {"item": nxt, "score": 55}).status_code == 201
    return token


@pytest.fixture
def trained(db, researcher, django_capture_on_commit_callbacks):
    """A loud DA campaign (3 tries): right at the second try, right at once, wrong three times (failed)."""
    campaign = da_campaign(redundancy=3)
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    client = Client()
    with django_capture_on_commit_callbacks(execute=True):
        answer_tutorial(client, campaign, "second", [80, 20])
        answer_tutorial(client, campaign, "first", [10])
    with django_capture_on_commit_callbacks(execute=True):
        token = start(client, campaign, "never")
        item = client.get(f"/api/hit/{token}/").json()["item"]["id"]
        for score in (90, 80, 70):
            post_answer(client, token, {"item": item, "score": score})
    compute_results(campaign)
    return campaign


def test_the_training_part_counts_answers_passes_and_first_tries_by_hand(trained, api):
    body = api.get(f"/api/campaigns/{trained.slug}/training/").json()
    item, = body["items"]
    assert item["doc_id"] == "tutorial" and item["seg_id"] == 1 and item["mode"] == "loud"
    # answers 3; finished 3; passed 2 (second, first); right at the first try 1 (first); tries 2 + 1 + 3
    assert {k: item[k] for k in ("answers", "finished", "passed", "first_try_passed", "tries")} == {
        "answers": 3, "finished": 3, "passed": 2, "first_try_passed": 1, "tries": 6}
    assert item["pass_rate"] == pytest.approx(2 / 3) and item["first_try_pass_rate"] == pytest.approx(1 / 3)
    assert item["mean_tries"] == pytest.approx((2 + 1 + 3) / 3)
    workers = {w["worker"]: (w["passed"], w["first_try_passed"], w["tries"]) for w in body["workers"]}
    assert workers == {"second": (1, 0, 2), "first": (1, 1, 1), "never": (0, 0, 3)}


def test_the_results_page_shows_the_part_and_offers_its_csv(trained, researcher):
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/results/{trained.slug}/").content.decode()
    assert 'id="training"' in html and f"/results/{trained.slug}/tutorial_items.csv" in html
    rows = list(csv.DictReader(io.StringIO(client.get(f"/results/{trained.slug}/tutorial_workers.csv")
                                           .content.decode())))
    assert sorted((r["worker"], r["tries"]) for r in rows) == [("first", "1"), ("never", "3"), ("second", "2")]


def test_the_judgment_export_flags_tutorial_judgments_with_their_tries(trained, api):
    def tutorial_rows(rows):
        return sorted((r["worker"], r["tutorial_tries"], r["tutorial_passed"]) for r in rows
                      if r["item_type"] == "tutorial")

    listed = json.loads(b"".join(api.get(f"/api/campaigns/{trained.slug}/judgments/?format=json").streaming_content))
    assert tutorial_rows(listed) == [("first", 1, True), ("never", 3, False), ("second", 2, True)]
    assert all(r["tutorial_tries"] is None and r["tutorial_passed"] is None for r in listed
               if r["item_type"] != "tutorial")
    assert len(listed) == Judgment.objects.filter(campaign=trained).count() == 5  # one judgment per final try
    text = b"".join(api.get(f"/api/campaigns/{trained.slug}/judgments/").streaming_content).decode()
    assert tutorial_rows(csv.DictReader(io.StringIO(text))) == [("first", "1", "True"), ("never", "3", "False"),
                                                                ("second", "2", "True")]
    parquet = b"".join(api.get(f"/api/campaigns/{trained.slug}/judgments/?format=parquet").streaming_content)
    table = pq.read_table(io.BytesIO(parquet))
    assert str(table.schema.field("tutorial_tries").type) == "int64"
    assert str(table.schema.field("tutorial_passed").type) == "bool"
    assert tutorial_rows(table.to_pylist()) == [("first", 1, True), ("never", 3, False), ("second", 2, True)]


def test_a_campaign_without_expected_answers_has_no_training_part(db, researcher, api):
    from .test_training_protocols import da_lines

    plain = da_campaign(lines=da_lines(expected=None))  # a tutorial line without an expected answer
    plain.owner = researcher
    plain.save(update_fields=["owner"])
    compute_results(plain)
    assert api.get(f"/api/campaigns/{plain.slug}/training/").status_code == 400
    text = b"".join(api.get(f"/api/campaigns/{plain.slug}/judgments/").streaming_content).decode()
    assert "tutorial_tries" not in text.splitlines()[0]

"""Pilot-sized data is a state, not a failure (issue 23, defect 3): for every protocol, three workers finish a HIT
of a small campaign (and of each stage after it); `manage.py compute_results` then exits 0 without a traceback for
each campaign, the results store what the data support and a data state ("ready", or "not_enough_data" with what is
missing) that the API's answers and the results page show; ranking stability on a pilot ends "empty", never
"failed"; and a run that really fails makes the command exit 1 with a one-line message."""
import io
import json
import logging

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from annotation.models import Judgment
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign
from evaluation import stability_tasks
from evaluation.families import family_of
from evaluation.management.commands.compute_results import Command
from evaluation.models import CampaignResults

from .pilot import pilot, root_protocols, work
from .test_annotator_fuzz_corpus import OPTIONS, lines

pytestmark = pytest.mark.django_db


def compute(campaign) -> dict:
    out = io.StringIO()
    call_command("compute_results", campaign.slug, stdout=out)
    return json.loads(out.getvalue())


def owned(campaign, researcher):
    campaign.owner = researcher
    campaign.save(update_fields=["owner"])
    return campaign


@pytest.mark.parametrize("protocol", root_protocols())
def test_a_pilot_of_every_protocol_computes_with_a_state_and_no_failure(protocol, api, researcher, caplog):
    campaigns = pilot(protocol)
    root = owned(campaigns[0], researcher)
    with caplog.at_level(logging.WARNING):
        for campaign in campaigns:
            body = compute(campaign)
            assert body["campaign"] == campaign.slug and body["judgments"] > 0, body
            assert body["data_state"]["status"] in ("ready", "not_enough_data"), body
            if body["data_state"]["status"] == "not_enough_data":
                assert body["data_state"]["missing"] and all(m["text"] for m in body["data_state"]["missing"])
        family = family_of(root)
        if family.stability_filters:
            runs = stability_tasks.start(root, {"resamples": "100"})
            assert {r["status"] for r in runs} <= {"done", "empty"}, runs
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    answer = api.get(f"/api/campaigns/{root.slug}/workers/").json()
    stored = CampaignResults.objects.get(campaign=root).summary["data_state"]
    assert answer["data_state"] == stored
    assert api.get(f"/api/campaigns/{root.slug}/systems/").json()["data_state"] == stored


@pytest.mark.parametrize("protocol", root_protocols())
def test_three_workers_answering_a_few_items_each_is_no_failure(protocol, researcher, caplog):
    """Each worker answers two items and leaves the HIT unfinished: the results (or none, for a family that counts
    finished HITs only) and --json's answers come without an error."""
    spec = get_protocol(protocol)
    parsed = spec.parse_options({"seed": 3, **OPTIONS[spec.family]})
    campaign = owned(import_campaign(lines(), name=f"few {protocol}", protocol=protocol, parsed=parsed).campaign,
                     researcher)
    work(campaign, items=2)
    assert Judgment.objects.filter(campaign=campaign).exists()
    with caplog.at_level(logging.WARNING):
        body = compute(campaign)
        out = io.StringIO()
        call_command("compute_results", campaign.slug, "--json", stdout=out)
    assert body["data_state"]["status"] in ("ready", "not_enough_data"), body
    if body["data_state"]["status"] == "not_enough_data":
        assert all(m["text"] for m in body["data_state"]["missing"]), body
    assert json.loads(out.getvalue())["campaign"] == campaign.slug
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


def test_a_da_pilot_says_no_worker_is_reliable_yet_on_the_page_and_in_the_api(api, researcher):
    root = owned(pilot("adequacy")[0], researcher)
    state = compute(root)["data_state"]
    assert state["status"] == "not_enough_data"
    assert "reliable_workers" in {m["what"] for m in state["missing"]}
    assert api.get(f"/api/campaigns/{root.slug}/systems/").json()["data_state"] == state
    client = Client()
    client.force_login(researcher)
    page = client.get(f"/results/{root.slug}/").content.decode()
    assert "Not enough data yet" in page and "passed the reliability test yet" in page


def test_an_esa_pilot_says_how_many_more_items_each_system_needs(researcher):
    root = owned(pilot("esa")[0], researcher)
    state = compute(root)["data_state"]
    items = [m for m in state["missing"] if m["what"] == "items"]
    assert state["status"] == "not_enough_data" and items and items[0]["needed"] == 100
    systems = family_of(root).systems(root, {})["results"]
    for row in systems:
        assert f"{row['system']}: {100 - row['n']} more counted items to be ranked" in items[0]["text"]
    runs = stability_tasks.start(root, {"resamples": "100"})
    assert {r["status"] for r in runs} == {"empty"}


def test_enough_data_is_ready(researcher):
    """With the preset's minimum lowered to what the pilot has, nothing is missing."""
    root = owned(pilot("esa", min_items=1)[0], researcher)
    state = compute(root)["data_state"]
    assert all(m["what"] not in ("items", "ranking", "systems") for m in state["missing"]), state
    assert all(row["rank"] is not None for row in family_of(root).systems(root, {})["results"])


def test_a_run_that_really_fails_exits_1_with_one_line(researcher, capsys):
    root = owned(pilot("esa")[0], researcher)
    root.options = {**root.options, "min_items": "lots"}  # a corrupt stored option: a real failure, not a pilot
    root.save(update_fields=["options"])
    with pytest.raises(CommandError, match=r"failed: ValueError: .*lots"):
        call_command("compute_results", root.slug, stdout=io.StringIO())
    with pytest.raises(SystemExit) as exited:
        Command().run_from_argv(["manage.py", "compute_results", root.slug])
    assert exited.value.code == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("CommandError: computing the results of") and "Traceback" not in err[0]

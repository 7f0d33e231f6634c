"""Protocols own their import options: the admin form, the API and `manage.py import_campaign` are
generated from `Protocol.option_fields()` and validated by `Protocol.parse_options`, so they offer
the same names and defaults and give the same answers; reliability tests come from a registry."""
import io
import random
from decimal import Decimal

import numpy as np
import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework import serializers
from rest_framework.fields import empty

from annotation.api.serializers import CampaignImportSerializer
from annotation.import_form import ADMIN_DEFAULTS, CampaignImportForm
from annotation.management.commands.import_campaign import Command as ImportCommand
from annotation.models import Campaign
from annotation.protocols import all_protocols, get_protocol
from annotation.protocols.options import OptionError, applies_to, describe_default
from annotation.protocols.pairwise import TWO_SYSTEMS
from evaluation import reliability_tests

from .conftest import campaign_lines
from .simulation import Behaviour, complete_hit

EVERY = [p.name for p in all_protocols()]
OPTIONS = {option.name: option for p in all_protocols() for option in p.option_fields()}
BASICS = {"file", "name", "protocol", "settings"}
DRF_TYPES = {"int": serializers.IntegerField, "float": serializers.FloatField, "decimal": serializers.DecimalField,
             "bool": serializers.BooleanField, "choice": serializers.ChoiceField, "str": serializers.CharField,
             "text": serializers.CharField, "list": serializers.CharField}


def used_by(name: str) -> list[str]:
    return [p.name for p in all_protocols() if name in {option.name for option in p.option_fields()}]


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = name
    return handle


def via_cli(tmp_path, lines, fields) -> dict:
    """Import through `manage.py import_campaign`; {} or the refused fields and reasons."""
    path = tmp_path / "campaign.jsonl"
    path.write_text("\n".join(lines) + "\n")
    args = [str(path)]
    for name, value in fields.items():
        flag = "--" + name.replace("_", "-")
        args += [flag if value else f"--no-{flag[2:]}"] if isinstance(value, bool) else [flag, str(value)]
    try:
        call_command("import_campaign", *args, stdout=io.StringIO())
    except CommandError as exc:
        message = str(exc)
        assert "--" not in message  # errors name the field, never a flag
        errors = {}
        for part in message.split(": ", 1)[1].split("; "):
            name, _, reason = part.partition(": ")
            errors.setdefault(name, []).append(reason)
        return errors
    return {}


def via_api(api, lines, fields) -> dict:
    data = {name: ("true" if value else "false") if isinstance(value, bool) else str(value)
            for name, value in fields.items()}
    response = api.post("/api/campaigns/", {"file": upload(lines), **data}, format="multipart")
    if response.status_code == 201:
        return {}
    assert response.status_code == 400, response.content
    body = response.json()
    if "errors" in body:  # refused with the file: reasons start with the field
        errors = {}
        for problem in body["errors"]:
            name, _, reason = problem["reason"].partition(": ")
            errors.setdefault(name, []).append(reason)
        return errors
    return body


def via_admin(admin_client, lines, fields) -> dict:
    data = {name: value for name, value in fields.items() if value is not False}
    data = {name: "on" if value is True else str(value) for name, value in data.items()}
    response = admin_client.post("/admin/annotation/campaign/import/", {"file": upload(lines), **data})
    if response.status_code == 302:
        return {}
    return {name: list(errors) for name, errors in response.context["form"].errors.items() if name != "__all__"}


@pytest.fixture(params=["cli", "api", "admin"])
def front_end(request, tmp_path):
    """Import through one front-end: a function (lines, **fields) -> {field: [reasons]}, empty when imported."""
    if request.param == "cli":
        return lambda lines, **fields: via_cli(tmp_path, lines, fields)
    if request.param == "api":
        api = request.getfixturevalue("api")
        return lambda lines, **fields: via_api(api, lines, fields)
    admin_client = request.getfixturevalue("admin_client")
    return lambda lines, **fields: via_admin(admin_client, lines, fields)


def test_the_three_front_ends_offer_the_same_options_and_defaults():
    parser = ImportCommand().create_parser("manage.py", "import_campaign")
    actions = {action.dest: action for action in parser._actions if action.option_strings}
    fields = CampaignImportSerializer().fields
    form = CampaignImportForm()
    rows = {row["field"].name: row["protocols"].split() for row in form.rows()}
    assert set(fields) - BASICS == set(form.fields) - BASICS == set(OPTIONS)
    assert set(OPTIONS) <= set(actions)
    for name, option in OPTIONS.items():
        note, action, field = applies_to(used_by(name), EVERY), actions[name], fields[name]
        assert action.option_strings[0] == option.flag == "--" + name.replace("_", "-")
        assert action.default is None  # parse_options applies the default
        assert rows[name] == used_by(name)
        for text in (action.help, field.help_text, form.fields[name].help_text):
            assert option.help in text and note in text
        default = "Required." if option.required else f"Default: {describe_default(option)}."
        assert default in action.help and default in field.help_text
        admin_default = f"Default: {describe_default(option, ADMIN_DEFAULTS.get(name))}."
        assert (admin_default if not option.required else "Required.") in form.fields[name].help_text
        assert isinstance(field, DRF_TYPES[option.kind])
        assert field.default == (empty if option.default is None else option.default)
        assert form.fields[name].initial is None  # starts empty: a submit carries only what was changed
        if option.kind in ("int", "float", "decimal"):
            assert (field.min_value, field.max_value) == (option.minimum, option.maximum)
    for protocol in all_protocols():
        assert {name for name, names in rows.items() if protocol.name in names} == {
            option.name for option in protocol.option_fields()}
    # what only some protocols use
    assert used_by("hit_size") == ["fluency", "adequacy", "source-adequacy"]
    assert used_by("qc_test") == ["fluency", "adequacy", "source-adequacy", "esa", "mqm", "contrastive-esa",
                                 "mqm-sxs"]
    assert used_by("systems") == used_by("max_spam_miss_rate") == ["pairwise-adequacy", "pairwise-fluency"]
    assert "Default: no" in form.fields["publish"].help_text and "Default: yes" in actions["publish"].help


def test_parse_options_takes_strings_or_typed_values():
    adequacy = get_protocol("adequacy")
    strings = adequacy.parse_options({"redundancy": "3", "qc_test": "wilcoxon", "qc_threshold": "0.01",
                                      "payment_per_hit": "1.50", "seed": "", "require_qualification": "true",
                                      "reference_as_system": "yes", "statement": "  Good?  "})
    typed = adequacy.parse_options({"redundancy": 3, "qc_test": "wilcoxon", "qc_threshold": 0.01,
                                    "payment_per_hit": Decimal("1.50"), "seed": None, "require_qualification": True,
                                    "reference_as_system": True, "statement": "Good?"})
    assert strings == typed
    assert strings.campaign_fields == {
        "redundancy": 3, "source_language": "", "target_language": "en", "statement": "Good?", "instructions": "",
        "hit_timeout_minutes": 60, "payment_per_hit": Decimal("1.50"), "completion_code": "",
        "require_qualification": True, "required_native_language": "", "status": "active", "hit_size": 100,
        "qc_test": "wilcoxon", "qc_threshold": 0.01}
    # The preset (the family's default) fills the conventions not given.
    assert strings.options == {"reference_as_system": True, "statistics_preset": "wmt21-da", "threshold_rule": "lt",
                               "reliability_scope": "study", "cluster_rule": "wmt"}
    pairwise = get_protocol("pairwise-fluency").parse_options({"systems": " mt , human ", "spam_rate_sentence": "0.25",
                                                                "publish": "false"})
    assert pairwise.options == {"systems": ["mt", "human"], "unit": "document", "docs_per_hit": 10,
                                "spam_rates": {"document": 5 / 55, "sentence": 0.25}, "max_spam_miss_rate": 0.2}
    assert pairwise.campaign_fields["status"] == "draft" and "hit_size" not in pairwise.campaign_fields
    assert adequacy.parse_options({}, defaults={"publish": False}).campaign_fields["status"] == "draft"


def test_the_threshold_defaults_to_the_chosen_tests():
    adequacy = get_protocol("adequacy")
    assert adequacy.parse_options({}).campaign_fields["qc_threshold"] == 0.05
    assert adequacy.parse_options({"qc_test": "appraise"}).campaign_fields["qc_threshold"] == 0.01
    assert adequacy.parse_options({"qc_test": "appraise", "qc_threshold": "0.2"}).campaign_fields[
        "qc_threshold"] == 0.2


def test_every_bad_value_is_named_at_once():
    with pytest.raises(OptionError) as info:
        get_protocol("adequacy").parse_options({
            "redundancy": "0", "seed": "9" * 5000, "hit_size": "50", "qc_test": "nonsense", "qc_threshold": "abc",
            "statement": "a\x00b", "completion_code": "x" * 65, "target_language": "e\nn", "publish": "maybe",
            "payment_per_hit": "1.505", "systems": "A,B", "unknown": "1",
        })
    assert dict(info.value.errors) == {
        "redundancy": "must be at least 1", "seed": "is too long", "hit_size": "must be a multiple of 20",
        "qc_test": "must be one of paired-t, wilcoxon, welch, mann-whitney, appraise",
        "qc_threshold": "must be a number", "statement": "must not contain NUL characters",
        "completion_code": "must be at most 64 characters", "target_language": "must be a single line",
        "publish": "must be true or false", "payment_per_hit": "must have at most 2 decimal places",
        "systems": "does not apply to protocol 'adequacy'", "unknown": "does not apply to protocol 'adequacy'",
    }
    pairwise = get_protocol("pairwise-adequacy")
    for systems in (None, "mt", "mt,mt", "a,b,c", ["mt"]):
        with pytest.raises(OptionError) as info:
            pairwise.parse_options({"systems": systems})
        assert info.value.errors == [("systems", TWO_SYSTEMS)]


@pytest.mark.django_db
def test_reliability_and_spam_settings_from_every_front_end(front_end, request):
    published = request.node.callspec.params["front_end"] != "admin"
    assert front_end(campaign_lines(35), name="DA", protocol="adequacy", qc_test="wilcoxon", qc_threshold=0.02,
                     redundancy=2, seed=3, payment_per_hit="1.50", completion_code="C0DE") == {}
    campaign = Campaign.objects.get(name="DA")
    assert (campaign.qc_test, campaign.qc_threshold, campaign.redundancy, campaign.seed) == ("wilcoxon", 0.02, 2, 3)
    assert (str(campaign.payment_per_hit), campaign.completion_code) == ("1.50", "C0DE")
    assert campaign.status == ("active" if published else "draft")
    lines = campaign_lines(40, systems=("human", "mt"), docs=8)
    assert front_end(lines, name="PW", protocol="pairwise-adequacy", systems="mt,human", unit="both",
                     docs_per_hit=2, spam_rate_sentence=0.25, max_spam_miss_rate=0.35, publish=not published) == {}
    campaign = Campaign.objects.get(name="PW")
    assert campaign.options == {"systems": ["mt", "human"], "unit": "both", "docs_per_hit": 2,
                                "spam_rates": {"document": 5 / 55, "sentence": 0.25}, "max_spam_miss_rate": 0.35,
                                "criterion": "adequacy"}
    assert campaign.status == ("draft" if published else "active")


@pytest.mark.django_db
@pytest.mark.parametrize("lines,fields,errors", [
    (campaign_lines(35), {"protocol": "adequacy", "qc_threshold": "0.9"}, {"qc_threshold": ["must be at most 0.5"]}),
    (campaign_lines(35), {"protocol": "fluency", "qc_test": "coin-flip", "redundancy": "x"},
     {"qc_test": ["must be one of paired-t, wilcoxon, welch, mann-whitney, appraise"],
      "redundancy": ["must be a whole number"]}),
    (campaign_lines(20, systems=("human", "mt")), {"protocol": "pairwise-fluency", "systems": "mt",
                                                    "max_spam_miss_rate": "1.5"},
     {"systems": [TWO_SYSTEMS], "max_spam_miss_rate": ["must be at most 1"]}),
    (campaign_lines(20, systems=("human", "mt")), {"protocol": "pairwise-fluency", "systems": "mt,google"},
     {"systems": ["system 'google' is not in the file"]}),  # checked against the file
])
def test_a_bad_value_is_refused_naming_the_field(front_end, lines, fields, errors):
    assert front_end(lines, name="Bad", **fields) == errors
    assert Campaign.objects.count() == 0


@pytest.fixture
def lenient_test():
    """A reliability test registered at test time (no migration): everyone reliable, p = 0."""
    thresholds = []

    def run(pairs, threshold):
        thresholds.append(threshold)
        n = pairs.n_workers
        return np.zeros(n), np.bincount(pairs.worker[pairs.bad], minlength=n), np.ones(n, bool)

    reliability_tests.register(reliability_tests.ReliabilityTest(
        "everyone", "Everyone is reliable (test)", 0.2, "always reliable", run))
    yield thresholds
    reliability_tests.unregister("everyone")


@pytest.mark.django_db
def test_a_registered_test_is_offered_and_used_by_the_analysis(lenient_test, api, admin_client):
    choice = ("everyone", "Everyone is reliable (test)")
    assert choice in OPTIONS["qc_test"].choice_list()
    assert choice in list(CampaignImportForm().fields["qc_test"].widget.choices)
    assert "everyone" in CampaignImportSerializer().fields["qc_test"].choices
    assert "everyone" in ImportCommand().create_parser("manage.py", "import_campaign").format_help()
    response = api.post("/api/campaigns/", {"file": upload(campaign_lines(35)), "name": "Lenient",
                                            "protocol": "adequacy", "redundancy": 2, "qc_test": "everyone"},
                        format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(name="Lenient")
    assert (campaign.qc_test, campaign.qc_threshold) == ("everyone", 0.2)  # the test's default threshold
    rng = random.Random(4)
    for worker, kind in (("careful", "diligent"), ("clicker", "random")):
        complete_hit(Client(), campaign.slug, worker, Behaviour(kind), {"sys-A": 70, "sys-B": 50}, rng)
    assert api.post(f"/api/campaigns/{campaign.slug}/compute/").status_code == 202
    workers = {w["worker"]: w for w in api.get(f"/api/campaigns/{campaign.slug}/workers/").json()["results"]}
    assert {w["test"] for w in workers.values()} == {"everyone"}
    assert workers["clicker"]["reliable"] is True and workers["clicker"]["p_value"] == 0  # paired-t refuses them
    assert lenient_test and set(lenient_test) == {0.2}
    change = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert '<option value="everyone" selected>' in change  # the admin's change form offers it too

"""The admin form, the API and `manage.py import_campaign` make the same campaign from the same file and the
same choices, for every protocol (issue 23, defect 1): the admin form is posted as a browser would, with every
field's initial value, so a select that starts on its first choice would count as a choice. The preview states the
statistical conventions before Publish."""
import io
import json
from html.parser import HTMLParser

import pytest
from django.core.management import call_command

from annotation.models import Campaign
from annotation.protocols import all_protocols

from .conftest import campaign_lines

pytestmark = pytest.mark.django_db
IMPORT_URL = "/admin/annotation/campaign/import/"
PROTOCOLS = [p.name for p in all_protocols() if not p.stage_only]
SPEC = {p.name: p for p in all_protocols()}
#: Fields that are not the campaign's settings, or differ by design: `seed` is random when not given, and
#: `status` follows `publish`, whose default is the front-end's own (CONTRACT: the admin imports drafts).
NOT_SETTINGS = {"seed", "status"}
#: One non-default choice per protocol (the issue's example: the preset appraise for adequacy).
CHOICE = {"fluency": {"statistics_preset": "appraise"}, "adequacy": {"statistics_preset": "appraise"},
          "source-adequacy": {"statistics_preset": "appraise"}, "esa": {"statistics_preset": "wmt25-esa"},
          "mqm": {"statistics_preset": "wmt25-esa"}, "contrastive-esa": {"statistics_preset": "wmt25-esa"},
          "pairwise-adequacy": {"unit": "sentence"}, "pairwise-fluency": {"unit": "sentence"},
          "ranking": {"gold": "best"}}
SYSTEMS = ("sys-A", "sys-B", "sys-C", "sys-D", "sys-E")


def protocol_lines(protocol: str) -> list[str]:
    """A file every protocol imports: 40 segments of 5 systems in 4 documents (constituent protocols: with spans)."""
    lines = campaign_lines(40, systems=SYSTEMS, docs=4)
    if "constituent" not in protocol:
        return lines
    records = [json.loads(line) for line in lines]
    for record in records:
        record["constituent"] = {"source": [0, 6], "systems": {name: [0, 3] for name in SYSTEMS}}
    return [json.dumps(record) for record in records]


def required(protocol: str) -> dict:
    return {"systems": "sys-A,sys-B"} if protocol.startswith("pairwise") else {}


class FormFields(HTMLParser):
    """The values a browser submits from a form as served: inputs, checked boxes, textareas, and each select's
    selected option (its first one when none is marked)."""

    def __init__(self):
        super().__init__()
        self.values: dict[str, str] = {}
        self.select: str | None = None
        self.chosen = False
        self.textarea: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        name = attrs.get("name")
        if tag == "input" and name and attrs.get("type") not in ("file", "submit"):
            if attrs.get("type") != "checkbox" or "checked" in attrs:
                self.values[name] = attrs.get("value") or ("on" if attrs.get("type") == "checkbox" else "")
        elif tag == "select":
            self.select, self.chosen = name, False
        elif tag == "option" and self.select:
            if self.select not in self.values or ("selected" in attrs and not self.chosen):
                self.values[self.select] = attrs.get("value", "")
                self.chosen = self.chosen or "selected" in attrs
        elif tag == "textarea" and name:
            self.textarea = name
            self.values[name] = ""

    def handle_endtag(self, tag):
        if tag == "select":
            self.select = None
        elif tag == "textarea":
            self.textarea = None

    def handle_data(self, data):
        if self.textarea:
            self.values[self.textarea] += data.lstrip("\n")


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = name
    return handle


def via_admin(client, protocol, lines, name, choices, settings=None) -> Campaign:
    page = client.get(IMPORT_URL)
    assert page.status_code == 200
    form = FormFields()
    form.feed(page.content.decode())
    assert "csrfmiddlewaretoken" in form.values and "qc_test" in form.values  # the whole form was read
    data = {**form.values, "name": name, "protocol": protocol, "file": upload(lines), **choices}
    if settings is not None:
        data["settings"] = upload([json.dumps(settings)], "settings.json")
    response = client.post(IMPORT_URL, data)
    assert response.status_code == 302, response.context["form"].errors if response.context else response
    return Campaign.objects.get(name=name)


def via_api(api, protocol, lines, name, choices, settings=None) -> Campaign:
    data = {"name": name, "file": upload(lines), **({"protocol": protocol} if protocol else {}), **choices}
    if settings is not None:
        data["settings"] = upload([json.dumps(settings)], "settings.json")
    response = api.post("/api/campaigns/", data, format="multipart")
    assert response.status_code == 201, response.content
    return Campaign.objects.get(slug=response.json()["campaign"])


def via_cli(tmp_path, protocol, lines, name, choices, settings=None, owner=None) -> Campaign:
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    args = [str(path), "--name", name, *(["--protocol", protocol] if protocol else [])]
    args += ["--owner", owner] if owner else []
    for option, value in choices.items():
        flag = "--" + option.replace("_", "-")
        args += [flag] if value == "true" else ["--no-" + flag[2:]] if value == "false" else [flag, str(value)]
    if settings is not None:
        settings_path = tmp_path / f"{name}.settings.json"
        settings_path.write_text(json.dumps(settings))
        args += ["--settings-file", str(settings_path)]
    out = io.StringIO()
    call_command("import_campaign", *args, stdout=out)
    return Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"])


def stored(campaign: Campaign) -> dict:
    """Every setting the campaign stored from its import options: the Campaign fields they fill and `options`."""
    values = {"options": campaign.options, "study": campaign.study.name if campaign.study else None}
    for option in SPEC[campaign.protocol].option_fields():
        key = option.key or option.name
        if option.target == "campaign" and key not in NOT_SETTINGS and key != "study":
            values[key] = getattr(campaign, key)
    return values


@pytest.fixture
def three(api, admin_client, tmp_path):
    """Import through the admin form, the API and the command: {front-end: stored campaign}."""
    def run(protocol, lines, choices, settings=None, tag=""):
        return {
            "admin": via_admin(admin_client, protocol, lines, f"{protocol}{tag} admin", choices, settings),
            "api": via_api(api, protocol, lines, f"{protocol}{tag} api", choices, settings),
            "cli": via_cli(tmp_path, protocol, lines, f"{protocol}{tag} cli", choices, settings),
        }
    return run


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_same_file_and_choices_make_the_same_campaign_everywhere(three, protocol):
    lines = protocol_lines(protocol)
    chosen = CHOICE.get(protocol, {"hit_timeout_minutes": "30"})
    for choices in (required(protocol), {**required(protocol), **chosen}):
        made = three(protocol, lines, choices, tag=str(len(choices)))
        assert stored(made["admin"]) == stored(made["api"]) == stored(made["cli"]), choices
        assert made["admin"].status == "draft" and made["api"].status == made["cli"].status == "active"
    for name, value in chosen.items():  # the choice was taken, not only made alike
        option = next(o for o in SPEC[protocol].option_fields() if o.name == name)
        where = made["cli"].options if option.target == "options" else made["cli"].__dict__
        assert str(where[option.key or name]) == value


def test_entry_limits_lab_is_stored_alike_by_the_three_front_ends(three):
    """The campaign-level option of issue 23, defect 7: its non-default value, through the form, API and CLI."""
    made = three("adequacy", protocol_lines("adequacy"), {"entry_limits": "lab"}, tag="-lab")
    assert {front: campaign.entry_limits for front, campaign in made.items()} == dict.fromkeys(made, "lab")
    assert stored(made["admin"]) == stored(made["api"]) == stored(made["cli"])


def test_esa_and_appraise_get_their_own_conventions_from_the_admin_form(three):
    """The issue's cases: ESA left at its defaults, adequacy with the preset appraise."""
    esa = three("esa", protocol_lines("esa"), {})["admin"]
    assert (esa.options["statistics_preset"], esa.qc_test, esa.options["reliability_scope"]) == \
        ("wmt24-esa", "wilcoxon", "campaign")
    adequacy = three("adequacy", protocol_lines("adequacy"), {"statistics_preset": "appraise"})["admin"]
    assert (adequacy.qc_test, adequacy.qc_threshold, adequacy.options["threshold_rule"],
            adequacy.options["reliability_scope"]) == ("appraise", 0.01, "le", "campaign")


def test_the_form_starts_with_every_option_empty(admin_client):
    form = FormFields()
    form.feed(admin_client.get(IMPORT_URL).content.decode())
    options = {o.name for p in all_protocols() for o in p.option_fields()}
    assert {name: value for name, value in form.values.items() if name in options and value} == {}
    assert "— default for the protocol —" in admin_client.get(IMPORT_URL).content.decode()


def test_the_preview_shows_the_conventions_before_publish(admin_client):
    lines = protocol_lines("adequacy")
    campaign = via_admin(admin_client, "adequacy", lines, "preview conventions", {"statistics_preset": "appraise"})
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    assert 'id="publish"' in page
    for label, value in (("preset", "appraise"), ("test", "appraise"), ("α", "0.01"), ("rule", "reliable when p ≤ α"),
                         ("scope", "campaign")):
        assert f'data-convention="{label}">{value}</strong>' in page, label
    link = f'href="/api/campaigns/{campaign.slug}/settings/?format=json" id="settings-file-link"'
    assert link in page  # the settings file, downloaded with the admin's session
    settings = admin_client.get(f"/api/campaigns/{campaign.slug}/settings/?format=json").json()
    assert settings["options"]["statistics_preset"] == "appraise" and settings["options"]["publish"] is False
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    assert 'id="settings-file-link" href="/api/campaigns/' in page
    esa = via_admin(admin_client, "esa", protocol_lines("esa"), "preview esa", {})
    page = admin_client.get(f"/admin/annotation/campaign/{esa.pk}/preview/").content.decode()
    assert 'data-convention="preset">wmt24-esa<' in page and 'data-convention="test">wilcoxon<' in page
    assert 'data-convention="scope">campaign<' in page


def test_the_preview_shows_every_convention_of_a_ranking_and_a_pairwise_campaign(admin_client):
    """Ranking and pairwise previews stated α alone or nothing: each now states every convention its protocol
    declares (gold screening for ranking, the spam-miss bound for pairwise), with the stored value."""
    ranking = via_admin(admin_client, "ranking", protocol_lines("ranking"), "preview ranking", {})
    page = admin_client.get(f"/admin/annotation/campaign/{ranking.pk}/preview/").content.decode()
    options = ranking.options or {}
    for label, value in (("α", f"{ranking.qc_threshold:g}"), ("min gold", str(options["min_gold"])),
                         ("gold accuracy", f"{options['min_gold_accuracy']:g}")):
        assert f'data-convention="{label}">{value}</strong>' in page, (label, value)
    pairwise = via_admin(admin_client, "pairwise-adequacy", protocol_lines("pairwise-adequacy"), "preview pairwise",
                         {"systems": ",".join(SYSTEMS[:2])})
    page = admin_client.get(f"/admin/annotation/campaign/{pairwise.pk}/preview/").content.decode()
    bound = (pairwise.options or {}).get("max_spam_miss_rate")
    assert bound is not None and f'data-convention="max spam missed">{bound:g}</strong>' in page

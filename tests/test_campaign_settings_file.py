"""A campaign's settings as a file (issue 23, defect 10): exported by GET /api/campaigns/<slug>/settings/, accepted
next to the data by the command, the API and the admin, giving the same campaign; options given beside it win.
And the import says when the HITs differ from what was asked (defect 5): fewer outputs per ranking screen than
screen_size, document-level HITs larger than hit_size."""
import io
import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Campaign

from .conftest import campaign_lines
from .test_import_front_ends import protocol_lines, stored, via_admin, via_api, via_cli

pytestmark = pytest.mark.django_db
#: Non-default options per protocol, the settings file must carry them all.
CHOSEN = {
    "adequacy": {"statistics_preset": "appraise", "hit_size": "40", "redundancy": "2", "seed": "11",
                 "target_language": "de", "gate": "true", "payment_per_hit": "1.25", "study": "WMT99"},
    "esa": {"statistics_preset": "wmt25-esa", "segments_per_hit": "20", "show_source": "false",
            "qc_threshold": "0.02", "seed": "5"},
    "pairwise-fluency": {"systems": "sys-B,sys-C", "unit": "both", "docs_per_hit": "2", "seed": "3"},
    "ranking": {"screen_size": "3", "gold": "best", "screens_per_hit": "4", "show_reference": "true", "seed": "9"},
    "reading-comprehension": {"voters": "5", "grade_items_per_hit": "10", "seed": "2", "publish": "false"},
}


def cli(*args, **kwargs) -> Campaign:
    """Import through the command, owned by the `api` fixture's user (who then may read its settings)."""
    return via_cli(*args, **kwargs, owner="researcher")


def settings_of(client, campaign) -> dict:
    """The settings file as the API serves it (`client`: a token client, or the admin's session as its link)."""
    response = client.get(f"/api/campaigns/{campaign.slug}/settings/", {"format": "json"})
    assert response.status_code == 200
    assert response["Content-Disposition"] == f'attachment; filename="{campaign.slug}.settings.json"'
    return response.json()


@pytest.mark.parametrize("protocol", sorted(CHOSEN))
def test_the_exported_settings_make_the_same_campaign(api, admin_client, tmp_path, protocol):
    lines = protocol_lines(protocol)
    first = cli(tmp_path, protocol, lines, f"{protocol} first", CHOSEN[protocol])
    settings = settings_of(api, first)
    assert settings["protocol"] == protocol and settings["options"]["seed"] == int(CHOSEN[protocol]["seed"])
    again = {"cli": cli(tmp_path, None, lines, f"{protocol} cli", {}, settings),
             "api": via_api(api, None, lines, f"{protocol} api", {}, settings),
             "admin": via_admin(admin_client, "", lines, f"{protocol} admin", {}, settings)}
    for front_end, campaign in again.items():
        assert stored(campaign) == stored(first), front_end
        assert (campaign.seed, campaign.status) == (first.seed, first.status), front_end
        client = admin_client if front_end == "admin" else api
        assert settings_of(client, campaign)["options"] == settings["options"], front_end
        assert [h.size for h in campaign.hits.order_by("number")] == [h.size for h in first.hits.order_by("number")]


def test_options_given_beside_the_settings_file_win(api, admin_client, tmp_path):
    lines = protocol_lines("adequacy")
    settings = settings_of(api, cli(tmp_path, "adequacy", lines, "base", CHOSEN["adequacy"]))
    beside = {"statistics_preset": "crowd-alone", "redundancy": "3"}
    made = [cli(tmp_path, "adequacy", lines, "cli", beside, settings),
            via_api(api, "adequacy", lines, "api", beside, settings),
            via_admin(admin_client, "adequacy", lines, "admin", beside, settings)]
    for campaign in made:
        assert campaign.options["statistics_preset"] == "crowd-alone" and campaign.redundancy == 3
        # the file's test, α, rule and scope were appraise's: they follow the preset given, as if chosen directly
        assert (campaign.qc_test, campaign.qc_threshold, campaign.options["threshold_rule"],
                campaign.options["cluster_rule"]) == ("paired-t", 0.05, "le", "above")
        assert campaign.target_language == "de" and campaign.hit_size == 40  # the rest from the file
    assert stored(made[0]) == stored(made[1]) == stored(made[2])
    # a value the file chose itself stays: ESA's threshold 0.02, with the preset wmt24-esa given beside it
    esa = settings_of(api, cli(tmp_path, "esa", protocol_lines("esa"), "esa base", CHOSEN["esa"]))
    again = cli(tmp_path, None, protocol_lines("esa"), "esa again", {"statistics_preset": "wmt24-esa"}, esa)
    assert (again.qc_threshold, again.options["cluster_rule"]) == (0.02, "wmt24")


BAD_FILES = [
    (b"not json", "not JSON"),
    (json.dumps({"protocol": "adequacy", "options": {}}).encode(), '"format"'),
    (json.dumps({"format": "mteval-campaign-settings", "version": 1, "protocol": "nope", "options": {}}).encode(),
     "protocol"),
    (json.dumps({"format": "mteval-campaign-settings", "version": 1, "protocol": "esa", "options": {}}).encode(),
     "not 'adequacy'"),
]


@pytest.mark.parametrize("body, reason", BAD_FILES)
def test_a_bad_settings_file_is_refused_with_a_reason_and_nothing_imported(api, admin_client, tmp_path, body,
                                                                         reason):
    lines = protocol_lines("adequacy")
    path = tmp_path / "settings.json"
    path.write_bytes(body)
    with pytest.raises(CommandError, match="settings: .*" + reason):
        call_command("import_campaign", str(tmp_path / "x.jsonl"), "--name", "x", "--protocol", "adequacy",
                     "--settings-file", str(path), stdout=io.StringIO())
    settings = io.BytesIO(body)
    settings.name = "settings.json"
    data = io.BytesIO(("\n".join(lines) + "\n").encode())
    data.name = "campaign.jsonl"
    response = api.post("/api/campaigns/", {"file": data, "name": "x", "protocol": "adequacy", "settings": settings},
                        format="multipart")
    assert response.status_code == 400 and reason in response.json()["settings"][0]
    settings.seek(0)
    data.seek(0)
    response = admin_client.post("/admin/annotation/campaign/import/",
                                 {"file": data, "name": "x", "protocol": "adequacy", "settings": settings})
    assert response.status_code == 200 and reason in response.context["form"].errors["settings"][0]
    assert not Campaign.objects.exists()


def test_a_bad_value_in_the_settings_file_is_refused_naming_it(api, tmp_path):
    settings = {"format": "mteval-campaign-settings", "version": 1, "protocol": "adequacy",
                "options": {"hit_size": 30}}
    data = io.BytesIO(("\n".join(protocol_lines("adequacy")) + "\n").encode())
    data.name = "campaign.jsonl"
    file = io.BytesIO(json.dumps(settings).encode())
    file.name = "settings.json"
    response = api.post("/api/campaigns/", {"file": data, "name": "x", "settings": file}, format="multipart")
    assert response.status_code == 400 and "hit_size" in response.json()
    assert not Campaign.objects.exists()


# Defect 5: what the HITs do differently from what was asked is said at import and in the preview.

def test_a_ranking_screen_smaller_than_asked_is_said(api, admin_client, tmp_path):
    lines = campaign_lines(20, systems=("sys-A", "sys-B"))
    data = io.BytesIO(("\n".join(lines) + "\n").encode())
    data.name = "campaign.jsonl"
    response = api.post("/api/campaigns/", {"file": data, "name": "two", "protocol": "ranking"}, format="multipart")
    assert response.status_code == 201
    warning = "screen_size: the file has 2 systems, so each screen ranks 2 outputs, not the 5 asked for"
    assert warning in response.json()["warnings"]
    out = io.StringIO()
    path = tmp_path / "two.jsonl"
    path.write_text("\n".join(lines) + "\n")
    call_command("import_campaign", str(path), "--name", "two", "--protocol", "ranking", stdout=out)
    assert warning in json.loads(out.getvalue())["warnings"]
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    page = admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()
    assert warning in page
    five = via_api(api, "ranking", protocol_lines("ranking"), "five", {})
    assert "screen_size:" not in admin_client.get(f"/admin/annotation/campaign/{five.pk}/preview/").content.decode()


def test_document_hits_larger_than_hit_size_are_said(api, admin_client):
    data = io.BytesIO(("\n".join(campaign_lines(60, docs=6)) + "\n").encode())
    data.name = "campaign.jsonl"
    response = api.post("/api/campaigns/", {"file": data, "name": "docs", "protocol": "adequacy", "hit_size": "20",
                                            "document_mode": "true"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    sizes = sorted({hit.size for hit in campaign.hits.all()})
    assert sizes != [20]
    held = str(sizes[0]) if len(sizes) == 1 else f"{sizes[0]} to {sizes[-1]}"
    warning = next(w for w in response.json()["warnings"] if w.startswith("hit_size:"))
    assert f"document-level HITs hold {held} items, not the 20 asked for" in warning
    assert warning in admin_client.get(f"/admin/annotation/campaign/{campaign.pk}/preview/").content.decode()

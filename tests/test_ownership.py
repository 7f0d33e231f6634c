"""Campaign ownership (issue "Hardening", point 5): a researcher sees and acts on their own campaigns and those
shared with them (directly or through a group); superusers see all; someone else's campaign is not found (404),
never 403. The matrix: role × action on one campaign; then the list, sharing, imports, studies, calibration,
the comparison page and the admin."""
import io
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import CommandError, call_command
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from annotation.models import Campaign, Judgment, Study
from annotation.services.judgment_import import import_judgments
from evaluation.analyses import compute_results

from .conftest import as_bytes, campaign_lines, start
from .test_results_pages import da_campaign, da_lines

pytestmark = pytest.mark.django_db
User = get_user_model()

#: action: (method, path, body, the status that means it was done). {slug} and {pk} name the campaign.
ACTIONS = {
    "list": ("get", "/api/campaigns/", None, 200),
    "detail": ("get", "/api/campaigns/{slug}/", None, 200),
    "systems": ("get", "/api/campaigns/{slug}/systems/", None, 200),
    "workers": ("get", "/api/campaigns/{slug}/workers/", None, 200),
    "significance": ("get", "/api/campaigns/{slug}/significance/", None, 200),
    "tables": ("get", "/api/campaigns/{slug}/tables/", None, 200),
    "table": ("get", "/api/campaigns/{slug}/tables/workers/?format=csv", None, 200),
    "costs": ("get", "/api/campaigns/{slug}/costs/", None, 200),
    "export": ("get", "/api/campaigns/{slug}/judgments/?format=csv", None, 200),
    "approvals": ("get", "/api/campaigns/{slug}/approvals/", None, 200),
    "compute": ("post", "/api/campaigns/{slug}/compute/", None, 202),
    "close": ("post", "/api/campaigns/{slug}/status/", {"status": "closed"}, 200),
    "block": ("post", "/api/campaigns/{slug}/block/", {"worker": "worker-1"}, 200),
    "unblock": ("post", "/api/campaigns/{slug}/unblock/", {"worker": "worker-1"}, 200),
    "share": ("post", "/api/campaigns/{slug}/share/", {"users": ["bystander"]}, 200),
    "unshare": ("post", "/api/campaigns/{slug}/unshare/", {"users": ["bystander"]}, 200),
    "results_page": ("get", "/results/{slug}/", None, 200),
    "recompute": ("post", "/results/{slug}/recompute/", None, 302),
    "csv_download": ("get", "/results/{slug}/workers.csv", None, 200),
    "latex_download": ("get", "/results/{slug}/systems.tex", None, 200),
    "admin_change": ("get", "/admin/annotation/campaign/{pk}/change/", None, 200),
    "admin_preview": ("get", "/admin/annotation/campaign/{pk}/preview/", None, 200),
    "admin_results": ("get", "/admin/evaluation/campaignstatistics/{pk}/change/", None, 200),
}
SHARING = ("share", "unshare")
PAGES = ("results_page", "recompute", "csv_download", "latex_download")
ADMIN = ("admin_change", "admin_preview", "admin_results")
ADMIN_PERMISSIONS = ("view_campaign", "change_campaign", "view_campaignstatistics")


def researcher(username: str, *groups: Group, staff: bool = True):
    """A staff researcher who may use the admin's campaign pages (Django's model permissions)."""
    user = User.objects.create_user(username, password="pw", is_staff=staff)
    user.user_permissions.add(*Permission.objects.filter(codename__in=ADMIN_PERMISSIONS))
    user.groups.add(*groups)
    return user


@pytest.fixture
def world(make_campaign):
    """One campaign owned by `owner`, shared with `shared_user` and with the group of `group_member`; `other` is a
    researcher it is not shared with."""
    owner = researcher("owner")
    team = Group.objects.create(name="mt-team")
    users = {"owner": owner, "shared_user": researcher("shared-user"), "group_member": researcher("member", team),
             "other": researcher("other", Group.objects.get_or_create(name="researchers")[0]),
             "superuser": User.objects.create_superuser("root", password="pw"),
             "annotator": User.objects.create_user("annotator", password="pw")}
    User.objects.create_user("bystander", password="pw", is_staff=True)
    campaign = make_campaign(owner=owner, redundancy=2)
    campaign.shared_with.add(users["shared_user"])
    campaign.shared_with_groups.add(team)
    start(Client(), campaign, "worker-1")
    return {"campaign": campaign, "users": users}


def attempt(world, role: str, action: str) -> str:
    """Do `action` as `role`: "done", "not found", "forbidden" or "login" (sent to the login page)."""
    method, path, body, done = ACTIONS[action]
    campaign = world["campaign"]
    client = Client()
    if role != "anonymous":
        client.force_login(world["users"][role])
    url = path.format(slug=campaign.slug, pk=campaign.pk)
    response = (client.get(url) if method == "get" else
                client.post(url, json.dumps(body or {}), content_type="application/json"))
    if action == "list" and response.status_code == 200:
        return "done" if campaign.slug in {c["slug"] for c in response.json()["results"]} else "not found"
    if response.status_code == 302 and "/login/" in response["Location"]:
        return "login"
    if response.status_code == done:
        return "done"
    return {404: "not found", 403: "forbidden"}.get(response.status_code, f"status {response.status_code}")


# The matrix ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("action", ACTIONS)
def test_allows_superuser(world, action):
    assert attempt(world, "superuser", action) == "done"


@pytest.mark.parametrize("action", ACTIONS)
def test_allows_owner(world, action):
    assert attempt(world, "owner", action) == "done"


@pytest.mark.parametrize("action", ACTIONS)
def test_allows_researcher_it_is_shared_with(world, action):
    assert attempt(world, "shared_user", action) == ("forbidden" if action in SHARING else "done")


@pytest.mark.parametrize("action", ACTIONS)
def test_allows_researcher_in_a_group_it_is_shared_with(world, action):
    assert attempt(world, "group_member", action) == ("forbidden" if action in SHARING else "done")


@pytest.mark.parametrize("action", ACTIONS)
def test_denies_other_researcher(world, action):
    assert attempt(world, "other", action) == "not found"


@pytest.mark.parametrize("action", ACTIONS)
def test_denies_annotator(world, action):
    assert attempt(world, "annotator", action) == ("login" if action in ADMIN else "forbidden")


@pytest.mark.parametrize("action", ACTIONS)
def test_denies_anonymous(world, action):
    assert attempt(world, "anonymous", action) == ("login" if action in PAGES + ADMIN else "forbidden")


def test_denies_other_researcher_the_same_answer_as_no_campaign(world):
    """Someone else's campaign and a slug that names none are answered alike: nothing tells them apart."""
    client = Client()
    client.force_login(world["users"]["other"])
    theirs, nobody = world["campaign"].slug, "no-such-campaign"
    for path in ("/api/campaigns/{}/", "/api/campaigns/{}/judgments/", "/results/{}/"):
        mine, none = client.get(path.format(theirs)), client.get(path.format(nobody))
        assert (mine.status_code, mine.content) == (none.status_code, none.content.replace(nobody.encode(),
                                                                                            theirs.encode()))


def test_the_actions_of_a_denied_researcher_change_nothing(world):
    campaign = world["campaign"]
    for action in ("close", "block", "share"):
        assert attempt(world, "other", action) == "not found"
    campaign.refresh_from_db()
    assert campaign.status == "active" and not campaign.blocked_annotators.exists()
    assert not campaign.shared_with.filter(username="bystander").exists()


# Who sees which campaigns --------------------------------------------------------------------------


def test_the_list_and_results_index_show_own_and_shared_campaigns(world, make_campaign):
    owner, other = world["users"]["owner"], world["users"]["other"]
    theirs = make_campaign(name="Other's", owner=other)
    unowned = make_campaign(name="Unowned", owner=None)
    expected = {"owner": {world["campaign"].slug}, "group_member": {world["campaign"].slug},
                "other": {theirs.slug}, "superuser": {world["campaign"].slug, theirs.slug, unowned.slug}}
    for role, slugs in expected.items():
        client = Client()
        client.force_login(world["users"][role])
        assert {c["slug"] for c in client.get("/api/campaigns/").json()["results"]} == slugs, role
        index = client.get("/results/").content.decode()
        assert {c.slug for c in (world["campaign"], theirs, unowned) if f'href="/results/{c.slug}/"' in index} == \
            slugs, role
    assert set(Campaign.objects.visible_to(owner)) == {world["campaign"]}
    assert not Campaign.objects.visible_to(world["users"]["annotator"]).exists()


def test_unowned_campaigns_are_for_superusers_only(make_campaign, researcher):
    campaign = make_campaign(owner=None)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=researcher).key}")
    assert api.get(f"/api/campaigns/{campaign.slug}/").status_code == 404
    root = APIClient()
    root.force_authenticate(User.objects.create_superuser("root", password="pw"))
    assert root.get(f"/api/campaigns/{campaign.slug}/").status_code == 200


def test_a_researchers_group_member_who_is_not_staff_sees_what_is_shared_with_them(world):
    member = User.objects.create_user("member-only", password="pw")
    member.groups.add(Group.objects.get(name="researchers"))
    client = Client()
    client.force_login(member)
    slug = world["campaign"].slug
    assert client.get(f"/api/campaigns/{slug}/").status_code == 404
    world["campaign"].shared_with.add(member)
    assert client.get(f"/api/campaigns/{slug}/").status_code == 200
    assert client.get(f"/results/{slug}/").status_code == 200


# Sharing -------------------------------------------------------------------------------------------


def test_owner_shares_and_unshares_with_users_and_groups(world):
    campaign, other = world["campaign"], world["users"]["other"]
    owner = APIClient()
    owner.force_authenticate(world["users"]["owner"])
    as_other = APIClient()
    as_other.force_authenticate(other)
    url = f"/api/campaigns/{campaign.slug}/"
    assert as_other.get(url).status_code == 404
    response = owner.post(url + "share/", {"users": ["other"]}, format="json")
    assert response.status_code == 200
    assert response.json() == {"campaign": campaign.slug, "owner": "owner", "users": ["other", "shared-user"],
                               "groups": ["mt-team"]}
    assert as_other.get(url).status_code == 200
    assert owner.post(url + "unshare/", {"users": ["other"]}, format="json").json()["users"] == ["shared-user"]
    assert as_other.get(url).status_code == 404
    # By group: every researcher in the group gets it.
    assert owner.post(url + "share/", {"groups": ["researchers"]}, format="json").status_code == 200
    assert as_other.get(url).status_code == 200
    owner.post(url + "unshare/", {"groups": ["researchers", "mt-team"]}, format="json")
    assert Client().get(url).status_code == 403
    member = APIClient()
    member.force_authenticate(world["users"]["group_member"])
    assert member.get(url).status_code == 404


def test_sharing_refuses_unknown_names_and_empty_requests(world):
    owner = APIClient()
    owner.force_authenticate(world["users"]["owner"])
    url = f"/api/campaigns/{world['campaign'].slug}/share/"
    refused = owner.post(url, {"users": ["other", "nobody"], "groups": ["no-group"]}, format="json")
    assert refused.status_code == 400 and refused.json()["detail"] == "no user or group called: nobody, no-group"
    assert not world["campaign"].shared_with.filter(username="other").exists()  # nothing shared
    assert owner.post(url, {}, format="json").status_code == 400
    assert owner.post(url, {"users": "other"}, format="json").status_code == 400


# Imports: the importer owns the campaign (and a study it creates) ----------------------------------------


def upload(lines, name="campaign.jsonl"):
    handle = io.BytesIO(b"".join(lines))
    handle.name = name
    return handle


def test_the_api_importer_owns_the_campaign_and_the_study(api, researcher):
    response = api.post("/api/campaigns/", {"file": upload(as_bytes(campaign_lines())), "name": "Mine",
                                            "protocol": "adequacy"}, format="multipart")
    assert response.status_code == 201, response.content
    assert Campaign.objects.get(slug=response.json()["campaign"]).owner == researcher
    response = api.post("/api/campaigns/import-judgments/", {
        "file": upload(da_lines(careful=1, clickers=0, segments=4), "wmt.txt"), "format": "wmt-da",
        "name": "Judged", "study": "My study"}, format="multipart")
    assert response.status_code == 201, response.content
    campaign = Campaign.objects.get(slug=response.json()["campaign"])
    assert campaign.owner == researcher and campaign.study.owner == researcher
    assert api.get("/api/studies/my-study/").status_code == 200


def test_joining_a_shared_study_keeps_its_owner(researcher):
    first = User.objects.create_user("first", is_staff=True)
    import_judgments(da_lines(careful=1, clickers=0, segments=4), fmt="wmt-da", name="A", study="S", owner=first)
    Study.objects.get(name="S").shared_with.add(researcher)
    import_judgments(da_lines(careful=1, clickers=0, segments=4), fmt="wmt-da", name="B", study="S",
                     owner=researcher)
    assert Study.objects.get(name="S").owner == first
    assert Study.objects.get(name="S").campaigns.count() == 2


def test_the_admin_importer_owns_the_campaign(client, researcher):
    researcher.user_permissions.add(*Permission.objects.filter(codename__in=ADMIN_PERMISSIONS))
    client.force_login(researcher)
    response = client.post("/admin/annotation/campaign/import/", {
        "file": upload(as_bytes(campaign_lines(70))), "name": "Admin import", "protocol": "adequacy",
        "source_language": "de", "target_language": "en", "redundancy": 1, "hit_size": 100, "seed": 3})
    assert response.status_code == 302, response.content.decode()[:2000]
    campaign = Campaign.objects.get(name="Admin import")
    assert campaign.owner == researcher
    assert client.get(response["Location"]).status_code == 200  # the preview


def test_the_command_line_takes_an_owner(tmp_path, researcher):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(as_bytes(campaign_lines())))
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "CLI owned", "--protocol", "adequacy", "--owner",
                 "researcher", stdout=out)
    assert Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"]).owner == researcher
    call_command("import_campaign", str(path), "--name", "CLI unowned", "--protocol", "adequacy", stdout=out)
    assert Campaign.objects.get(name="CLI unowned").owner is None
    with pytest.raises(CommandError, match="owner: no user called 'nobody'"):
        call_command("import_campaign", str(path), "--name", "x", "--protocol", "adequacy", "--owner", "nobody")
    judgments = tmp_path / "j.txt"
    judgments.write_bytes(b"".join(da_lines(careful=1, clickers=0, segments=4)))
    call_command("import_judgments", str(judgments), "--format", "wmt-da", "--name", "CLI judged", "--study",
                 "CLI study", "--owner", "researcher", stdout=io.StringIO())
    campaign = Campaign.objects.get(name="CLI judged")
    assert campaign.owner == researcher and campaign.study.owner == researcher
    with pytest.raises(CommandError, match="owner: no user called"):
        call_command("import_judgments", str(judgments), "--format", "wmt-da", "--name", "y", "--owner", "nobody")
    assert not Campaign.objects.filter(name__in=["x", "y"]).exists()


# Studies, calibration and the comparison page -----------------------------------------------------------


def test_a_study_shows_only_the_campaigns_its_reader_may_see(researcher):
    colleague = User.objects.create_user("colleague", is_staff=True)
    mine = import_judgments(da_lines(careful=2, clickers=0, segments=4, worker_prefix="a"), fmt="wmt-da",
                            name="Mine", study="Shared study", owner=researcher).campaign
    study = Study.objects.get(name="Shared study")
    study.shared_with.add(colleague)  # the colleague may join it (tests/test_study_ownership.py), then it's unshared
    theirs = import_judgments(da_lines(careful=2, clickers=0, segments=4, worker_prefix="b"), fmt="wmt-da",
                              name="Theirs", study="Shared study", owner=colleague).campaign
    study.shared_with.remove(colleague)
    assert theirs.study == study
    compute_results(mine)
    client = Client()
    client.force_login(researcher)
    overview = client.get("/api/studies/shared-study/").json()
    assert [c["slug"] for c in overview["campaigns"]] == [mine.slug]
    assert {w["worker"] for w in overview["workers"]} == {"acareful-0", "acareful-1"}
    assert client.get("/api/studies/").json()["results"][0]["campaigns"] == [mine.slug]
    page = client.get("/results/study/shared-study/").content.decode()
    assert "Mine" in page and "Theirs" not in page
    # The colleague does not see the study at all until it is shared with them; then only their campaign in it.
    client.force_login(colleague)
    assert client.get("/api/studies/shared-study/").status_code == 404
    assert client.get("/results/study/shared-study/").status_code == 404
    assert client.get("/api/studies/").json()["results"] == []
    study.shared_with.add(colleague)
    assert [c["slug"] for c in client.get("/api/studies/shared-study/").json()["campaigns"]] == [theirs.slug]


def test_calibration_against_someone_elses_campaign_is_answered_as_no_campaign(researcher):
    colleague = User.objects.create_user("colleague", is_staff=True)
    mine = da_campaign("Mine", owner=researcher, seed=1)
    other_mine = da_campaign("Also mine", owner=researcher, seed=2)
    theirs = da_campaign("Theirs", owner=colleague, seed=3)
    api = APIClient()
    api.force_authenticate(researcher)
    url = f"/api/campaigns/{mine.slug}/calibration/"
    assert api.get(url, {"against": other_mine.slug, "benchmark": "sys-A"}).status_code == 200
    hidden = api.get(url, {"against": theirs.slug, "benchmark": "sys-A"})
    missing = api.get(url, {"against": "no-such-campaign", "benchmark": "sys-A"})
    assert hidden.status_code == missing.status_code == 400 and hidden.json() == missing.json()
    theirs.shared_with.add(researcher)
    assert api.get(url, {"against": theirs.slug, "benchmark": "sys-A"}).status_code == 200


def test_the_comparison_page_offers_only_visible_campaigns(client, researcher):
    colleague = User.objects.create_user("colleague", is_staff=True)
    mine = da_campaign("Mine", owner=researcher, seed=1)
    theirs = da_campaign("Theirs", owner=colleague, seed=3)
    client.force_login(researcher)
    response = client.get("/results/compare/")
    assert [c.slug for c in response.context["candidates"]] == [mine.slug]
    hidden = client.get("/results/compare/", {"old": theirs.slug, "new": mine.slug})
    assert hidden.context["result"] is None and hidden.context["error"]
    assert client.get("/results/compare.csv", {"old": theirs.slug, "new": mine.slug,
                                               "benchmark": "sys-A"}).status_code == 404


# The admin -----------------------------------------------------------------------------------------


def test_the_admin_lists_and_acts_on_visible_campaigns_only(world, make_campaign):
    other = world["users"]["other"]
    theirs = make_campaign(name="Other's", owner=other)
    client = Client()
    client.force_login(world["users"]["owner"])
    listing = client.get("/admin/annotation/campaign/").content.decode()
    assert world["campaign"].name in listing and "Other&#x27;s" not in listing and "Other's" not in listing
    client.post("/admin/annotation/campaign/", {"action": "pause", "_selected_action": [theirs.pk]})
    theirs.refresh_from_db()
    assert theirs.status == "active"
    assert client.post(f"/admin/annotation/campaign/{theirs.pk}/status/", {"status": "closed"}).status_code == 404
    theirs.refresh_from_db()
    assert theirs.status == "active"
    results = client.get("/admin/evaluation/campaignstatistics/").content.decode()
    assert f"/results/{world['campaign'].slug}/" in results and f"/results/{theirs.slug}/" not in results


@pytest.mark.parametrize("model", ["assignment", "hit", "judgment", "document", "system", "annotator"])
def test_the_admin_shows_what_visible_campaigns_hold_only(world, make_campaign, model):
    other = world["users"]["other"]
    theirs = make_campaign(name="Other's", owner=other)
    start(Client(), theirs, "their-worker")
    for campaign in (world["campaign"], theirs):  # one judgment each
        assignment = campaign.assignments.first()
        item = assignment.hit.items.order_by("position").first()
        Judgment.objects.create(campaign=campaign, assignment=assignment, annotator=assignment.annotator, item=item,
                                score=50)
    owner = world["users"]["owner"]
    owner.user_permissions.add(*Permission.objects.filter(codename=f"view_{model}"))
    client = Client()
    client.force_login(owner)
    response = client.get(f"/admin/annotation/{model}/")
    assert response.status_code == 200
    shown = list(response.context["cl"].result_list)
    assert shown
    if model == "annotator":
        assert {a.external_id for a in shown} == {"worker-1"}
    else:
        assert {row.campaign_id for row in shown} == {world["campaign"].pk}
    if model != "annotator":
        choices = [c[1] for f in response.context["cl"].filter_specs if f.title == "campaign" for c in f.lookup_choices]
        assert choices == [world["campaign"].name]


def test_only_a_superuser_changes_the_owner_and_only_the_owner_shares(world):
    campaign = world["campaign"]
    url = f"/admin/annotation/campaign/{campaign.pk}/change/"
    readonly = {}
    for role in ("superuser", "owner", "shared_user"):
        client = Client()
        client.force_login(world["users"][role])
        form = client.get(url).context["adminform"].form
        readonly[role] = {name for name in ("owner", "shared_with", "shared_with_groups") if name not in form.fields}
    assert readonly == {"superuser": set(), "owner": {"owner"},
                        "shared_user": {"owner", "shared_with", "shared_with_groups"}}


def test_the_block_action_of_the_admin_reaches_visible_campaigns_only(world, make_campaign):
    theirs = make_campaign(name="Other's", owner=world["users"]["other"])
    start(Client(), theirs, "their-worker")
    owner = world["users"]["owner"]
    owner.user_permissions.add(*Permission.objects.filter(codename__in=["view_assignment", "change_assignment"]))
    client = Client()
    client.force_login(owner)
    client.post("/admin/annotation/assignment/", {"action": "block_workers",
                                                  "_selected_action": list(theirs.assignments.values_list("pk",
                                                                                                          flat=True))})
    assert not theirs.blocked_annotators.exists()

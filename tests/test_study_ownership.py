"""Studies are owned and shared like campaigns (issue 22, defect 1): another researcher's study of the same name is
never joined, so their data cannot change your pooled verdicts and yours do not show in theirs. Through the API
with two researchers' tokens, the command line and the admin; a study shared with the importer is joined; the
migration that splits the studies already mixing owners; the campaigns a study pools."""
import importlib
import io
import json
import re

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.db import IntegrityError, connection, transaction
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient
from scipy import stats as sps

from annotation.models import Campaign, Study
from annotation.services.judgment_import import import_judgments
from evaluation.families.base import scope_campaigns

from .conftest import as_bytes, campaign_lines
from .test_error_span_import import esa_file
from .test_results_pages import WMT_HEADER

pytestmark = pytest.mark.django_db
User = get_user_model()
STUDY = "R1 Study"
#: The worker both researchers' crowds share: clear in r1's campaign (4 bad references ~30 lower), then in r2's
#: campaign 6 bad references scored above their originals.
R1_PAIRS = [(70, 40), (72, 41), (68, 39), (75, 44)]
R2_PAIRS = [(50, 58), (55, 60), (40, 52), (61, 66), (45, 50), (58, 71)]


def wmt_file(part: str, pairs, careful: int = 3) -> io.BytesIO:
    """A wmt-da upload: `careful` workers who score sys-A above sys-B and their bad references ~30 lower, and the
    worker "shared" with `pairs` (original, bad reference) on sys-B."""
    lines, n = [WMT_HEADER], 0

    def add(worker, system, sid, kind, score):
        nonlocal n
        n += 1
        lines.append(" ".join(map(str, [f"H-{part}-{worker}", worker, "de", "en", n, 1, system, n, kind, sid, score,
                                         10])))

    for w in range(careful):
        for sid in range(1, 13):
            for s, system in enumerate(("sys-A", "sys-B")):
                score = 80 - 25 * s + (sid * 7 + w * 3) % 11
                add(f"{part}-careful-{w}", system, sid, "SYSTEM", score)
                if sid % 3 == 0:
                    add(f"{part}-careful-{w}", system, sid, "BAD_REF", score - 30 - sid % 5)
    for sid, (original, bad) in enumerate(pairs, start=1):
        add("shared", "sys-A", sid, "SYSTEM", 20)
        add("shared", "sys-B", sid, "SYSTEM", original)
        add("shared", "sys-B", sid, "BAD_REF", bad)
    handle = io.BytesIO(("\n".join(lines) + "\n").encode())
    handle.name = f"{part}.txt"
    return handle


def researcher(username: str, *groups: Group) -> User:
    user = User.objects.create_user(username, password="pw", is_staff=True)
    user.groups.add(*groups)
    return user


def token_client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def import_by_api(client, part, pairs, study=STUDY) -> str:
    response = client.post("/api/campaigns/import-judgments/", {
        "file": wmt_file(part, pairs), "format": "wmt-da", "name": f"{part} campaign", "study": study},
        format="multipart")
    assert response.status_code == 201, response.content
    return response.json()["campaign"]


def results(client, slug: str) -> tuple[list, list]:
    assert client.post(f"/api/campaigns/{slug}/compute/").status_code == 202
    workers = client.get(f"/api/campaigns/{slug}/workers/").json()["results"]
    systems = client.get(f"/api/campaigns/{slug}/systems/").json()["results"]
    return workers, systems


def shared_row(workers: list) -> dict:
    return next(w for w in workers if w["worker"] == "shared")


def test_another_researchers_study_name_gives_them_a_study_of_their_own():
    r1, r2 = researcher("r1"), researcher("r2")
    api1, api2 = token_client(r1), token_client(r2)
    mine = import_by_api(api1, "r1", R1_PAIRS)
    workers_before, systems_before = results(api1, mine)
    before = shared_row(workers_before)
    assert before["reliable"] is True and before["pairs"] == 4 and before["p_value"] < 1e-4

    theirs = import_by_api(api2, "r2", R2_PAIRS)  # the same study name (201)
    # r1's results are r1's alone after both recompute; r2's shared worker is judged on r2's 6 pairs only.
    their_workers, _ = results(api2, theirs)
    assert (shared_row(their_workers)["pairs"], shared_row(their_workers)["reliable"]) == (6, False)
    workers_after, systems_after = results(api1, mine)
    assert shared_row(workers_after) == before
    assert workers_after == workers_before and systems_after == systems_before
    pooled = sps.ttest_1samp([b - o for o, b in R1_PAIRS + R2_PAIRS], 0, alternative="less").pvalue
    assert pooled > 0.05 and shared_row(workers_after)["p_value"] != pytest.approx(pooled)  # what the attack did

    # Because r2 got a study of their own, of the same name, that r2 cannot see into r1's.
    mine_study, their_study = (Campaign.objects.get(slug=s).study for s in (mine, theirs))
    assert mine_study != their_study and their_study.name == mine_study.name == STUDY
    assert (mine_study.owner, their_study.owner) == (r1, r2)
    assert list(mine_study.campaigns.values_list("slug", flat=True)) == [mine]
    assert api2.get(f"/api/studies/{mine_study.slug}/").status_code == 404


def test_a_study_shared_with_the_importer_is_joined_and_pooled():
    team = Group.objects.create(name="team")
    r1, r2, r3 = researcher("r1"), researcher("r2"), researcher("r3", team)
    api1, api2, api3 = token_client(r1), token_client(r2), token_client(r3)
    mine = import_by_api(api1, "r1", R1_PAIRS)
    study = Campaign.objects.get(slug=mine).study
    study.shared_with.add(r2)
    study.shared_with_groups.add(team)
    theirs = import_by_api(api2, "r2", R2_PAIRS)
    by_group = import_by_api(api3, "r3", [], study=study.slug)  # a shared study may be named by its slug too
    assert {c.study for c in Campaign.objects.filter(slug__in=[mine, theirs, by_group])} == {study}
    assert Study.objects.count() == 1
    workers, _ = results(api1, mine)
    assert shared_row(workers)["pairs"] == 10 and shared_row(workers)["reliable"] is False
    assert shared_row(results(api2, theirs)[0])["pairs"] == 10


def test_several_shared_studies_of_one_name_are_refused_until_one_is_named_by_slug():
    r1, r2, r3 = researcher("r1"), researcher("r2"), researcher("r3")
    slugs = []
    for owner in (r1, r2):
        slug = import_by_api(token_client(owner), owner.username, R1_PAIRS)
        study = Campaign.objects.get(slug=slug).study
        study.shared_with.add(r3)
        slugs.append(study.slug)
    api3 = token_client(r3)
    response = api3.post("/api/campaigns/import-judgments/", {
        "file": wmt_file("r3", R1_PAIRS), "format": "wmt-da", "name": "Which", "study": STUDY}, format="multipart")
    assert response.status_code == 400 and all(slug in response.content.decode() for slug in slugs)
    assert not Campaign.objects.filter(name="Which").exists() and Study.objects.count() == 2
    joined = import_by_api(api3, "r3", R1_PAIRS, study=slugs[1])
    assert Campaign.objects.get(slug=joined).study.slug == slugs[1]


def test_the_command_line_and_the_admin_resolve_the_study_by_owner(tmp_path, client):
    r1, r2 = researcher("r1"), researcher("r2")
    r2.user_permissions.add(*Permission.objects.filter(codename__in=("view_campaign", "change_campaign")))
    theirs = import_judgments(wmt_file("r1", R1_PAIRS), fmt="wmt-da", name="R1's", study=STUDY, owner=r1).campaign
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"".join(as_bytes(campaign_lines(70))))
    judgments = tmp_path / "j.txt"
    judgments.write_bytes(wmt_file("r2", R2_PAIRS).getvalue())
    call_command("import_campaign", str(path), "--name", "CLI", "--protocol", "adequacy", "--study", STUDY,
                 "--owner", "r2", stdout=io.StringIO())
    call_command("import_judgments", str(judgments), "--format", "wmt-da", "--name", "CLI judged", "--study",
                 STUDY, "--owner", "r2", stdout=io.StringIO())
    client.force_login(r2)
    upload = io.BytesIO(b"".join(as_bytes(campaign_lines(70))))
    upload.name = "admin.jsonl"
    response = client.post("/admin/annotation/campaign/import/", {
        "file": upload, "name": "Admin", "protocol": "adequacy", "source_language": "de", "target_language": "en",
        "redundancy": 1, "hit_size": 100, "seed": 3, "study": STUDY})
    assert response.status_code == 302, response.content.decode()[:2000]
    import_judgments(esa_file(), fmt="esa-jsonl", name="ESA", study=STUDY, owner=r2)  # error-span imports too
    mine = Study.objects.get(name=STUDY, owner=r2)
    assert sorted(mine.campaigns.values_list("name", flat=True)) == ["Admin", "CLI", "CLI judged", "ESA"]
    assert list(theirs.study.campaigns.all()) == [theirs]
    # Without --owner the command line's study is an ownerless one, not r1's either.
    out = io.StringIO()
    call_command("import_campaign", str(path), "--name", "Unowned", "--protocol", "adequacy", "--study", STUDY,
                 stdout=out)
    unowned = Campaign.objects.get(slug=json.loads(out.getvalue())["campaign"])
    assert unowned.study.owner is None and unowned.study not in (mine, theirs.study)


def test_names_are_unique_per_owner_and_the_admin_says_so():
    r1, r2 = researcher("r1"), researcher("r2")
    r1.user_permissions.add(*Permission.objects.filter(codename__in=("add_study", "view_study", "change_study")))
    Study.objects.create(name=STUDY, slug="s-1", owner=r1)
    Study.objects.create(name=STUDY, slug="s-2", owner=r2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.create(name=STUDY, slug="s-3", owner=r1)
    client = Client()
    client.force_login(r1)
    response = client.post("/admin/annotation/study/add/", {"name": STUDY, "slug": "s-4"})
    assert response.status_code == 200 and "already has a study named" in response.content.decode()
    response = client.post("/admin/annotation/study/add/", {"name": "Another", "slug": "s-5"})
    assert response.status_code == 302 and Study.objects.get(slug="s-5").owner == r1


def _migration():
    return importlib.import_module("annotation.migrations.0015_study_owner_scoped_names")


def test_the_migration_splits_studies_that_mix_owners():
    """Rows as the defect left them: one study of r1 holding campaigns of r1, r2 (not shared), r3 (shared with
    directly), r4 (through a group) and none; an ownerless study holding an ownerless and an r2 campaign."""
    team = Group.objects.create(name="team")
    r1, r2, r3, r4 = researcher("r1"), researcher("r2"), researcher("r3"), researcher("r4", team)
    mixed = Study.objects.create(name="Mixed", slug="mixed", owner=r1)
    mixed.shared_with.add(r3)
    mixed.shared_with_groups.add(team)
    legacy = Study.objects.create(name="Legacy", slug="legacy", owner=None)
    campaigns = {}
    for key, owner, study in [("r1", r1, mixed), ("r2", r2, mixed), ("r3", r3, mixed), ("r4", r4, mixed),
                              ("none", None, mixed), ("legacy-none", None, legacy), ("legacy-r2", r2, legacy)]:
        campaigns[key] = import_judgments(wmt_file(key, R1_PAIRS), fmt="wmt-da", name=key, owner=owner).campaign
        Campaign.objects.filter(pk=campaigns[key].pk).update(study=study)  # as a join by name alone did

    split = _migration().split_mixed_owner_studies(apps)

    assert set(split) == {mixed.pk, legacy.pk}
    after = {key: Campaign.objects.select_related("study").get(pk=c.pk).study for key, c in campaigns.items()}
    assert after["r1"] == after["r3"] == after["r4"] == mixed
    assert (after["r2"].name, after["r2"].owner, after["r2"].slug) == ("Mixed", r2, "mixed-2")
    assert (after["none"].name, after["none"].owner) == ("Mixed", None) and after["none"] != mixed
    assert after["legacy-none"] == legacy
    assert (after["legacy-r2"].name, after["legacy-r2"].owner) == ("Legacy", r2)
    assert _migration().split_mixed_owner_studies(apps) == {}  # nothing left to split


def test_a_campaign_outside_the_studys_sharing_is_not_pooled():
    """A campaign still in another owner's study (placed there before the migration, or its owner's share taken
    back) is judged alone, and the study's own campaigns are pooled without it."""
    r1, r2 = researcher("r1"), researcher("r2")
    mine = import_judgments(wmt_file("r1", R1_PAIRS), fmt="wmt-da", name="Mine", study=STUDY, owner=r1).campaign
    also_mine = import_judgments(wmt_file("r1b", R1_PAIRS), fmt="wmt-da", name="Also", study=STUDY,
                                 owner=r1).campaign
    mine.study.shared_with.add(r2)
    theirs = import_judgments(wmt_file("r2", R2_PAIRS), fmt="wmt-da", name="Theirs", study=STUDY, owner=r2).campaign
    assert theirs.study == mine.study
    assert [c.pk for c in scope_campaigns(mine, "study")] == [mine.pk, also_mine.pk, theirs.pk]
    mine.study.shared_with.remove(r2)
    assert [c.pk for c in scope_campaigns(mine, "study")] == [mine.pk, also_mine.pk]
    assert [c.pk for c in scope_campaigns(theirs, "study")] == [theirs.pk]


@pytest.mark.django_db(transaction=True)
def test_the_migrations_split_a_mixed_study_on_a_database_of_the_old_schema():
    """Django's migration executor: back to 0014 (names globally unique), one study of r1 holding an r2 campaign,
    forward again: r2's campaign is in an r2 study of the same name, and a second r1 study of that name is
    refused by the per-owner constraint 0016 adds."""
    before, after = [("annotation", "0014_hit_batch")], MigrationExecutor(connection).loader.graph.leaf_nodes()
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    old = executor.loader.project_state(before).apps
    OldUser, OldStudy, OldCampaign = (old.get_model(*m) for m in (("auth", "User"), ("annotation", "Study"),
                                                                  ("annotation", "Campaign")))
    r1, r2 = (OldUser.objects.create(username=name, is_staff=True) for name in ("r1", "r2"))
    study = OldStudy.objects.create(name=STUDY, slug="r1-study", owner_id=r1.pk)
    mine, theirs = (OldCampaign.objects.create(name=n, slug=n, protocol="adequacy", owner_id=u.pk, study_id=study.pk)
                    for n, u in (("mine", r1), ("theirs", r2)))
    executor = MigrationExecutor(connection)
    executor.migrate(after)
    moved = Campaign.objects.select_related("study__owner").get(pk=theirs.pk).study
    assert (moved.name, moved.owner.username, moved.slug) == (STUDY, "r2", "r1-study-2")
    assert Campaign.objects.get(pk=mine.pk).study_id == study.pk
    with pytest.raises(IntegrityError), transaction.atomic():
        Study.objects.create(name=STUDY, slug="again", owner_id=r1.pk)


def test_a_slug_names_the_importers_own_study_but_never_another_researchers():
    r1, r2 = researcher("r1"), researcher("r2")
    theirs = import_judgments(wmt_file("r1", R1_PAIRS), fmt="wmt-da", name="R1's", study=STUDY, owner=r1).campaign
    mine = import_judgments(wmt_file("r2", R2_PAIRS), fmt="wmt-da", name="Mine", study="WMT 24", owner=r2).campaign
    again = import_judgments(wmt_file("r2b", R2_PAIRS), fmt="wmt-da", name="Again", study=mine.study.slug,
                             owner=r2).campaign
    by_their_slug = import_judgments(wmt_file("r2c", R2_PAIRS), fmt="wmt-da", name="Not theirs",
                                     study=theirs.study.slug, owner=r2).campaign
    assert again.study == mine.study and mine.study.slug == "wmt-24"
    assert by_their_slug.study.owner == r2 and by_their_slug.study.name == theirs.study.slug
    assert list(theirs.study.campaigns.all()) == [theirs]


def study_choices(client, campaign) -> set[int]:
    """The studies offered on the admin's change page of `campaign`."""
    page = client.get(f"/admin/annotation/campaign/{campaign.pk}/change/").content.decode()
    select = re.search(r'<select name="study".*?</select>', page, re.S).group(0)
    return {int(pk) for pk in re.findall(r'<option value="(\d+)"', select)}


def test_the_admin_offers_only_studies_the_campaigns_owner_may_join():
    r1, r2 = researcher("r1"), researcher("r2")
    r2.user_permissions.add(*Permission.objects.filter(codename__in=("view_campaign", "change_campaign")))
    root = User.objects.create_superuser("root", password="pw")
    r1_study = import_judgments(wmt_file("r1", R1_PAIRS), fmt="wmt-da", name="R1's", study=STUDY,
                                owner=r1).campaign.study
    theirs = import_judgments(wmt_file("r2", R2_PAIRS), fmt="wmt-da", name="R2's", owner=r2).campaign
    r2_study = import_judgments(wmt_file("r2b", R2_PAIRS), fmt="wmt-da", name="R2's other", study="Own",
                                owner=r2).campaign.study
    for user in (r2, root):
        client = Client()
        client.force_login(user)
        assert study_choices(client, theirs) == {r2_study.pk}
    r1_study.shared_with.add(r2)
    assert study_choices(client, theirs) == {r2_study.pk, r1_study.pk}

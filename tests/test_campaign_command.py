"""`manage.py campaign publish|pause|close|list|export`, run as from a shell (ManagementUtility: exit status,
stdout, stderr). A command closes the database connection as it ends, so these tests commit."""
import csv
import io
import json

import pytest
from django.core.management import ManagementUtility
from django.test import Client

from annotation.models import Campaign, Judgment

from .conftest import as_bytes, campaign_lines, start

pytestmark = pytest.mark.django_db(transaction=True)


def manage(capsys, *argv: str) -> tuple[int, str, str]:
    """Run `manage.py argv…`; its exit status, stdout and stderr."""
    capsys.readouterr()
    try:
        ManagementUtility(["manage.py", *argv]).execute()
        code = 0
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def draft(tmp_path, capsys) -> Campaign:
    """A draft DA campaign of 20-item HITs, imported by the command line."""
    path = tmp_path / "news.jsonl"
    path.write_bytes(b"".join(as_bytes(campaign_lines(20))))
    code, out, err = manage(capsys, "import_campaign", str(path), "--name", "News", "--protocol", "adequacy",
                            "--hit-size", "20", "--seed", "3", "--no-publish")
    assert code == 0, err
    return Campaign.objects.get(slug=json.loads(out.splitlines()[-1])["campaign"])


def judge(client: Client, token: str, n: int) -> None:
    for _ in range(n):
        item = client.get(f"/api/hit/{token}/").json()["item"]
        assert client.post(f"/api/hit/{token}/", {"item": item["id"], "score": 60},
                           content_type="application/json").status_code == 201


def test_a_study_scripted_end_to_end(draft, capsys):
    code, out, _ = manage(capsys, "campaign", "list", "--json")
    assert code == 0
    listed = {row["slug"]: row for row in json.loads(out)}
    assert listed[draft.slug]["status"] == "draft" and listed[draft.slug]["hits_total"] == draft.hits.count()
    assert (listed[draft.slug]["places_done"], listed[draft.slug]["places_total"]) == (
        0, draft.hits.count() * draft.redundancy)
    client = Client()
    assert client.get(f"/c/{draft.slug}/start/", {"worker_id": "w1"}).status_code != 302  # a draft serves nobody

    assert manage(capsys, "campaign", "publish", draft.slug)[:2] == (0, f'{{"campaign": "{draft.slug}", '
                                                                        '"status": "active"}\n')
    token = start(client, draft, "w1")
    judge(client, token, 3)

    code, out, _ = manage(capsys, "campaign", "list")
    header, *rows = out.splitlines()
    assert header.split() == ["slug", "protocol", "status", "hits_total", "hits_done", "places_done", "places_total",
                              "judgments", "name"]
    places = draft.hits.count() * draft.redundancy  # as the admin's campaign list counts them
    assert rows[0].split()[:8] == [draft.slug, "adequacy", "active", str(draft.hits.count()), "0", "0", str(places),
                                   "3"]

    code, out, err = manage(capsys, "campaign", "export", draft.slug)
    assert code == 0, err
    exported = list(csv.DictReader(io.StringIO(out)))
    assert [(r["worker"], r["position"], r["score"]) for r in exported] == [("w1", str(p), "60.0") for p in (1, 2, 3)]
    code, out, _ = manage(capsys, "campaign", "export", draft.slug, "--format", "json")
    assert [row["position"] for row in json.loads(out)] == [1, 2, 3]

    assert manage(capsys, "campaign", "pause", draft.slug)[0] == 0
    assert client.get(f"/api/hit/{token}/").status_code == 423
    assert manage(capsys, "campaign", "close", draft.slug)[0] == 0
    assert client.get(f"/api/hit/{token}/").status_code == 410
    draft.refresh_from_db()
    assert draft.status == Campaign.Status.CLOSED and Judgment.objects.count() == 3


def test_export_to_a_file_is_the_same_as_to_stdout(draft, capsys, tmp_path):
    manage(capsys, "campaign", "publish", draft.slug)
    client = Client()
    judge(client, start(client, draft, "w2"), 2)
    _, printed, _ = manage(capsys, "campaign", "export", draft.slug)
    target = tmp_path / "out.csv"
    assert manage(capsys, "campaign", "export", draft.slug, "-o", str(target)) == (0, "", "")
    assert target.read_bytes().decode() == printed and printed.count("\r\n") == 3  # CSV lines, as the API's


@pytest.mark.parametrize("argv", [("publish",), ("pause",), ("close",), ("export",), ("export", "--format", "json")])
def test_an_unknown_slug_exits_1_with_one_line_and_changes_nothing(draft, capsys, argv):
    code, out, err = manage(capsys, "campaign", argv[0], "no-such-study", *argv[1:])
    assert (code, out) == (1, "")
    assert err == "CommandError: no campaign 'no-such-study' (manage.py campaign list shows them)\n"
    draft.refresh_from_db()
    assert draft.status == Campaign.Status.DRAFT


def test_refusals_name_the_reason(draft, capsys):
    code, out, err = manage(capsys, "campaign", "export", draft.slug, "--format", "mqm-tsv")
    assert code == 1 and out == "" and err.count("\n") == 1 and "format mqm-tsv writes campaigns of protocol" in err
    Campaign.objects.filter(pk=draft.pk).update(analysis_only=True, status=Campaign.Status.CLOSED)
    code, out, err = manage(capsys, "campaign", "publish", draft.slug)
    assert (code, out) == (1, "") and err == f"CommandError: {draft.slug} holds imported judgments only; its status " \
                                             "stays as it is\n"
    draft.refresh_from_db()
    assert draft.status == Campaign.Status.CLOSED
    code, _, err = manage(capsys, "campaign", "archive", draft.slug)
    assert code == 2 and "invalid choice: 'archive'" in err

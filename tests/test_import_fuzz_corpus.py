"""Every import format gets the same hostile files (tests/import_corpus.py): each is refused whole, with the line
and a reason (the file as a whole is line 0), and nothing is stored, through every front end: the Python
services (a CampaignFileError, a ValueError), the API in the request (400, never a 500) and in a background job
(failed, with the problems), and the management commands (exit status 1, one line on stderr, no traceback).
Judgment formats are taken from the registry, so a new format without a corpus fails here."""
import io
import re

import pytest
from django.core.management import ManagementUtility

from annotation.models import (
    Annotator,
    Assignment,
    Campaign,
    Document,
    Hit,
    HitItem,
    Judgment,
    Segment,
    Study,
    System,
    SystemOutput,
)
from annotation.services.campaign_import import CampaignFileError, import_campaign
from annotation.services.judgment_import import JUDGMENT_FORMATS, import_judgments
from annotation.tasks import run_import

from .import_corpus import JUDGMENT_SPECS, SPECS, Case, Spec, cases

MODELS = (Campaign, Study, Document, Segment, System, SystemOutput, Hit, HitItem, Assignment, Judgment, Annotator)
ids = [spec.id for spec in SPECS]


def stored() -> dict[str, int]:
    return {model.__name__: model.objects.count() for model in MODELS}


def problems_with(case: Case, errors: list[tuple[int, str]]) -> str | None:
    """What is wrong with a refusal's (line, reason) list for `case`; None when it is as it should be."""
    if not errors:
        return "refused without a reason"
    lines = {line for line, _ in errors}
    if case.line is not None and (lines != {case.line} if case.only else min(lines) != case.line):
        return f"expected line {case.line}, got {sorted(errors)[:3]}"
    if case.says and not any(case.says in reason for _, reason in errors):
        return f"no reason says {case.says!r}: {errors[:3]}"
    if any(not isinstance(reason, str) or not reason.strip() or "\n" in reason or len(reason) > 1000
           for _, reason in errors):
        return f"a reason is empty, spans lines or quotes a whole field: {str(errors)[:300]}"
    return None


def import_through_service(spec: Spec, data: bytes, name: str = "Fuzz"):
    handle = io.BytesIO(data)
    if spec.fmt is None:
        return import_campaign(handle, name=name, protocol=spec.protocol, **spec.service)
    return import_judgments(handle, fmt=spec.fmt, name=name, **spec.service)


def run_everywhere(spec: Spec, attempt, every_field: bool = True) -> None:
    """`attempt(case)` -> a problem or None, for every hostile case (`every_field`: see `cases`); checks that
    nothing was stored; fails listing every case that went wrong."""
    failures = []
    for case in cases(spec, every_field):
        before = stored()
        try:
            problem = attempt(case)
        except Exception as exc:  # noqa: BLE001  (a crash is what this test looks for: report it with its case)
            problem = f"raised {type(exc).__name__}: {str(exc)[:200]}"
        if stored() != before:
            problem = (problem or "") + f" stored something: {before} -> {stored()}"
        if problem:
            failures.append(f"{case.id}: {problem}")
    assert not failures, f"{spec.id}:\n" + "\n".join(failures)


def test_every_registered_format_has_a_corpus():
    assert set(JUDGMENT_SPECS) == set(JUDGMENT_FORMATS)
    assert {spec.fmt for spec in SPECS if spec.fmt} == set(JUDGMENT_FORMATS)


@pytest.mark.django_db
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_the_valid_file_imports_with_or_without_a_byte_order_mark(spec):
    """The corpus's files differ from a valid one only by what each case changes."""
    good = spec.render({})
    import_through_service(spec, good, "Good")
    import_through_service(spec, b"\xef\xbb\xbf" + good, "Good with BOM")
    assert Campaign.objects.count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_the_service_refuses_every_hostile_file(spec):
    def attempt(case):
        try:
            import_through_service(spec, case.data)
        except CampaignFileError as exc:
            assert isinstance(exc, ValueError)
            return problems_with(case, exc.errors)
        return "imported"
    run_everywhere(spec, attempt)


def upload(data: bytes):
    handle = io.BytesIO(data)
    handle.name = "hostile.txt"
    return handle


def api_errors(api, spec: Spec, data: bytes) -> list[tuple[int, str]] | str:
    """The (line, reason) list the API answers for a file, in the request (400) or from its background job."""
    if spec.fmt is None:
        url, fields = "/api/campaigns/", {"protocol": spec.protocol}
    else:
        url, fields = "/api/campaigns/import-judgments/", {"format": spec.fmt, **spec.form}
    response = api.post(url, {"file": upload(data), "name": "Fuzz", **fields}, format="multipart")
    if response.status_code == 400:
        body = response.json()
        if "errors" not in body:  # the form's own checks (DRF: "The submitted file is empty."): the whole file
            return [(0, str(body))]
        return [(e["line"], e["reason"]) for e in body["errors"]]
    if response.status_code != 202:
        return f"answered {response.status_code}: {response.content[:200]!r}"
    # The job is queued once the request's transaction commits, which this test's never does: the task a worker
    # would run is run here, then the job's status is read as a client would.
    run_import.apply(args=[response.json()["job"]]).get()
    status = api.get(response.json()["status_url"]).json()
    if status["status"] != "failed":
        return f"the job ended {status['status']}: {status['stage']}"
    return [(e["line"], e["reason"]) for e in status["errors"]]


def through_api(api, spec):
    def attempt(case):
        errors = api_errors(api, spec, case.data)
        return errors if isinstance(errors, str) else problems_with(case, errors)
    return attempt


@pytest.mark.django_db
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_the_api_refuses_every_hostile_file(spec, api, settings):
    """In the request (400); the 2 MB field too, with the threshold of background imports raised above it."""
    settings.IMPORT_INLINE_MAX_BYTES = 8 * 1024 * 1024
    run_everywhere(spec, through_api(api, spec), every_field=False)


@pytest.mark.django_db
@pytest.mark.parametrize("spec", SPECS, ids=ids)
def test_a_background_job_refuses_every_hostile_file(spec, api, settings, tmp_path):
    """Every file above the threshold (0 here) is imported by the job's task; a refused one fails with its lines."""
    settings.IMPORT_UPLOAD_DIR = str(tmp_path)
    settings.IMPORT_INLINE_MAX_BYTES = 0
    run_everywhere(spec, through_api(api, spec), every_field=False)


def through_command(spec: Spec, path, capsys):
    if spec.fmt is None:
        command = ["import_campaign", str(path), "--protocol", spec.protocol]
    else:
        command = ["import_judgments", str(path), "--format", spec.fmt, *spec.flags]

    def attempt(case):
        path.write_bytes(case.data)
        capsys.readouterr()
        try:
            ManagementUtility(["manage.py", *command, "--name", "Fuzz"]).execute()
            code = 0
        except SystemExit as exc:
            code = exc.code
        out, err = capsys.readouterr()
        if code != 1 or out or err.count("\n") != 1 or not err.startswith("CommandError: refused "):
            return f"exit {code}, stdout {out[:100]!r}, stderr {err[:300]!r}"
        lines = [int(n) for n in re.findall(r"line (\d+):", err)]
        if case.line not in (None, 0) and (set(lines) != {case.line} if case.only else min(lines) != case.line):
            return f"expected line {case.line} in {err[:300]!r}"
        return None
    return attempt


@pytest.mark.django_db(transaction=True)
def test_the_commands_refuse_every_hostile_file(tmp_path, capsys):
    """As from a shell: `manage.py import_campaign|import_judgments FILE …` exits with 1 and one line on stderr.
    A command closes the database connection as it ends, so this test commits; it goes through every spec in
    one test, so the database is emptied once, not once per format."""
    failures = []
    for spec in SPECS:
        try:
            run_everywhere(spec, through_command(spec, tmp_path / "hostile", capsys), every_field=False)
        except AssertionError as exc:
            failures.append(str(exc))
    assert not failures, "\n".join(failures)

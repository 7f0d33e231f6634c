"""Large imports in the background (issue "Hardening" 7: a 50 MB file ran past gunicorn's timeout).

A file above `IMPORT_INLINE_MAX_BYTES` is saved under `IMPORT_UPLOAD_DIR` (shared by the web and worker
processes), an `ImportJob` row records it with the validated options, and the Celery task `run_import`
("annotation.run_import", found by the worker in annotation/tasks.py) imports it while the job tells its stage and
the lines read; the API answers 202 with the job's status URL and the admin shows the job's page. Without a broker
(tasks in-process) the job runs in a thread of the web process, so the request still returns at once.

A job runs once: a worker claims it by moving it from queued to running in one UPDATE, holds a short
lease while it runs (config/jobs.py's `Lease`, renewed every second), and records its outcome in the import's own
transaction, so a task delivered twice finds the job busy (and retries after the lease), taken or finished.
A worker that dies mid-import leaves no rows behind (the transaction is lost with it) and its lease lapses,
so the redelivered task (acks_late) takes the job over.
"""
from __future__ import annotations

import logging
import tempfile
import threading
import time
import uuid
from contextlib import nullcontext
from pathlib import Path

from celery import shared_task
from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from config import jobs

from ..models import ImportJob
from ..protocols import get_protocol
from ..protocols.options import OptionError
from .campaign_import import MAX_KEPT_ERRORS, CampaignFileError, import_campaign
from .judgment_import import import_judgments, imported_answer

log = logging.getLogger(__name__)

DEFAULT_INLINE_MAX_BYTES = 2 * 1024 * 1024
#: Files left in the upload folder longer than this (a job lost with its broker) are deleted.
UPLOAD_MAX_AGE = 7 * 24 * 3600
#: How long a running job's lease lasts without being renewed, and how often it is renewed.
LEASE_SECONDS = 30.0
BEAT_SECONDS = 1.0
#: A reason longer than this is cut when stored.
MAX_REASON = 500

Status = ImportJob.Status


def inline_max_bytes() -> int:
    return int(getattr(settings, "IMPORT_INLINE_MAX_BYTES", DEFAULT_INLINE_MAX_BYTES))


def is_large(size: int | None) -> bool:
    """Whether a file of `size` bytes is imported by a background job rather than in the request."""
    return size is not None and size > inline_max_bytes()


def upload_dir() -> Path:
    configured = getattr(settings, "IMPORT_UPLOAD_DIR", None)
    return Path(configured) if configured else Path(tempfile.gettempdir()) / "mteval-imports"


def save_upload(source) -> Path:
    """Copy an upload (a Django UploadedFile, or any binary file object) into the upload folder."""
    folder = upload_dir()
    folder.mkdir(parents=True, exist_ok=True)
    _sweep(folder)
    path = folder / f"{uuid.uuid4().hex}.upload"
    if hasattr(source, "seek"):
        source.seek(0)
    chunks = source.chunks() if hasattr(source, "chunks") else iter(lambda: source.read(1 << 20), b"")
    with path.open("xb") as out:
        for chunk in chunks:
            out.write(chunk)
    return path


def _sweep(folder: Path) -> None:
    cutoff = time.time() - UPLOAD_MAX_AGE
    for path in folder.glob("*.upload"):
        try:
            if path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:
            pass


def start(kind: str, source, arguments: dict, user=None) -> ImportJob:
    """Save the file, record the job and queue it (once the row is committed); returns the job.

    `arguments` (JSON): for "campaign" {"name", "protocol", "options": the raw option values as submitted,
    "defaults": the front-end's option defaults}; for "judgments" {"name", "format", "options": the
    format's options and study}."""
    if kind not in RUNNERS:
        raise ValueError(f"unknown import kind {kind!r}")
    path = save_upload(source)
    try:
        job = ImportJob.objects.create(kind=kind, upload=str(path), arguments=arguments,
                                       created_by=user if getattr(user, "is_authenticated", False) else None,
                                       stage="waiting for a worker")
    except BaseException:
        path.unlink(missing_ok=True)
        raise
    transaction.on_commit(lambda: enqueue(job.pk))
    return job


def enqueue(job_id) -> None:
    """Hand the job to a Celery worker, or to a thread of this process when tasks run in-process."""
    try:
        jobs.dispatch(run_import, (str(job_id),))
    except Exception:
        log.exception("could not queue import job %s", job_id)
        _finish(job_id, Status.FAILED, stage="could not be queued (is the broker running?)",
                errors=[[0, "the import could not be queued; try again later"]])


@shared_task(bind=True, name="annotation.run_import", max_retries=None, acks_late=True, reject_on_worker_lost=True)
def run_import(self, job_id: str) -> dict:
    """Run import job `job_id` once. While another worker holds the job (a task delivered twice), try again
    after the lease: by then that worker has finished it, or died and left it to this one."""
    outcome = run(job_id)
    if outcome["status"] == "busy" and not self.request.is_eager:
        raise self.retry(countdown=LEASE_SECONDS)
    return outcome


# Running a job -----------------------------------------------------------------------------------------


class _Lease(jobs.Lease):
    """A running job's lease, renewed every second while its worker lives (see the module's doc)."""

    def __init__(self, job_id):
        super().__init__(f"import-job:{job_id}:lease", LEASE_SECONDS, BEAT_SECONDS)


class JobProgress:
    """The `progress(stage, lines_read=None)` callback of a running job: it keeps the latest values and a
    thread writes them to the job's row every second through a connection of its own, so they show while
    the import's transaction is still open (on SQLite, whose writers exclude each other, the values are
    written only between transactions, from the importing thread)."""

    def __init__(self, job_id):
        self.job_id = job_id
        self.stage, self.lines = "", 0
        self._written = (None, None)
        self._last_write = 0.0
        self._own_thread_writes = connection.vendor != "sqlite"
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._beat, name=f"import-progress-{job_id}", daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()

    def __call__(self, stage: str, lines_read: int | None = None) -> None:
        with self._lock:
            self.stage = stage
            if lines_read is not None:
                self.lines = lines_read
        if not self._own_thread_writes and not connection.in_atomic_block \
                and time.monotonic() - self._last_write >= BEAT_SECONDS:
            self._write()

    def _write(self) -> None:
        with self._lock:
            values = (self.stage[:200], self.lines)
        if values == self._written:
            return
        ImportJob.objects.filter(pk=self.job_id, status=Status.RUNNING).update(stage=values[0],
                                                                               lines_read=values[1])
        self._written, self._last_write = values, time.monotonic()

    def _beat(self) -> None:
        if not self._own_thread_writes:
            return
        try:
            while not self._stop.wait(BEAT_SECONDS):
                try:
                    self._write()
                except Exception:  # the database is restarting, say: the next beat tries again
                    log.warning("could not record the progress of import job %s", self.job_id)
        finally:
            connection.close()


def run(job_id) -> dict:
    """Run one import job to its end (done or failed); what happened, for the task's result: status "busy"
    when another worker holds the job's lease (the task retries later), "finished" when the job was already
    taken and ended."""
    lease = _Lease(job_id)
    taken = lease.acquire()
    if taken is False:
        return {"job": str(job_id), "status": "busy"}
    # Queued → running in one UPDATE; a running job only with its lease lapsed (its worker died, and this is
    # the redelivered task). Without the cache, queued jobs only.
    claimable = [Status.QUEUED, Status.RUNNING] if taken else [Status.QUEUED]
    if not ImportJob.objects.filter(pk=job_id, status__in=claimable).update(status=Status.RUNNING,
                                                                            stage="starting", lines_read=0):
        lease.release()
        return {"job": str(job_id), "status": "finished"}
    job = ImportJob.objects.select_related("created_by").get(pk=job_id)
    try:
        with JobProgress(job.pk) as progress:
            try:
                # The outcome is stored in the import's transaction (both or neither), except on SQLite, whose
                # one writer at a time would be held for the whole import; there jobs run in-process, where
                # nothing delivers a task twice.
                with transaction.atomic() if connection.vendor != "sqlite" else nullcontext():
                    result = RUNNERS[job.kind](job, progress)
                    _finish(job.pk, Status.DONE, stage="done", result=result, lines=progress.lines)
            except CampaignFileError as exc:
                _refused(job.pk, exc, progress.lines)
            except Exception:
                log.exception("import job %s failed", job.pk)
                _finish(job.pk, Status.FAILED, stage="failed: an unexpected error (see the server's log)",
                        errors=[[0, "the import failed on the server; nothing was imported"]], lines=progress.lines)
                raise
    finally:
        lease.release()
        Path(job.upload).unlink(missing_ok=True)
    return {"job": str(job.pk), "status": ImportJob.objects.values_list("status", flat=True).get(pk=job.pk)}


def _refused(job_id, exc: CampaignFileError, lines: int) -> None:
    errors = [[line, _clean(reason)] for line, reason in exc.errors[:MAX_KEPT_ERRORS]]
    total = exc.total
    stage = (f"refused: {total} problem{'s' * (total != 1)}"
             + (f" (the first {len(errors)} listed)" if total > len(errors) else "") + "; nothing was imported")
    _finish(job_id, Status.FAILED, stage=stage, errors=errors, lines=lines,
            result={"suggestions": exc.suggestions} if exc.suggestions else {})


def _clean(reason: str) -> str:
    """A reason as JSON can store it (no NUL, no lone surrogate), cut to MAX_REASON characters."""
    reason = reason[:MAX_REASON].replace("\x00", "\\x00")
    return reason.encode("utf-8", "backslashreplace").decode("utf-8")


def _finish(job_id, status: str, *, stage: str, result: dict | None = None, errors: list | None = None,
            lines: int | None = None) -> None:
    values = {"status": status, "stage": stage[:200], "result": result or {}, "errors": errors or [],
              "finished_at": timezone.now()}
    if lines is not None:
        values["lines_read"] = lines
    ImportJob.objects.filter(pk=job_id).update(**values)


def _counted(handle, progress):
    """The lines of a file, telling `progress` how many were read (for parsers that take any iterable)."""
    from ..building.text_lines import split_binary

    number = 0
    for number, (_, _, line) in enumerate(split_binary(handle.read), start=1):
        if number % 2000 == 0:
            progress("reading the file", number)
        yield line
    progress("reading the file", number)


def _import_campaign(job: ImportJob, progress) -> dict:
    arguments = job.arguments
    protocol = get_protocol(arguments["protocol"])
    try:
        parsed = protocol.parse_options(arguments.get("options") or {}, defaults=arguments.get("defaults"))
    except OptionError as exc:
        raise CampaignFileError([(0, f"{name}: {reason}") for name, reason in exc.errors]) from None
    with open(job.upload, "rb") as handle:
        result = import_campaign(handle, name=arguments["name"], protocol=protocol.name, parsed=parsed,
                                 owner=job.created_by, progress=progress)
    return {"campaign": result.campaign.slug, "hits": result.hits,
            **({"warnings": result.warnings} if result.warnings else {})}


def _import_judgments(job: ImportJob, progress) -> dict:
    arguments = job.arguments
    with open(job.upload, "rb") as handle:
        result = import_judgments(_counted(handle, progress), fmt=arguments["format"], name=arguments["name"],
                                  owner=job.created_by, **(arguments.get("options") or {}))
    return imported_answer(result)


RUNNERS = {"campaign": _import_campaign, "judgments": _import_judgments}


def status_of(job: ImportJob) -> dict:
    """The job as the API answers it (docs/api.md §4)."""
    answer = {"job": str(job.pk), "kind": job.kind, "status": job.status, "stage": job.stage,
              "lines_read": job.lines_read, "created_at": job.created_at, "finished_at": job.finished_at,
              "result": None, "errors": []}
    if job.status == Status.DONE:
        answer["result"] = job.result
    elif job.status == Status.FAILED:
        answer["errors"] = [{"line": line, "reason": reason} for line, reason in job.errors]
        if job.result.get("suggestions"):
            answer["suggestions"] = job.result["suggestions"]
    return answer

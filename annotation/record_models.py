"""Records the annotation app keeps beside a campaign's content (imported into annotation.models): background
import jobs, the keys a worker holds in a staged campaign, and tutorial tries. Foreign keys name their models by
string, so this module does not import annotation.models (which imports it)."""
import uuid

from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    """A campaign or judgment file imported in the background, with its progress and outcome."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    kind = models.CharField(max_length=16, help_text="campaign or judgments")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    stage = models.CharField(max_length=200, blank=True, help_text="What the import is doing now.")
    lines_read = models.PositiveIntegerField(default=0)
    upload = models.CharField(max_length=500, help_text="Where the uploaded file waits for the worker.")
    arguments = models.JSONField(default=dict, help_text="The validated import options.")
    result = models.JSONField(default=dict, blank=True, help_text="What the import answered on success.")
    errors = models.JSONField(default=list, blank=True, help_text="(line, reason) pairs when refused.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return f"{self.kind} import {self.id} ({self.status})"


class StageExposure(models.Model):
    """A key a worker holds in a campaign for good, taken with the HIT whose exposure lists it under "exclusive"
    (e.g. "article:<document pk>": reading comprehension's answer stage shows each judge one translation of an
    article). The unique constraint is what keeps a worker from a second HIT with the same key, even when two of
    their requests race; an abandoned HIT keeps its keys (the worker has seen it)."""

    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="+")
    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=100)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "annotator", "key"],
                                               name="stage_exposure_unique_key")]

    def __str__(self):
        return f"{self.annotator_id} holds {self.key}"


class TutorialTry(models.Model):
    """One checked answer to a tutorial item with an expected answer (annotation/building/training.py): every try
    of a loud tutorial, and each silent check. `final` marks the try the judge moved on with (right, or the last
    allowed); the live reliability gate counts the failed final ones (evaluation/services/training_gate.py)."""

    campaign = models.ForeignKey("annotation.Campaign", on_delete=models.CASCADE, related_name="tutorial_tries")
    assignment = models.ForeignKey("annotation.Assignment", on_delete=models.CASCADE, related_name="tutorial_tries")
    annotator = models.ForeignKey("annotation.Annotator", on_delete=models.CASCADE, related_name="tutorial_tries")
    item = models.ForeignKey("annotation.HitItem", on_delete=models.CASCADE, related_name="tutorial_tries")
    attempt = models.PositiveSmallIntegerField(help_text="1 for the first try.")
    mode = models.CharField(max_length=8, help_text="loud or silent.")
    passed = models.BooleanField()
    final = models.BooleanField(help_text="The judge moved on with this try (right, or the last allowed).")
    answer = models.JSONField(help_text="The answer as checked: spans and score.")
    missed = models.JSONField(default=list, blank=True, help_text="The expected spans missed, and why.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "id"]
        constraints = [models.UniqueConstraint(fields=["assignment", "item", "attempt"], name="tutorial_try_unique")]
        indexes = [models.Index(fields=["campaign", "annotator"], name="tutorial_try_worker_idx")]

    def __str__(self):
        return f"try {self.attempt} of {self.annotator_id} on item {self.item_id}"

"""What the Prolific integration keeps: the researcher's encrypted token, one study per campaign with its settings,
the submissions Prolific reports with the researcher's decision, every intended action (at most once each) and a
log row per HTTP call (docs/api.md "Prolific")."""
from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from annotation.models import Assignment, Campaign

from . import crypto

DEVICES = ("desktop", "tablet", "mobile")


class ProlificAccount(models.Model):
    """A researcher's Prolific API token, encrypted (crypto.py); never shown again once set."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="prolific_account")
    token_encrypted = models.TextField(blank=True, editable=False)
    exclusion_group = models.CharField(
        max_length=64, blank=True, help_text="The Prolific participant group that gated or unreliable workers join; "
                                             "every study created later excludes it.")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self):
        return f"Prolific account of {self.user}"

    def set_token(self, token: str) -> None:
        self.token_encrypted = crypto.encrypt(token) if token else ""

    def token(self) -> str | None:
        return crypto.decrypt(self.token_encrypted)

    @property
    def has_token(self) -> bool:
        return bool(self.token_encrypted)


class ProlificStudy(models.Model):
    """A campaign's study on Prolific: the settings it is created with, and where it stands."""

    class Status(models.TextChoices):
        NEW = "new", "Not created yet"
        DRAFT = "draft", "Draft on Prolific"
        PUBLISHED = "published", "Published"

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="prolific_study")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                              help_text="Whose API token the calls use.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.NEW)
    prolific_id = models.CharField(max_length=64, blank=True, help_text="The study's id on Prolific.")
    name = models.CharField(max_length=200, help_text="The study's public title.")
    description = models.TextField(help_text="Shown to participants on Prolific.")
    entry_url = models.URLField(max_length=500, blank=True, editable=False,
                                help_text="The crowd link, with Prolific's parameters.")
    devices = models.JSONField(default=list, help_text=f"Devices allowed, of {', '.join(DEVICES)}.")
    estimated_minutes = models.PositiveIntegerField(
        null=True, blank=True, help_text="Minutes per HIT before any HIT is finished; blank: the campaign's HIT size "
                                         "times a per-item estimate. Once HITs are finished, their median is used.")
    bonus_share = models.DecimalField(
        max_digits=4, decimal_places=2, default=Decimal("0"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("1"))],
        help_text="Bonus for reliable workers, as a share of the payment per HIT for each HIT they finished.")
    reward = models.PositiveIntegerField(null=True, blank=True, editable=False,
                                         help_text="Reward per place in pence/cents, as sent.")
    places = models.PositiveIntegerField(null=True, blank=True, editable=False)
    codes = models.JSONField(default=dict, blank=True, editable=False,
                             help_text="Completion code per outcome: completed, gated, timed_out.")
    problem = models.TextField(blank=True, editable=False, help_text="Why the last step was refused or failed.")
    created_at = models.DateTimeField(auto_now_add=True)
    published_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        verbose_name = "Prolific study"
        verbose_name_plural = "Prolific studies"

    def __str__(self):
        return f"Prolific study of {self.campaign}"


class ProlificSubmission(models.Model):
    """A submission as Prolific last reported it, with the researcher's decision (stored before any call)."""

    class Decision(models.TextChoices):
        NONE = "", "Undecided"
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"

    study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="submissions")
    submission_id = models.CharField(max_length=64, unique=True)
    participant_id = models.CharField(max_length=64)
    status = models.CharField(max_length=24)
    study_code = models.CharField(max_length=64, blank=True)
    started_at = models.CharField(max_length=40, blank=True)
    assignment = models.ForeignKey(Assignment, on_delete=models.SET_NULL, null=True, blank=True, related_name="+")
    decision = models.CharField(max_length=8, choices=Decision.choices, blank=True, default="")
    rejection_category = models.CharField(max_length=32, blank=True)
    rejection_message = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    decided_at = models.DateTimeField(null=True, blank=True)
    bonus = models.DecimalField(max_digits=8, decimal_places=2, null=True, blank=True,
                                help_text="The bonus paid, once paid.")
    place_freed = models.BooleanField(default=False, help_text="Its HIT's place was freed (returned, timed out).")

    class Meta:
        ordering = ["study", "participant_id"]

    def __str__(self):
        return self.submission_id


class ProlificAction(models.Model):
    """One intended action on Prolific, under a key that names it (e.g. "approve:<submission>"): a retry or a re-run
    finds it done and never repeats it."""

    class State(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    key = models.CharField(max_length=200, unique=True)
    study = models.ForeignKey(ProlificStudy, on_delete=models.CASCADE, related_name="actions")
    kind = models.CharField(max_length=32)
    request = models.JSONField(default=dict, blank=True)
    state = models.CharField(max_length=8, choices=State.choices, default=State.PENDING)
    result = models.JSONField(default=dict, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    done_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self):
        return self.key


class ProlificCall(models.Model):
    """One HTTP request to Prolific: every attempt of every call, retries included."""

    action = models.ForeignKey(ProlificAction, on_delete=models.SET_NULL, null=True, blank=True, related_name="calls")
    method = models.CharField(max_length=8)
    path = models.CharField(max_length=300)
    status = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Empty: no answer (timeout).")
    attempt = models.PositiveSmallIntegerField()
    seconds = models.FloatField()
    error = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self):
        return f"{self.method} {self.path} → {self.status or '—'}"

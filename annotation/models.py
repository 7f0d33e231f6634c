"""What a campaign is made of and what annotators leave behind.

Campaign -> Document -> Segment -> SystemOutput (one per System; these content models are in content_models.py);
Campaign -> Hit -> HitItem (what is shown at each position);
Annotator -> Assignment (one worker doing one HIT) -> Judgment (one per item).
The database enforces what must never happen: one judgment per assignment and item,
one assignment per worker and HIT, scores inside [0, 100].
"""
import secrets
import string
from urllib.parse import quote

from django.conf import settings
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q

from .content_models import Document, Segment, System, SystemOutput  # noqa: F401  (models of this app, defined there)
from .media_models import MediaItem  # noqa: F401  (a model of this app, defined there)
from .ownership import OwnedQuerySet
from .protocols import protocol_choices
from .protocols.common_options import COMPLETION_PLACEHOLDERS, completion_url_problem
from .record_models import ImportJob, StageExposure, TutorialTry  # noqa: F401  (models of this app, defined there)
from .studies import Study, StudyNameError  # noqa: F401  (a model of this app, defined there)

#: Where Mechanical Turk's `turkSubmitTo` may point (production and sandbox); a start link naming anything else
#: is not believed, so a completion URL never sends a worker's code to a host the researcher did not choose.
MTURK_SUBMIT_TO = ("https://www.mturk.com", "https://workersandbox.mturk.com")


def validate_completion_url(value: str) -> None:
    problem = completion_url_problem(value) if value else None
    if problem:
        raise ValidationError(f"The completion URL {problem}.")


def new_secret():
    return secrets.token_hex(32)


class Campaign(models.Model):
    """An evaluation campaign: its items, settings and HITs (docs/methods.md §1-§2, §10)."""

    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        ACTIVE = "active", "Active"
        PAUSED = "paused", "Paused"
        CLOSED = "closed", "Closed"

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=220, unique=True)
    protocol = models.CharField(max_length=32, choices=protocol_choices)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    analysis_only = models.BooleanField(
        default=False, help_text="Judgments imported from elsewhere; nothing is served to annotators."
    )
    source_language = models.CharField(max_length=16, blank=True)
    target_language = models.CharField(max_length=16, default="en")
    statement = models.TextField(blank=True, help_text="The Likert statement; the protocol's default if empty.")
    anchor_low = models.CharField(max_length=100, default="strongly disagree")
    anchor_high = models.CharField(max_length=100, default="strongly agree")
    instructions = models.TextField(blank=True, help_text="Shown to annotators before their first item (Markdown).")
    redundancy = models.PositiveSmallIntegerField(default=1, help_text="Distinct workers per HIT.")
    seed = models.BigIntegerField(default=0)
    hit_size = models.PositiveSmallIntegerField(default=100)
    qc_test = models.CharField(
        max_length=64, default="paired-t",
        help_text="The worker reliability test, by its name in evaluation's registry (no fixed choices: a new "
                  "test needs no migration).",
    )
    qc_threshold = models.FloatField(default=0.05)
    hit_timeout_minutes = models.PositiveIntegerField(default=60)
    completion_code = models.CharField(
        max_length=64, blank=True, help_text="One code for every worker (e.g. Prolific's); random per HIT if empty."
    )
    completion_url = models.CharField(
        max_length=500, blank=True, validators=[validate_completion_url],
        help_text="Where a crowd worker who finishes a HIT is sent with their code, e.g. "
                  "https://app.prolific.com/submissions/complete?cc={code} (docs/api.md §8); the code is only shown "
                  "if empty.",
    )
    payment_per_hit = models.DecimalField(max_digits=8, decimal_places=2, default=0)
    require_qualification = models.BooleanField(
        default=False, help_text="Ask crowd workers for their native language and country before their first HIT."
    )
    required_native_language = models.CharField(
        max_length=64, blank=True, help_text="Only workers who declare this native language may work: a BCP 47 "
                                             "code; en accepts en-GB, pt-BR accepts pt-BR only (docs/api.md §8.1)."
    )
    blocked_annotators = models.ManyToManyField("Annotator", blank=True, related_name="blocked_from")
    options = models.JSONField(default=dict, blank=True, help_text="Protocol-specific settings.")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                              related_name="owned_campaigns", help_text="Who imported it; sees and acts on it.")
    shared_with = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_campaigns",
                                         help_text="Researchers who may see and act on it too.")
    shared_with_groups = models.ManyToManyField(Group, blank=True, related_name="shared_campaigns",
                                                help_text="Groups whose researchers may see and act on it.")

    require_signed_entry = models.BooleanField(
        default=False, help_text="Crowd entry links must carry an HMAC of the worker id (signature=…).")
    entry_limits = models.CharField(
        max_length=8, default="crowd", choices=[("crowd", "crowd"), ("lab", "lab")],
        help_text="crowd: per-address caps and browser binding at entry; lab: none of them, for many workers "
                  "behind one network (docs/api.md §8.1).")
    entry_secret = models.CharField(max_length=64, default=new_secret, editable=False,
                                    help_text="The key of the entry links' HMAC.")
    study = models.ForeignKey(Study, on_delete=models.SET_NULL, null=True, blank=True, related_name="campaigns",
                              help_text="Workers' reliability is tested over all of the study's campaigns.")
    in_house_annotators = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="annotation_campaigns",
        help_text="Logged-in users who may annotate; every logged-in user if empty.",
    )
    stage_input = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="next_stages",
        help_text="A later stage of a multi-stage task: the stage whose accepted output its HITs are built from "
                  "(docs/methods.md §9). Empty for a campaign of one stage, or the first stage.")
    stage_name = models.CharField(max_length=32, blank=True, help_text="The stage's name (edit, verify, …).")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = OwnedQuerySet.as_manager()  # Campaign.objects.visible_to(user): annotation/ownership.py

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(condition=Q(redundancy__gte=1), name="campaign_redundancy_positive"),
            models.CheckConstraint(
                condition=Q(qc_threshold__gt=0, qc_threshold__lt=1), name="campaign_qc_threshold_range"
            ),
        ]

    def __str__(self):
        return self.name

    @property
    def protocol_spec(self):
        from .protocols import get_protocol

        return get_protocol(self.protocol)

    @property
    def effective_statement(self):
        return self.statement or self.protocol_spec.default_statement(self.target_language)

    @property
    def accepts_annotators(self):
        return self.status == self.Status.ACTIVE and not self.analysis_only

    def completion_link(self, code: str, entry: dict | None) -> str:
        """The completion URL of a worker who came in through the crowd link with `entry` (Assignment.entry) and
        finished with `code`; '' without a template, for in-house annotators, or when the template needs a value
        their start link did not carry (MTurk's assignmentId, say). Values are URL-encoded; {turk_submit_to}
        stands only for one of MTurk's own hosts."""
        template = self.completion_url
        if not template or not entry or not code or completion_url_problem(template):
            return ""
        values = {name: str(entry.get(name) or "") for name in COMPLETION_PLACEHOLDERS}
        values["code"] = code
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name}
        if any(not values[name] for name in used):
            return ""
        if "turk_submit_to" in used and values["turk_submit_to"] not in MTURK_SUBMIT_TO:
            return ""
        return template.format(**{name: value if name == "turk_submit_to" else quote(value, safe="")
                                  for name, value in values.items()})


class Hit(models.Model):
    """A fixed list of items; done by `campaign.redundancy` distinct workers (docs/methods.md §2)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="hits")
    number = models.PositiveIntegerField()
    size = models.PositiveSmallIntegerField()
    external_id = models.CharField(max_length=100, blank=True, help_text="The HIT's id where it was collected.")
    exposure = models.JSONField(default=dict, blank=True, help_text="What the HIT shows, for keeping workers apart.")
    batch = models.PositiveIntegerField(null=True, blank=True, help_text="Adaptive campaigns: the batch the HIT was "
                                        "built in, from 1 (docs/methods.md §12.2); empty otherwise.")
    held = models.PositiveIntegerField(
        default=0, db_default=0, editable=False,
        help_text="Assignments of this HIT that are active or completed, kept by database triggers on the "
                  "assignment table (migration 0020): the hand-out walks (campaign, held, number) to the first "
                  "free HIT instead of counting every assignment of the campaign.")

    class Meta:
        ordering = ["campaign", "number"]
        constraints = [models.UniqueConstraint(fields=["campaign", "number"], name="hit_unique_number")]
        indexes = [models.Index(fields=["campaign", "held", "number"], name="hit_free_places_idx")]

    def __str__(self):
        return f"HIT {self.number}"


class ItemType(models.TextChoices):
    SYSTEM = "system", "System output"
    BAD_REF = "bad_ref", "Bad reference"
    REPEAT = "repeat", "Repeat"
    REFERENCE = "reference", "Reference translation"
    SPAM = "spam", "Spam"
    GOLD = "gold", "Gold"
    TUTORIAL = "tutorial", "Tutorial"


class HitItem(models.Model):
    """One screen of a HIT. `text` holds degraded text; otherwise the shown text comes
    from `output` (or the segment's reference for reference items)."""

    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    set_index = models.PositiveSmallIntegerField()
    item_type = models.CharField(max_length=10, choices=ItemType.choices)
    segment = models.ForeignKey(Segment, on_delete=models.CASCADE, related_name="+", null=True)
    output = models.ForeignKey(SystemOutput, on_delete=models.CASCADE, related_name="+", null=True)
    text = models.TextField(blank=True)
    partner_position = models.PositiveSmallIntegerField(
        null=True, help_text="Position of the other member of this item's quality-control pair."
    )
    payload = models.JSONField(default=dict, blank=True, help_text="Protocol-specific content.")

    class Meta:
        ordering = ["hit", "position"]
        constraints = [models.UniqueConstraint(fields=["hit", "position"], name="item_unique_position")]

    def __str__(self):
        return f"{self.hit_id}#{self.position}"


class Annotator(models.Model):
    """A crowd worker (external id from the market) or an in-house user."""

    external_id = models.CharField(max_length=255, unique=True, null=True, blank=True)
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="annotator"
    )
    source = models.CharField(max_length=16, default="crowd", help_text="crowd, prolific, mturk or user.")
    native_language = models.CharField(max_length=64, blank=True)
    country = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(external_id__isnull=False) | Q(user__isnull=False), name="annotator_has_identity"
            ),
        ]

    def __str__(self):
        return self.external_id or f"user:{self.user_id}"

    @property
    def label(self):
        """The worker id shown to researchers: the external id, or the user name."""
        return self.external_id or (self.user.get_username() if self.user_id else "")


def new_token():
    return secrets.token_urlsafe(32)


class Assignment(models.Model):
    """One worker doing one HIT. `position` is the index of the next item to judge."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        COMPLETED = "completed", "Completed"
        ABANDONED = "abandoned", "Abandoned"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assignments")
    hit = models.ForeignKey(Hit, on_delete=models.CASCADE, related_name="assignments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="assignments")
    token = models.CharField(max_length=64, unique=True, default=new_token, editable=False)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)
    position = models.PositiveSmallIntegerField(default=0)
    last_item_id = models.BigIntegerField(null=True, help_text="The item judged last, to recognise a replay.")
    item_served_at = models.DateTimeField(null=True)
    started_at = models.DateTimeField(auto_now_add=True)
    last_activity_at = models.DateTimeField(auto_now_add=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=64, blank=True)
    entry_ip = models.GenericIPAddressField(null=True, blank=True, help_text="Where the worker came in from.")
    browser_key = models.CharField(max_length=64, blank=True, default="",
                                   help_text="The browser the HIT is bound to (a cookie set at crowd entry).")
    entry = models.JSONField(
        default=dict, blank=True,
        help_text="What the crowd market put into the start link the worker last came in by (worker_id; MTurk's "
                  "assignment_id, hit_id, turk_submit_to; Prolific's study_id, session_id), for the completion URL. "
                  "Empty for in-house annotators.",
    )

    class Meta:
        ordering = ["campaign", "hit", "started_at"]
        constraints = [models.UniqueConstraint(fields=["hit", "annotator"], name="assignment_one_per_worker_hit")]
        # entry_ip: the cap on open HITs per address counts an address's HITs at every crowd entry.
        # open_idx: the hand-out's idle places (active, last activity before the timeout) without a campaign scan.
        indexes = [models.Index(fields=["campaign", "annotator", "status"], name="assignment_worker_idx"),
                   models.Index(fields=["campaign", "entry_ip"], name="assignment_entry_ip_idx"),
                   models.Index(fields=["campaign", "last_activity_at"], name="assignment_open_idx",
                                condition=models.Q(status="active"))]

    def __str__(self):
        return f"{self.annotator} on {self.hit}"


class Judgment(models.Model):
    """One answer to one item. `seconds` is measured on the server, from serving to saving."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="judgments")
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(HitItem, on_delete=models.CASCADE, related_name="judgments")
    score = models.FloatField(null=True, blank=True)
    choice = models.CharField(max_length=8, blank=True)
    ranks = models.JSONField(null=True, blank=True)
    spans = models.JSONField(null=True, blank=True, help_text="Error spans: [{start, end, severity, category?}], "
                             "half-open code-point offsets into the candidate (docs/methods.md §11).")
    scores = models.JSONField(null=True, blank=True, help_text="One 0–100 score per candidate key, where a screen "
                              "shows several candidates (contrastive ESA); their spans carry the key.")
    answer = models.JSONField(null=True, blank=True, help_text="A stage's answer that is not a score: edits, yes/no "
                              "verdicts, questions, votes, answers, grades (docs/methods.md §9).")
    media = models.JSONField(null=True, blank=True, help_text="The judge's media actions on an item with video or "
                             "audio: {clips, actions, seconds} (annotation/building/media_actions.py, docs/api.md).")
    instruction = models.JSONField(null=True, blank=True, help_text="Did the translation follow the instructions "
                                   "(campaign option instruction_judgment): {<key>: {answer: yes|partly|no, note}}, "
                                   "key '' for a screen of one translation, else the candidate key.")
    seconds = models.FloatField(null=True, blank=True)
    served_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["campaign", "id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="judgment_one_per_item"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | Q(score__gte=0, score__lte=100), name="judgment_score_range"
            ),
        ]
        indexes = [models.Index(fields=["campaign", "annotator"], name="judgment_worker_idx"),
                   # a campaign's judgments up to an id (every results run reads them so; benchmarks/README.md)
                   models.Index(fields=["campaign", "id"], name="judgment_campaign_id_idx")]

    def __str__(self):
        return f"{self.annotator_id} on item {self.item_id}"

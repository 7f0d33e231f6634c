"""Result tables every family shares, written by the Celery tasks in one transaction per run.

`CampaignResults` is the header of one computation (when, how long, how many judgments);
`WorkerResult` holds each worker's quality control; `ResultTable` holds any other table as JSON
rows. The tables a family keeps of its own are in `evaluation/family_tables.py`, imported here
so that Django finds them without this module importing a family. Every table hangs off the
campaign and is replaced whole at each run, so readers see either the old results or the new ones, never a mix.
"""
from django.conf import settings
from django.db import models

from annotation.models import Annotator, Campaign


class CampaignResults(models.Model):
    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="results")
    computed_at = models.DateTimeField()
    seconds = models.FloatField(help_text="Time the computation took.")
    judgments = models.PositiveIntegerField(help_text="Judgments the results cover.")
    last_judgment_id = models.BigIntegerField(default=0, help_text="The newest judgment the results cover.")
    runs = models.PositiveIntegerField(default=0, help_text="How many times the results were computed.")
    requested_at = models.DateTimeField(
        null=True, blank=True, help_text="A compute asked for (API, page, admin) that no finished run has covered "
        "yet: the results are stale until one does, so a run lost with a killed worker is redone (tasks.py).")
    summary = models.JSONField(default=dict, blank=True, help_text="Campaign-level figures (assumption A, …).")
    agreement = models.JSONField(default=dict, blank=True, help_text="Agreement tables (docs/methods.md, Agreement).")
    progress = models.JSONField(default=dict, blank=True, help_text="Judgments and finished HITs over time.")
    translations = models.BinaryField(
        default=b"", help_text="Per-translation mean raw and z scores (numpy .npz), for calibration."
    )

    def __str__(self):
        return f"results of {self.campaign}"


class WorkerResult(models.Model):
    """One worker's reliability in one campaign (docs/methods.md §4) and standardisation figures (§5)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="worker_results")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="results")
    worker = models.CharField(max_length=255, help_text="The external id, or the user name.")
    hits = models.PositiveIntegerField()
    judgments = models.PositiveIntegerField()
    pairs = models.PositiveIntegerField(help_text="Quality-control pairs the test used.")
    test = models.CharField(max_length=16)
    p_value = models.FloatField(null=True, blank=True)
    reliable = models.BooleanField()
    mean_seconds = models.FloatField(null=True, blank=True)
    mean_raw = models.FloatField(null=True, blank=True)
    sd_raw = models.FloatField(null=True, blank=True, help_text="Sample sd (n − 1) of all the worker's scores.")
    constant = models.BooleanField(default=False, help_text="No spread in scores: cannot be standardised.")
    repeat_pairs = models.PositiveIntegerField(default=0)
    assumption_a_p = models.FloatField(null=True, blank=True)
    assumption_a_holds = models.BooleanField(null=True, blank=True)

    class Meta:
        ordering = ["campaign", "worker"]
        constraints = [models.UniqueConstraint(fields=["campaign", "annotator"], name="worker_result_unique")]

    def __str__(self):
        return f"worker {self.worker}"


class ResultTable(models.Model):
    """A result table stored whole as rows of JSON: what a family stores when it needs no table of its own."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="result_tables")
    name = models.CharField(max_length=64, help_text="The table's name, as in its CSV download.")
    variant = models.CharField(max_length=64, blank=True, help_text="e.g. which workers or which score.")
    columns = models.JSONField(default=list, help_text="Column names in order (JSON objects do not keep it).")
    rows = models.JSONField(default=list)

    class Meta:
        ordering = ["campaign", "name", "variant"]
        constraints = [models.UniqueConstraint(fields=["campaign", "name", "variant"], name="result_table_unique")]

    def __str__(self):
        return f"{self.name} ({self.variant})" if self.variant else self.name


class WorkerGate(models.Model):
    """A worker stopped by the live reliability gate (docs/methods.md §12.1): the gate found them failing their
    reliability test after a finished HIT and blocked them from the campaign (`Campaign.blocked_annotators`).
    Their judgments stay; the results flag them as unreliable. Lifting unblocks them and sets `lifted_at`; a
    lifted gate is not applied again to that worker in that campaign (the researcher has decided)."""

    class Rule(models.TextChoices):
        TEST = "test", "reliability test fails after the minimum pairs"
        MISSED = "missed", "share of control items missed"
        TUTORIAL = "tutorial", "tutorial failed after its last try"
        CHECKS = "checks", "too many silent attention checks failed"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="worker_gates")
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, related_name="gates")
    reason = models.TextField(help_text="Why the worker was stopped, for the researcher.")
    rule = models.CharField(max_length=16, choices=Rule.choices)
    test = models.CharField(max_length=32, blank=True, help_text="The reliability test that ran.")
    p_value = models.FloatField(null=True, blank=True)
    pairs = models.PositiveIntegerField(default=0, help_text="Quality-control pairs the verdict used.")
    missed_share = models.FloatField(null=True, blank=True, help_text="Share of control items missed.")
    created_at = models.DateTimeField(auto_now_add=True)
    lifted_at = models.DateTimeField(null=True, blank=True)
    lifted_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                  related_name="+")

    class Meta:
        ordering = ["campaign", "-created_at"]
        constraints = [models.UniqueConstraint(fields=["campaign", "annotator"], name="worker_gate_unique")]

    def __str__(self):
        return f"gate on {self.annotator} in {self.campaign}"


class AdaptiveRun(models.Model):
    """An adaptive campaign's allocation (docs/methods.md §12.2): its budget, what is spent, the looks taken
    between batches, and whether it still runs. Created with the campaign (evaluation/adaptive_tasks.py); changed
    only by a look (evaluation/services/adaptive.py), under this row's lock.

    Each look is one entry of `looks`: when and why it ran, the batch, the information fraction (finished HITs'
    judgments over the budget's), the judgments and money spent, the ranking, each adjacent pair with its z and
    whether it is separated, the boundary and the α spent so far, the next batch's weights, and the decision."""

    class State(models.TextChoices):
        RUNNING = "running", "Running"
        STOPPED = "stopped", "Stopped"

    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="adaptive_run")
    state = models.CharField(max_length=10, choices=State.choices, default=State.RUNNING)
    reason = models.TextField(blank=True, help_text="Why the run stopped.")
    budget_hits = models.PositiveIntegerField(help_text="The most HITs the budget buys (docs/methods.md §12.2).")
    budget_judgments = models.PositiveBigIntegerField(help_text="The judgments of budget_hits HITs.")
    budget_money = models.DecimalField(max_digits=14, decimal_places=2, null=True, blank=True,
                                       help_text="The money of budget_hits HITs at the campaign's pay.")
    spent_judgments = models.PositiveBigIntegerField(default=0, help_text="Finished HITs' judgments at the last look.")
    spent_money = models.DecimalField(max_digits=14, decimal_places=2, default=0,
                                      help_text="Finished HITs' pay at the last look.")
    separated = models.JSONField(default=list, blank=True, help_text="Adjacent pairs decided so far, as [better, "
                                 "worse] system names; a decided pair stays decided.")
    looks = models.JSONField(default=list, blank=True, help_text="Every look, oldest first.")
    created_at = models.DateTimeField(auto_now_add=True)
    stopped_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "adaptive campaign"

    def __str__(self):
        return f"adaptive allocation of {self.campaign}"


class CampaignStatistics(Campaign):
    """Campaigns as the admin's "Results" section shows them: with their computed statistics."""

    class Meta:
        proxy = True
        verbose_name = "campaign results"
        verbose_name_plural = "campaign results"


# The families' own result tables (after the shared ones, as Django has always registered them).
from .family_tables import PairwiseResult, SignificanceResult, SystemResult, WorkerFilter  # noqa: E402,F401

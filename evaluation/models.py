"""Result tables of the statistics, written by the Celery tasks in one transaction per run.

`CampaignResults` is the header of one computation (when, how long, how many judgments);
the other tables hang off the campaign and are replaced whole at each run, so readers see
either the old results or the new ones, never a mix.
"""
from django.db import models

from annotation.models import Annotator, Campaign


class WorkerFilter(models.TextChoices):
    RELIABLE = "reliable", "Reliable workers only"
    ALL = "all", "All workers"


class CampaignResults(models.Model):
    campaign = models.OneToOneField(Campaign, on_delete=models.CASCADE, related_name="results")
    computed_at = models.DateTimeField()
    seconds = models.FloatField(help_text="Time the computation took.")
    judgments = models.PositiveIntegerField(help_text="Judgments the results cover.")
    last_judgment_id = models.BigIntegerField(default=0, help_text="The newest judgment the results cover.")
    runs = models.PositiveIntegerField(default=0, help_text="How many times the results were computed.")
    summary = models.JSONField(default=dict, blank=True, help_text="Campaign-level figures (assumption A, …).")
    agreement = models.JSONField(default=dict, blank=True, help_text="METHODS.md §6 agreement tables.")
    progress = models.JSONField(default=dict, blank=True, help_text="Judgments and finished HITs over time.")
    translations = models.BinaryField(
        default=b"", help_text="Per-translation mean raw and z scores (numpy .npz), for calibration."
    )

    def __str__(self):
        return f"results of {self.campaign}"


class WorkerResult(models.Model):
    """One worker's reliability in one campaign (METHODS.md §4) and standardisation figures (§5)."""

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


class SystemResult(models.Model):
    """One system's score with reliable or all workers (METHODS.md §5)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="system_results")
    workers = models.CharField(max_length=10, choices=WorkerFilter.choices)
    system = models.CharField(max_length=200)
    is_reference = models.BooleanField(default=False, help_text="The human reference as a pseudo-system.")
    translations = models.PositiveIntegerField(help_text="Segments with at least one judgment (WMT's N).")
    judgments = models.PositiveIntegerField(help_text="Judgments counted (WMT's N.ALL).")
    mean_raw = models.FloatField(null=True)
    mean_z = models.FloatField(null=True)
    raw_low = models.FloatField(null=True)
    raw_high = models.FloatField(null=True)
    z_low = models.FloatField(null=True)
    z_high = models.FloatField(null=True)
    rank = models.PositiveIntegerField(null=True)
    cluster = models.PositiveIntegerField(null=True)

    class Meta:
        ordering = ["campaign", "workers", "rank"]
        constraints = [models.UniqueConstraint(fields=["campaign", "workers", "system"], name="system_result_unique")]


class SignificanceResult(models.Model):
    """The one-sided Wilcoxon rank-sum matrix between systems (METHODS.md §5)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="significance_results")
    workers = models.CharField(max_length=10, choices=WorkerFilter.choices)
    systems = models.JSONField(help_text="System names, in rank order.")
    p_values = models.JSONField(help_text="p[i][j]: p that system i is better than system j (null on the diagonal).")
    stars = models.JSONField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "workers"], name="significance_unique")]


class PairwiseResult(models.Model):
    """Preference counts and sign tests of a pairwise campaign per condition (METHODS.md §7),
    in total (`rater` empty) and per rater."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="pairwise_results")
    criterion = models.CharField(max_length=10)
    unit = models.CharField(max_length=10)
    rater = models.CharField(max_length=255, blank=True)
    annotator = models.ForeignKey(Annotator, on_delete=models.CASCADE, null=True, related_name="+")
    a = models.PositiveIntegerField(help_text="The campaign's first system preferred.")
    b = models.PositiveIntegerField(help_text="The second system preferred.")
    t = models.PositiveIntegerField(help_text="Ties.")
    x = models.FloatField(null=True)
    n = models.PositiveIntegerField(null=True)
    p_value = models.FloatField(null=True, help_text="Two-sided sign test, x = b, n = a + b.")
    p_value_emerson_simon = models.FloatField(null=True, help_text="x = b + t/2, n = a + b + t.")
    spam_seen = models.PositiveIntegerField(default=0)
    spam_missed = models.PositiveIntegerField(default=0)
    spam_missed_ties = models.PositiveIntegerField(default=0)
    excluded = models.BooleanField(default=False)

    class Meta:
        ordering = ["campaign", "criterion", "unit", "rater"]


class CampaignStatistics(Campaign):
    """Campaigns as the admin's "Results" section shows them: with their computed statistics."""

    class Meta:
        proxy = True
        verbose_name = "campaign results"
        verbose_name_plural = "campaign results"

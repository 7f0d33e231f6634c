"""The result tables two families keep beside the shared ones: Direct Assessment's system scores and significance
matrix, and pairwise's preference counts.

They sit with `evaluation.models` (which imports them, so that Django finds every model of the app) below the
families, so that loading the models imports no family (docs/architecture.md, evaluation's layers).
"""
from django.db import models

from annotation.models import Annotator, Campaign


class WorkerFilter(models.TextChoices):
    RELIABLE = "reliable", "Reliable workers only"
    ALL = "all", "All workers"


class SystemResult(models.Model):
    """One system's score with reliable or all workers (docs/methods.md §5)."""

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
    rank_low = models.PositiveIntegerField(null=True, help_text="Best rank possible given the wins and losses.")
    rank_high = models.PositiveIntegerField(null=True, help_text="Worst rank possible given the wins and losses.")

    class Meta:
        ordering = ["campaign", "workers", "rank"]
        constraints = [models.UniqueConstraint(fields=["campaign", "workers", "system"], name="system_result_unique")]

    def __str__(self):
        return f"{self.system} ({self.get_workers_display().lower()})"


class SignificanceResult(models.Model):
    """The one-sided Wilcoxon rank-sum matrix between systems (docs/methods.md §5)."""

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="significance_results")
    workers = models.CharField(max_length=10, choices=WorkerFilter.choices)
    systems = models.JSONField(help_text="System names, in rank order.")
    p_values = models.JSONField(help_text="p[i][j]: p that system i is better than system j (null on the diagonal).")
    stars = models.JSONField()
    wins = models.JSONField(default=list, help_text="wins[i][j]: i significantly better than j and ranked above it.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "workers"], name="significance_unique")]

    def __str__(self):
        return f"significance ({self.get_workers_display().lower()})"



class PairwiseResult(models.Model):
    """Preference counts and sign tests of a pairwise campaign per condition (docs/methods.md §7),
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

    def __str__(self):
        return f"{self.criterion}, {self.unit}: {self.rater or 'all raters'}"

"""The pairwise family's result table: preference counts and sign tests per condition and rater."""
from django.db import models

from annotation.models import Annotator, Campaign


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

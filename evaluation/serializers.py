"""Researcher API serializers of the results (the campaign's own are annotation/api/serializers.py)."""
from rest_framework import serializers

from .models import WorkerResult


class WorkerResultSerializer(serializers.ModelSerializer):
    """A worker's quality control: the columns of `workers/`, the page's table, its CSV and the admin."""

    class Meta:
        model = WorkerResult
        fields = ["worker", "hits", "judgments", "pairs", "test", "p_value", "reliable", "mean_seconds", "mean_raw",
                  "sd_raw", "constant", "repeat_pairs", "assumption_a_p", "assumption_a_holds"]

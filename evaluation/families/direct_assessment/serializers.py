"""The Direct Assessment family's API columns, also the columns of its CSVs and its admin."""
from rest_framework import serializers

from .models import SystemResult


class SystemResultSerializer(serializers.ModelSerializer):
    """One system's scores: the rows of `systems/`, the page's ranking tables and systems.csv."""

    class Meta:
        model = SystemResult
        fields = ["system", "is_reference", "translations", "judgments", "mean_raw", "mean_z", "raw_low", "raw_high",
                  "z_low", "z_high", "rank", "cluster"]

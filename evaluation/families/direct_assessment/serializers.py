"""The Direct Assessment family's API columns, also the columns of its CSVs and its admin."""
from rest_framework import serializers

from ...models import SystemResult


class SystemResultSerializer(serializers.ModelSerializer):
    """One system's scores: the rows of `systems/`, the page's ranking tables and systems.csv. `score` is
    the mean z (its name in `score_name`), `n` the translations (WMT's N), `rank_range` [best, worst]."""

    score = serializers.FloatField(source="mean_z", read_only=True, allow_null=True)
    score_name = serializers.SerializerMethodField()
    n = serializers.IntegerField(source="translations", read_only=True)
    rank_range = serializers.SerializerMethodField()

    class Meta:
        model = SystemResult
        fields = ["system", "is_reference", "translations", "judgments", "mean_raw", "mean_z", "raw_low", "raw_high",
                  "z_low", "z_high", "rank", "cluster", "score", "score_name", "n", "rank_range"]

    def get_score_name(self, row) -> str:
        return "mean_z"

    def get_rank_range(self, row) -> list[int] | None:
        return [row.rank_low, row.rank_high] if row.rank_low is not None else None

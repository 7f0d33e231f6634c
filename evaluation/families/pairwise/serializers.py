"""The pairwise family's columns: its raters (page, CSV) and its per-condition counts (CSV, admin)."""
from rest_framework import serializers

from ...models import PairwiseResult, WorkerResult


class RaterSerializer(serializers.ModelSerializer):
    """A rater with their spam-item record; `context["spam"]` maps an annotator id to (seen, missed)."""

    spam_seen = serializers.SerializerMethodField()
    spam_missed = serializers.SerializerMethodField()
    spam_miss_rate = serializers.SerializerMethodField()

    class Meta:
        model = WorkerResult
        fields = ["worker", "hits", "judgments", "spam_seen", "spam_missed", "spam_miss_rate", "reliable",
                  "mean_seconds"]

    def _spam(self, worker) -> tuple[int, int]:
        return self.context.get("spam", {}).get(worker.annotator_id, (0, 0))

    def get_spam_seen(self, worker) -> int:
        return self._spam(worker)[0]

    def get_spam_missed(self, worker) -> int:
        return self._spam(worker)[1]

    def get_spam_miss_rate(self, worker) -> float | None:
        seen, missed = self._spam(worker)
        return missed / seen if seen else None


class PairwiseResultSerializer(serializers.ModelSerializer):
    """One condition's counts and sign tests, in total (`rater` empty) or for one rater."""

    class Meta:
        model = PairwiseResult
        fields = ["criterion", "unit", "rater", "a", "t", "b", "x", "n", "p_value", "p_value_emerson_simon",
                  "spam_seen", "spam_missed", "spam_missed_ties", "excluded"]

"""Signals the annotation app sends; other apps listen (annotation imports none of them).

`judgments_recorded` is sent after the transaction that stored new judgments commits,
with `campaign_id` and `count`. The evaluation app uses it to schedule recomputation.
"""
from django.dispatch import Signal

judgments_recorded = Signal()

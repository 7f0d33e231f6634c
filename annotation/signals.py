"""Signals the annotation app sends; other apps listen (annotation imports none of them).

`judgments_recorded` is sent after the transaction that stored new judgments commits,
with `campaign_id`, `count` and, from the judging path, the campaign's `protocol`. The evaluation app
uses it to schedule recomputation; the annotation app to build later stages (services/stages.py).
"""
from django.dispatch import Signal

judgments_recorded = Signal()

"""Signals the annotation app sends; other apps listen (annotation imports none of them).

`judgments_recorded` is sent after the transaction that stored new judgments commits,
with `campaign_id`, `count` and, from the judging path, the campaign's `protocol` and `options` (whether its
protocol's later stages are asked for, e.g. an error-span review, without a query). The evaluation app
uses it to schedule recomputation; the annotation app to build later stages (services/stages.py).

`assignment_completed` is sent after the transaction that finished a HIT (its last judgment) commits, with
`campaign_id`, `annotator_id`, `assignment_id`, `protocol` and the campaign's `options` (so that a listener
can tell whether it has work to do without a query). The evaluation app runs the live reliability gate
(docs/methods.md §12.1) from it, in a Celery task, and from `training_failed` too.
"""
from django.dispatch import Signal

judgments_recorded = Signal()
assignment_completed = Signal()

#: Sent after a failed tutorial check commits (a loud tutorial's last try, or a silent check), with
#: `campaign_id` and `annotator_id`: the evaluation app runs the live reliability gate on that worker.
training_failed = Signal()

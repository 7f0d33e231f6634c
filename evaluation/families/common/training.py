"""The training result part (docs/methods.md §12.5): for a campaign with tutorial items that carry an expected
answer, whatever its protocol, how the judges fared on them, from the annotation app's `TutorialTry` rows (every try
of a loud tutorial, each silent check).

An *answer* is one worker's work on one tutorial item of one HIT (a loud tutorial opens every HIT, so a worker
doing three HITs answers it three times). Two tables:
- `tutorial_items`, per tutorial line (document, segment, and the system shown; contrastive ESA: every system of
  the screen, `system` empty): `answers` (answers with at least one try), `finished` (answers with a final try:
  right, or at the last try, or a silent check), `passed` and `pass_rate` = passed / finished, `first_try_passed`
  and `first_try_pass_rate` = answers right at the first try / answers, `tries` (every try) and `mean_tries` =
  the mean of the final try's number over the finished answers;
- `tutorial_workers`, per worker: the same counts over their answers.
Computed with the family's results (`analyses.compute_results`), on the Celery workers.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from django.db import transaction

from annotation.models import Campaign, TutorialTry
from annotation.services.export import has_training

from ...models import ResultTable
from ...services.latex import booktabs, percent
from ...services.results_read import freshness, stored_reader, stored_table
from ...services.storing import jsonable
from ..base import Table

ITEMS_TABLE, WORKERS_TABLE = "tutorial_items", "tutorial_workers"
COUNTS = ("answers", "finished", "passed", "pass_rate", "first_try_passed", "first_try_pass_rate", "tries",
          "mean_tries")
ITEM_COLUMNS = ("doc_id", "seg_id", "system", "mode", *COUNTS)
WORKER_COLUMNS = ("worker", "mode", *COUNTS)


def _counts(group: np.ndarray, answer: np.ndarray, attempt: np.ndarray, passed: np.ndarray, final: np.ndarray,
            n_groups: int) -> list[dict]:
    """COUNTS per group (index into 0..n_groups) from one row per try; `answer` numbers the (assignment, item)."""
    first_of_answer = np.zeros(answer.max() + 1 if answer.size else 0, dtype=np.int64)
    first_of_answer[answer] = group
    answers = np.bincount(first_of_answer, minlength=n_groups)
    finished = np.bincount(group[final], minlength=n_groups)
    right = np.bincount(group[final & passed], minlength=n_groups)
    first_right = np.bincount(group[(attempt == 1) & passed], minlength=n_groups)
    tries = np.bincount(group, minlength=n_groups)
    final_tries = np.bincount(group[final], weights=attempt[final].astype(np.float64), minlength=n_groups)
    rows = []
    for g in range(n_groups):
        rows.append({"answers": int(answers[g]), "finished": int(finished[g]), "passed": int(right[g]),
                     "pass_rate": float(right[g] / finished[g]) if finished[g] else None,
                     "first_try_passed": int(first_right[g]),
                     "first_try_pass_rate": float(first_right[g] / answers[g]) if answers[g] else None,
                     "tries": int(tries[g]),
                     "mean_tries": float(final_tries[g] / finished[g]) if finished[g] else None})
    return rows


def training_tables(campaign: Campaign) -> dict[str, list[dict]]:
    """The two tables (empty lists before any try)."""
    rows = list(TutorialTry.objects.filter(campaign=campaign).order_by("pk").values_list(
        "assignment_id", "item_id", "attempt", "passed", "final", "mode", "annotator__external_id",
        "annotator__user__username", "item__segment__document__doc_id", "item__segment__seg_id",
        "item__output__system__name"))
    if not rows:
        return {ITEMS_TABLE: [], WORKERS_TABLE: []}
    assignment, item, attempt, passed, final, mode, external, username, doc_id, seg_id, system = zip(*rows,
                                                                                                     strict=True)
    _, answer = np.unique(np.stack([np.asarray(assignment), np.asarray(item)], axis=1), axis=0, return_inverse=True)
    lines = [(d, s, n or "", m) for d, s, n, m in zip(doc_id, seg_id, system, mode, strict=True)]
    workers = [(e or u, m) for e, u, m in zip(external, username, mode, strict=True)]
    arrays = (np.asarray(answer).ravel(), np.asarray(attempt), np.asarray(passed, dtype=bool),
              np.asarray(final, dtype=bool))
    tables = {}
    for name, keys, columns in ((ITEMS_TABLE, lines, ITEM_COLUMNS[:4]), (WORKERS_TABLE, workers, WORKER_COLUMNS[:2])):
        order = sorted(set(keys), key=lambda k: tuple(str(x) for x in k))
        index = {k: i for i, k in enumerate(order)}
        group = np.fromiter((index[k] for k in keys), dtype=np.int64, count=len(keys))
        counted = _counts(group, *arrays, len(order))
        tables[name] = [{**dict(zip(columns, key, strict=True)), **row} for key, row in zip(order, counted,
                                                                                             strict=True)]
    return tables


class Training:
    """The part: applies to campaigns with tutorial items that carry an expected answer."""

    name = "training"
    label = "Training and attention checks"
    template = "evaluation/parts/training.html"

    @staticmethod
    def applies(campaign: Campaign) -> bool:
        return has_training(campaign)

    def compute(self, campaign: Campaign) -> None:
        tables = training_tables(campaign)
        with transaction.atomic():
            ResultTable.objects.filter(campaign=campaign, name__in=list(tables)).delete()
            ResultTable.objects.bulk_create(
                ResultTable(campaign=campaign, name=name, columns=list(columns), rows=jsonable(tables[name]))
                for name, columns in ((ITEMS_TABLE, ITEM_COLUMNS), (WORKERS_TABLE, WORKER_COLUMNS)))

    def answer(self, campaign: Campaign, params: Mapping[str, str]) -> dict:
        """The body of `GET /api/campaigns/<slug>/training/`."""
        return {**freshness(campaign).as_api(), "items": stored_table(campaign, ITEMS_TABLE)[1],
                "workers": stored_table(campaign, WORKERS_TABLE)[1]}

    def tables(self) -> list[Table]:
        return [Table(ITEMS_TABLE, stored_reader(ITEMS_TABLE, ITEM_COLUMNS), _items_latex),
                Table(WORKERS_TABLE, stored_reader(WORKERS_TABLE, WORKER_COLUMNS))]

    def page_context(self, campaign: Campaign) -> dict:
        return {"items": stored_table(campaign, ITEMS_TABLE)[1], "workers": stored_table(campaign, WORKERS_TABLE)[1]}




def _items_latex(campaign, params) -> str:
    return booktabs([("Document", "doc_id", "l"), ("Segment", "seg_id", "r"), ("System", "system", "l"),
                     ("Mode", "mode", "l"), ("Answers", "answers", "r"), ("Passed %", "pass_rate", "r"),
                     ("First try %", "first_try_pass_rate", "r"), ("Mean tries", "mean_tries", "r")],
                    stored_table(campaign, ITEMS_TABLE)[1],
                    {"pass_rate": percent, "first_try_pass_rate": percent,
                     "mean_tries": lambda v: "--" if v is None else f"{v:.2f}"},
                    caption="Tutorial items: answers, pass rate and first-try pass rate")


TRAINING = Training()

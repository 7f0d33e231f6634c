"""Ranking stability for Direct Assessment (docs/methods.md §12.4): the judgments the DA ranking counts, as the
bootstrap's input, the `stability/` endpoint and the results page's section.

The rows are those of the stored ranking (docs/methods.md §5.2): system-output judgments and exact repeats (and
reference translations under `reference_as_system`, as the "human reference" pseudo-system), segment items only
for document-level DA, of every worker or of the reliable ones by the stored verdicts; the scores are the
z-scores fitted on all of each worker's judgments (or the raw scores). Judgments newer than the stored results
are left out, so every subtask of a run reads the same rows.
"""
from __future__ import annotations

from dataclasses import fields

import numpy as np

from ... import stats
from ...models import WorkerResult
from ...stats import stability as core
from .analysis import DOCUMENT, HUMAN_REFERENCE, REFERENCE, REPEAT, SYSTEM, DAJudgments
from .storage import load_judgments


def _up_to(data: DAJudgments, last_judgment_id: int) -> DAJudgments:
    keep = data.judgment_id <= last_judgment_id
    if keep.all():
        return data
    rows = {f.name: getattr(data, f.name)[keep] for f in fields(data)
            if isinstance(getattr(data, f.name), np.ndarray)}
    return DAJudgments(**rows, system_names=data.system_names)


def stability_data(campaign, workers: str, score: str, last_judgment_id: int) -> core.StabilityData:
    """The counted judgments of the stored ranking under `workers` ("reliable" or "all") and `score` ("z" or
    "raw"), up to `last_judgment_id`, ready for the bootstrap."""
    data = _up_to(load_judgments(campaign), last_judgment_id).in_id_order()
    annotator_ids, worker = np.unique(data.annotator_id, return_inverse=True)
    values = data.score
    if score == "z":
        values = stats.standardise(worker, data.score, annotator_ids.size).z
    reference_as_system = bool((campaign.options or {}).get("reference_as_system", False))
    counted = np.isin(data.item_type, [SYSTEM, REPEAT, REFERENCE] if reference_as_system else [SYSTEM, REPEAT])
    if data.unit is not None:
        counted &= data.unit != DOCUMENT
    if workers == "reliable":
        verdicts = dict(WorkerResult.objects.filter(campaign=campaign).values_list("annotator_id", "reliable"))
        reliable = np.array([bool(verdicts.get(int(a), False)) for a in annotator_ids], dtype=bool)
        counted &= reliable[worker]
    names = list(data.system_names)
    system = data.system
    if reference_as_system:
        system = np.where(data.item_type == REFERENCE, len(names), system)
        names.append(HUMAN_REFERENCE)
    rows = counted & np.isfinite(values)
    return core.prepare(worker[rows], data.segment[rows], system[rows], values[rows], names)

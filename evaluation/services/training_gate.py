"""The training verdict of the live reliability gate (docs/methods.md §12.5): a worker who failed a loud tutorial
(still wrong at its last try), or whose failed silent checks reach `checks_max_failed`, is stopped by the same
gate as a worker failing the reliability test (services/gates.py), with rule `tutorial` or `checks`. The tries are
the annotation app's `TutorialTry` rows (annotation/services/tutorials.py)."""
from __future__ import annotations

from annotation.building import training
from annotation.models import Annotator, Campaign, TutorialTry

from ..families.base import GateVerdict


def training_verdict(campaign: Campaign, annotator: Annotator) -> GateVerdict | None:
    """Why the worker's tutorial answers in this campaign stop them, or None."""
    finals = list(TutorialTry.objects.filter(campaign=campaign, annotator=annotator, final=True)
                  .values_list("mode", "passed", "attempt"))
    failed_loud = [attempt for mode, passed, attempt in finals if mode == training.LOUD and not passed]
    if failed_loud:
        return GateVerdict("tutorial", f"failed the tutorial: {len(failed_loud)} tutorial item(s) still wrong after "
                           f"{max(failed_loud)} tr{'y' if max(failed_loud) == 1 else 'ies'}",
                           pairs=sum(1 for mode, _, _ in finals if mode == training.LOUD),
                           missed_share=len(failed_loud) / sum(1 for mode, _, _ in finals if mode == training.LOUD))
    silent = [passed for mode, passed, _ in finals if mode == training.SILENT]
    failed = silent.count(False)
    limit = training.max_failed(campaign.options)
    if silent and training.checks_fail(failed, len(silent), limit):
        rule_text = f"{limit:g} failed checks" if limit >= 1 else f"a share of {limit:g}"
        return GateVerdict("checks", f"failed {failed} of {len(silent)} attention checks (the limit: {rule_text})",
                           pairs=len(silent), missed_share=failed / len(silent))
    return None


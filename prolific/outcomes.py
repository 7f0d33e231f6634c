"""The codes the annotator pages give a worker whose HIT ended unfinished (annotation.extensions.OutcomeCodes):
the campaign's Prolific study's code for that outcome, which Prolific maps to its actions (services/study.py)."""
from annotation.extensions import OutcomeCodes

from .models import ProlificStudy


class ProlificOutcomeCodes(OutcomeCodes):
    def code_for(self, campaign, outcome: str) -> str | None:
        codes = (ProlificStudy.objects.filter(campaign=campaign).exclude(status=ProlificStudy.Status.NEW)
                 .values_list("codes", flat=True).first())
        return (codes or {}).get(outcome) or None

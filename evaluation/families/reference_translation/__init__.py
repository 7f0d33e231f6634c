"""Crowd reference-translation results (docs/methods.md §9; Callison-Burch 2009 §5.1): per translator their
leave-one-out BLEU (sacrebleu) against the other accepted translators, BLEU against the professional reference,
the share of their sentences flagged as machine-made by the detect stage and whether they are excluded; the
accepted translations as extra references."""
from __future__ import annotations

from ..base import Table
from ..staged import StagedFamily
from . import presenter, storage
from .storage import compute_reference_translation


class ReferenceTranslationFamily(StagedFamily):
    name = "reference-translation"
    label = "Crowd reference translations (BLEU, MT detection)"
    template = "evaluation/families/reference_translation.html"
    sections = (("translators", "Translators"), ("rt-stages", "Stages"), ("accepted", "Accepted translations"))
    endpoints = ("translators", "accepted", "translations", "mt", "stages")
    presenter = presenter

    def compute(self, campaign):
        return compute_reference_translation(campaign)

    def systems(self, campaign, params):
        """The translators as the API's systems: ranked by leave-one-out BLEU."""
        return self.stored(campaign, "systems")

    def translators(self, campaign, params):
        return self.stored(campaign, "systems")

    def accepted(self, campaign, params):
        """The accepted translations (of translators not excluded): doc_id, seg_id, translator, translation."""
        return self.stored(campaign, "accepted")

    def translations(self, campaign, params):
        """Every translation with its pasted flag, copied system, detect votes, flagged and excluded."""
        return self.stored(campaign, "translations")

    def mt(self, campaign, params):
        """Per system: how often the detect judges marked its outputs machine-made."""
        return self.stored(campaign, "mt")

    def tables(self):
        stored = self.stored_table
        return [Table("workers", self.workers_table), Table("systems", stored("systems", storage.SYSTEMS)),
                Table("translators", stored("systems", storage.SYSTEMS)),
                Table("accepted", stored("accepted", storage.ACCEPTED)),
                Table("translations", stored("translations", storage.TRANSLATIONS)),
                Table("mt", stored("mt", storage.MT))]

    def missing(self, campaign, header):
        """Translators are not tested for reliability: they are excluded when the detect stage marks too many of
        their translations machine-made. So: no translation yet, nothing judged by the detect stage yet, every
        translator excluded (no accepted reference), or no accepted translator with another accepted one to be
        scored against (one of two excluded) — said as what happened, not as a failed worker test."""
        summary = header.summary or {}
        translators, excluded = summary.get("translators", 0), summary.get("excluded", 0)
        if not translators:
            return [{"what": "translations", "text": "no finished translate HIT yet"}]
        if not summary.get("translations_judged"):
            return [{"what": "detection", "text": "no translation judged by the detect-MT stage yet, so no translator "
                     "can be checked for machine translation (their BLEU is shown meanwhile)"}]
        if excluded == translators:
            share = f"{100 * summary.get('flag_threshold', 0):g} %"
            return [{"what": "accepted", "text": f"every translator ({translators}) was excluded as machine "
                     "translation: the detect-MT judges flagged (by a majority of their votes) at least "
                     f"{share} of each one's judged translations as machine-made, so no translation is accepted "
                     "as a reference yet"}]
        kept = translators - excluded
        if not summary.get("accepted_scored", kept if kept > 1 else 0):
            alone = (f"only one of the {translators} translators is accepted (the other{'s' if excluded > 1 else ''} "
                     "excluded as machine translation by the detect-MT judges)" if kept == 1 else
                     "no sentence has translations by two accepted translators yet")
            return [{"what": "references", "text": f"{alone}: leave-one-out BLEU scores each accepted translator "
                     "against the other accepted translators' translations of the same sentences, so no accepted "
                     "translator can be scored yet"}]
        return []

    def admin_summary(self, summary):
        if "translators" in summary:
            return f"{summary['translators'] - summary['excluded']} / {summary['translators']} translators accepted"
        return "–"


#: The family object `settings.MTEVAL_RESULT_FAMILIES` names.
FAMILY = ReferenceTranslationFamily()

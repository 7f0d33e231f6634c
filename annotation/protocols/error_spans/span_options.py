"""The error-span protocols' options (docs/methods.md §11, #esa-ai) and their checks: ESA's, MQM's (ESA's and a
taxonomy, severities and weights), and the categories a campaign may add."""
from __future__ import annotations

from annotation.building.shared_options import GATE_OPTIONS, RELIABILITY_OPTIONS
from annotation.building.spans import DEFAULT_MQM_TAXONOMY
from annotation.building.training import TRAINING_OPTIONS
from annotation.protocols.options import Option

from .store import MAX_CATEGORY

#: ESA^AI (docs/methods.md#esa-ai): outputs the automatic system found error-free are sent at this rate.
AI_ERROR_FREE_RATE = Option(
    "ai_error_free_rate", "float", 1.0, "ESA^AI: outputs on which the automatic system marked no error (an empty "
    "list in the file's error_spans) are sent to judges at this rate, a seeded draw per output; the scores "
    "correct for it (docs/methods.md#esa-ai). 1 sends everything; 0.2 is recommended (it saved 31 percent of "
    "the judging in benchmarks/esa_ai.py, with false separation as full judging's).", minimum=0.01, maximum=1.0,
    target="options")
#: The category a campaign may add for translations that ignore their instructions (option instruction_violation);
#: ESA's errors then carry a category, this or ESA_ERROR.
INSTRUCTION_VIOLATION = "Instruction violation"
ESA_ERROR = "Error"
SPAN_OPTIONS = (
    Option("segments_per_hit", "int", 100, "Segments per HIT; documents are kept whole where they fit.",
           minimum=1, maximum=1000, key="hit_size"),
    Option("perturbation_rate", "float", 0.10, "Share of a HIT's segments shown again with words removed "
           "(quality control: they should get a major error and a lower score).", minimum=0.0, maximum=0.5,
           target="options"),
    Option("show_source", "bool", True, "Show the source text beside the translation (source-based evaluation).",
           target="options"),
    *RELIABILITY_OPTIONS,  # the reliability and statistics options, shared with Direct Assessment
    *GATE_OPTIONS,  # the live reliability gate on the perturbed copies (docs/methods.md §12.1)
    Option("significance_test", "choice", None, "How systems are compared (docs/methods.md#error-span-protocols): "
           "wmt24 (per-domain paired Wilcoxon + Stouffer), wmt25 (one-sided paired Wilcoxon) or randomization "
           "(paired approximate randomization).",
           choices=(("wmt24", "WMT24: per domain, Stouffer"), ("wmt25", "WMT25: one-sided Wilcoxon"),
                    ("randomization", "paired approximate randomization")),
           target="options", default_text="the preset's"),
    Option("min_items", "int", None, "Systems with fewer judged items are not ranked.", minimum=0,
           maximum=1_000_000, target="options", default_text="the preset's (100 in WMT24 ESA, 0 in WMT25 ESA)"),
    AI_ERROR_FREE_RATE,
    Option("instruction_violation", "bool", None, f"Add the category {INSTRUCTION_VIOLATION!r}: a translation that "
           "ignores the instructions the system was given (docs/api.md#instructions). MQM: one more category of the "
           f"taxonomy, weighted as any error of its severity; ESA: each error is then {ESA_ERROR!r} or "
           f"{INSTRUCTION_VIOLATION!r}.", target="options", default_text="no"),
    *TRAINING_OPTIONS,  # tutorial lines with expected answers: loud training or silent checks
)
MQM_OPTIONS = (
    *SPAN_OPTIONS,
    Option("taxonomy", "list", None, "MQM error categories, comma-separated, a subcategory as Parent/Child.",
           target="options", default_text="Accuracy/{Mistranslation, Omission, Addition, Untranslated}, "
           "Fluency/{Grammar, Spelling, Punctuation, Register, Inconsistency}, Terminology, Style, Locale convention, "
           "Other, Non-translation"),
    Option("critical", "bool", False, "Offer the severity critical besides minor and major.", target="options"),
    Option("mqm_weights", "choice", "google", "MQM weights, a named preset (docs/methods.md §11.3): google "
           "(Freitag et al. 2021), score-mqm (TED 2021's score_mqm.py) or wmt23-marot (Marot's, WMT23).",
           choices="mqm_weights", target="options"),
)


def check_mqm_options(options: dict) -> list[str]:
    """MQM's options filled in: the taxonomy (the default one, or the campaign's if its categories are short
    enough and distinct), no critical severity and Google's weights unless given. The problems, if any."""
    taxonomy = options.get("taxonomy") or list(DEFAULT_MQM_TAXONOMY)
    long = [c for c in taxonomy if len(c) > MAX_CATEGORY]
    if long:
        return [f"taxonomy: a category is at most {MAX_CATEGORY} characters; {long[0][:40]!r}… is longer"]
    if len(set(taxonomy)) != len(taxonomy):
        return ["taxonomy: a category is listed twice"]
    options["taxonomy"] = taxonomy
    options.setdefault("critical", False)
    options.setdefault("mqm_weights", "google")
    return []

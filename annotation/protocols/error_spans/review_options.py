"""The options of an `mqm` or `esa` campaign that ask for a review stage after the first pass (review_strategy.py,
docs/methods.md "Review of error spans"), and the stage they declare."""
from __future__ import annotations

from decimal import Decimal

from annotation.building.stage_specs import StageSpec
from annotation.protocols.options import Option

#: The first pass of a review stage: the first stage's judges, or the campaign file's automatic spans.
REVIEW_OPTIONS = (
    Option("review", "choice", "none", "A review stage after the first pass (two-stage MQM, docs/methods.md): none; "
           "judges (a reviewer checks each finished annotation of another judge); prefilled (a reviewer checks the "
           "campaign file's automatic error_spans).",
           choices=(("none", "no review stage"), ("judges", "review the judges' spans"),
                    ("prefilled", "review the file's automatic spans")), target="options"),
    Option("reviewers", "int", 1, "Reviewers per first-pass annotation in the review stage.", minimum=1, maximum=25,
           target="options"),
    Option("review_items_per_hit", "int", 20, "Reviewed annotations per review HIT.", minimum=1, maximum=200,
           target="options"),
    Option("review_payment_per_hit", "decimal", Decimal("0"), "What a reviewer earns per HIT.", minimum=Decimal("0"),
           maximum=Decimal("999999.99"), decimal_places=2, target="options"),
)
#: The first stage's options a review stage keeps (what the spans may be, how MQM weighs them, what is shown).
CARRIED = ("taxonomy", "critical", "mqm_weights", "show_source")
#: The first-pass rater of automatic spans.
AUTOMATIC = "automatic"


def normalise_review(options: dict) -> None:
    """The review options as the campaign stores them (JSON: the payment as text)."""
    if "review_payment_per_hit" in options:
        options["review_payment_per_hit"] = str(options["review_payment_per_hit"])


def review_stages(protocol: str, options: dict) -> list[StageSpec]:
    """The review stage an `mqm` or `esa` campaign declares when its option `review` asks for one."""
    mode = options.get("review") or "none"
    if mode == "none":
        return []
    return [StageSpec("review", f"{protocol}-review", redundancy=int(options.get("reviewers", 1)),
                      hit_size=int(options.get("review_items_per_hit", 20)),
                      payment_per_hit=Decimal(str(options.get("review_payment_per_hit", "0"))),
                      options={**{k: options[k] for k in CARRIED if k in options}, "review_of": mode,
                               "exclude_own_work": True}, build_at_once=mode == "prefilled")]

"""Whether a campaign's workers can pass its reliability test at all (docs/methods.md §2, §4): the quality-control
pairs one worker can give across the campaign's HITs, against what the test needs. Shown in the import's warnings
and the HIT preview."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

from ..building.campaign_files import (
    MAX_KEPT_ERRORS,  # noqa: F401  (also read from here: services/import_jobs.py)
    MAX_REPORTED_ERRORS,  # noqa: F401  (also read from here: the admin)
    )
from ..building.hit_layout import ItemPlan
from ..protocols import options as option_hooks
from ..protocols.options import number_text

#: A worker who does one HIT should pass the reliability test with a clear but not extreme effect: their bad
#: references this many standard deviations (of their bad-minus-original differences) below the originals.
#: One 100-item HIT (10 pairs) asks 0.58 of the paired t-test; one 20-item HIT (2 pairs) asks 4.46.
MAX_REASONABLE_DROP = 1.0
#: The bad-reference pairs of one standard 100-item HIT (docs/methods.md §2), quoted for comparison.
STANDARD_PAIRS = 10


@dataclass(frozen=True)
class ReliabilityCapacity:
    """How many quality-control pairs a campaign's workers can give its reliability test, and whether the
    test can pass them (docs/methods.md §2, §4). A worker does each HIT at most once, so however large the
    redundancy, a worker gives at most the bad-reference pairs of all the HITs together."""

    test: str
    label: str
    threshold: float
    rule: str
    hits: int
    pairs_per_hit: int
    max_pairs: int
    #: Pairs the test needs to pass anyone (None: more than evaluation searched).
    min_pairs: int | None
    #: The study's other campaigns add their pairs (the campaign is in a study, reliability_scope "study").
    pooled: bool
    #: The other reliability tests that could pass a worker with `max_pairs` pairs.
    alternatives: tuple[str, ...] = ()
    #: (pairs) -> the drop, in standard deviations of a worker's bad-minus-original differences, with which
    #: the test passes a worker with that many pairs (None: none does); the "critical_drop" hook.
    drop: Callable[[int], float | None] = field(default=lambda pairs: None, compare=False, repr=False)

    @cached_property
    def drop_one_hit(self) -> float | None:
        return self.drop(self.pairs_per_hit)

    @cached_property
    def drop_all(self) -> float | None:
        return self.drop(self.max_pairs)

    @cached_property
    def drop_standard(self) -> float | None:
        return self.drop(STANDARD_PAIRS)

    @property
    def possible(self) -> bool:
        return self.min_pairs is not None and self.max_pairs >= self.min_pairs

    @property
    def passing(self) -> str:
        return f"p {'≤' if self.rule == 'le' else '<'} {number_text(self.threshold)}"

    @property
    def pairs(self) -> str:
        """How many bad-reference pairs a worker can give, and why."""
        if self.hits == 1:
            return f"a worker gives at most {self.max_pairs} bad-reference pairs (the campaign's one HIT holds them)"
        return (f"a worker gives {self.pairs_per_hit} bad-reference pairs per HIT and at most {self.max_pairs} "
                f"({self.pairs_per_hit} per HIT × {self.hits} HITs, each done by a worker at most once)")

    def _needs(self) -> str:
        needed = f"at least {self.min_pairs}" if self.min_pairs else f"more than {self.max_pairs}"
        return (f"the reliability test “{self.label}” needs {needed} bad-reference pairs per worker to reach "
                f"{self.passing}, and here {self.pairs}")

    def refusal(self) -> str | None:
        """Why the campaign is refused: its test can never pass a worker on the pairs they can give (unless the
        study's other campaigns add theirs)."""
        if self.possible or self.pooled:
            return None
        fix = (f"Choose a test that can pass a worker with {self.max_pairs} pairs ({', '.join(self.alternatives)})"
               if self.alternatives else "Choose another test")
        return f"{self._needs()}: every worker would be unreliable. {fix}, or add segments."

    def warning(self) -> str | None:
        """What the preview warns about: pooled pairs that may not suffice, or a test that passes a worker who
        does one HIT only with an extreme effect (or not at all)."""
        if not self.possible:
            return (f"Quality control: {self._needs()}. Only the pairs of the study's other campaigns can make a "
                    "worker reliable.")
        if self.drop_one_hit is not None and self.drop_one_hit <= MAX_REASONABLE_DROP:
            return None
        one = (f"with one HIT's {self.pairs_per_hit} pairs it cannot pass anyone" if self.drop_one_hit is None
               else f"with one HIT's {self.pairs_per_hit} pairs it passes a worker only when their bad references "
                    f"score at least {number_text(self.drop_one_hit)} standard deviations (of their "
                    "bad-minus-original differences) below the originals")
        text = (f"Quality control is weak: {self.pairs}. The reliability test “{self.label}” ({self.passing}) "
                f"needs at least {self.min_pairs} pairs to pass anyone; {one}")
        if self.max_pairs > self.pairs_per_hit and self.drop_all is not None:
            text += f"; with all {self.max_pairs}, {number_text(self.drop_all)}"
        if self.drop_standard is not None and self.max_pairs < STANDARD_PAIRS:
            text += f"; with the {STANDARD_PAIRS} pairs of one 100-item HIT, {number_text(self.drop_standard)}"
        return text + ". Larger HITs (hit_size) give a worker more pairs per HIT; more segments give more HITs."


def reliability_capacity(spec, *, qc_test: str, qc_threshold: float, options: dict, bad_pairs_per_hit: Sequence[int],
                         in_study: bool) -> ReliabilityCapacity | None:
    """The capacity of a campaign of protocol `spec` whose HITs hold `bad_pairs_per_hit` bad references; None
    when the protocol has no reliability test or no bad references, or no app told annotation how many pairs
    a test needs (the "min_pairs" and "critical_drop" option hooks, filled in by evaluation)."""
    min_pairs, critical_drop = option_hooks.provider("min_pairs"), option_hooks.provider("critical_drop")
    test_option = next((option for option in spec.option_fields() if option.name == "qc_test"), None)
    if test_option is None or not bad_pairs_per_hit or min(bad_pairs_per_hit) == 0 or not min_pairs \
            or not critical_drop or qc_test not in dict(test_option.choice_list()):
        return None
    rule = options.get("threshold_rule") or "lt"
    in_use = option_hooks.provider("threshold_in_use")
    threshold = float(in_use(qc_test, qc_threshold) if in_use else qc_threshold)
    per_hit, total = min(bad_pairs_per_hit), sum(bad_pairs_per_hit)
    choices = test_option.choice_list()
    alternatives = tuple(value for value, _ in choices
                         if value != qc_test and (min_pairs(value, threshold, rule) or total + 1) <= total)
    return ReliabilityCapacity(
        test=qc_test, label=dict(choices).get(qc_test, qc_test), threshold=threshold, rule=rule,
        hits=len(bad_pairs_per_hit), pairs_per_hit=per_hit, max_pairs=total,
        min_pairs=min_pairs(qc_test, threshold, rule),
        pooled=in_study and options.get("reliability_scope") != "campaign", alternatives=alternatives,
        drop=lambda pairs: critical_drop(qc_test, threshold, rule, pairs),
    )


def bad_pairs_per_hit(plans: list[list[ItemPlan]]) -> list[int]:
    return [sum(item.item_type == "bad_ref" for item in plan) for plan in plans]

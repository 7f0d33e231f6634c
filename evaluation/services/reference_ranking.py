"""A campaign's reference ranking (experts' ranks or a metric's scores per system), against which the results
report Spearman's rho (docs/methods.md §8.5). One set of rules for the API and the admin."""
from __future__ import annotations

import math

from annotation.models import Campaign

KINDS = ("score", "rank")
LIMIT = 1e12


def problems(campaign: Campaign, kind: str, values: dict) -> list[str]:
    """Why `values` can't be the campaign's reference ranking; empty when it can."""
    found = []
    if kind not in KINDS:
        found.append(f"kind must be one of {', '.join(KINDS)}")
    systems = set(campaign.systems.values_list("name", flat=True))
    unknown = sorted(set(values) - systems)
    if unknown:
        found.append(f"not a system of this campaign: {unknown[0][:200]}")
    bad = [name for name, value in values.items()
           if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value)
           or abs(value) > LIMIT]
    if bad:
        found.append(f"the value of {bad[0][:200]} must be a number between -{LIMIT:g} and {LIMIT:g}")
    if len(values) < 3:
        found.append("name at least three systems (Spearman's rho needs them)")
    return found


def parse_lines(text: str) -> tuple[dict[str, float], list[str]]:
    """`system<TAB or spaces>number` per line (the number last, so names may hold spaces)."""
    values, errors = {}, []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        name, _, value = line.strip().rpartition("\t") if "\t" in line else line.strip().rpartition(" ")
        try:
            values[name.strip()] = float(value)
        except ValueError:
            errors.append(f"line {number}: write the system, then a tab or a space, then a number")
    return values, errors


def store(campaign: Campaign, kind: str | None, values: dict | None) -> None:
    """Set (or, with None, remove) the reference ranking; the caller queues a recompute."""
    options = dict(campaign.options or {})
    if values is None:
        options.pop("reference_kind", None)
        options.pop("reference_ranking", None)
    else:
        options.update(reference_kind=kind, reference_ranking=values)
    Campaign.objects.filter(pk=campaign.pk).update(options=options)
    campaign.options = options

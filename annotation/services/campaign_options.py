"""The statistics options of a stored campaign (docs/api.md#analysis-options): set at a judgment import and
changed afterwards (`PATCH /api/campaigns/<slug>/`, the admin), from the protocol's one declaration
(`Protocol.analysis_options`). A change names every bad option and changes nothing, or is saved whole."""
from __future__ import annotations

from collections.abc import Mapping

from django.db import transaction

from ..protocols.options import ParsedOptions, defaulted, is_blank


def _path(option) -> tuple[str, ...]:
    path = option.key or option.name
    return (path,) if isinstance(path, str) else tuple(path)


def stored_values(campaign) -> dict:
    """The analysis options the campaign holds now, by option name (those it never stored are left out)."""
    values: dict = {}
    for option in campaign.protocol_spec.analysis_options():
        if option.target == "campaign":
            value = getattr(campaign, option.key or option.name, None)
        else:
            value = campaign.options or {}
            for part in _path(option):
                value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            values[option.name] = value
    return values


def parse_change(campaign, given: Mapping[str, object]) -> ParsedOptions:
    """The campaign's analysis options with `given` applied; raises `OptionError` naming each bad option. Stored
    values that only followed from another (a preset's test) follow the new values, as at import."""
    spec = campaign.protocol_spec
    current = stored_values(campaign)
    if given:
        for name in defaulted(spec.name, spec.analysis_options(), current) - set(given):
            current.pop(name, None)
    current.update(given)
    return spec.parse_analysis_options({k: v for k, v in current.items() if not is_blank(v) or k in given})


def apply_options(campaign, parsed: ParsedOptions) -> list[str]:
    """Write `parsed` (from `parse_change` or `Protocol.parse_analysis_options`) into the campaign; an option now
    without a value leaves the `options` JSON. Answers the names of the options whose stored value changed."""
    before = stored_values(campaign)
    options = dict(campaign.options or {})
    fields = []
    for option in campaign.protocol_spec.analysis_options():
        path = _path(option)
        if option.target == "campaign":
            key = option.key or option.name
            if key in parsed.campaign_fields:
                setattr(campaign, key, parsed.campaign_fields[key])
                fields.append(key)
            continue
        value = parsed.options
        for part in path:
            value = value.get(part) if isinstance(value, dict) else None
        node = options
        for part in path[:-1]:
            node = node.setdefault(part, {})
        if value is None:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
    campaign.options = options
    with transaction.atomic():
        campaign.save(update_fields=[*fields, "options"])
    after = stored_values(campaign)
    return sorted(name for name in set(before) | set(after) if before.get(name) != after.get(name))

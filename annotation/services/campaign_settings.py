"""A campaign's settings as a small JSON file (docs/api.md#settings-file): exported from a stored campaign,
accepted next to the data at import by `manage.py import_campaign --settings-file`, `POST /api/campaigns/`
(field `settings`) and the admin's import form, so that the same data with the file gives the same campaign.

The file holds the protocol and the value of every import option the campaign stored (its effective
settings: the defaults it was given are written out too). At import the file's values take the place of the
defaults and options given beside it win over the file's: the file's values that only followed from another
(a preset's test, threshold, rule, scope) then follow the options given, as if chosen directly.
`Protocol.parse_options` validates them all, as if they had been typed in.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from ..protocols import UnknownProtocol, get_protocol
from ..protocols.options import defaulted, is_blank

FORMAT = "mteval-campaign-settings"
VERSION = 1
#: A settings file is a few kilobytes; anything much larger is not one.
MAX_BYTES = 256 * 1024


class SettingsFileError(ValueError):
    """A settings file that cannot be used; the message says why (shown next to the `settings` field)."""


@dataclass(frozen=True)
class CampaignSettings:
    protocol: str
    options: dict


def _plain(value):
    """A stored value as JSON writes it (amounts as strings, which keep their digits)."""
    return str(value) if isinstance(value, Decimal) else value


def export_settings(campaign) -> dict:
    """The campaign's effective import settings: every option its protocol takes that the campaign stored."""
    values: dict = {}
    stored_options = campaign.options or {}
    for option in campaign.protocol_spec.option_fields():
        if option.name == "publish":
            values["publish"] = campaign.status == campaign.Status.ACTIVE
            continue
        if option.name == "study":
            if campaign.study_id is not None:
                values["study"] = campaign.study.name
            continue
        if option.target == "campaign":
            value = getattr(campaign, option.key or option.name, None)
        else:
            path = option.key or option.name
            value = stored_options
            for part in (path,) if isinstance(path, str) else path:
                value = value.get(part) if isinstance(value, dict) else None
        if value is not None:
            values[option.name] = _plain(value)
    return {"format": FORMAT, "version": VERSION, "protocol": campaign.protocol, "options": values}


def read_settings(handle) -> CampaignSettings:
    """Parse a settings file (an open binary file, an upload, or bytes); raises `SettingsFileError`."""
    data = handle if isinstance(handle, (bytes, str)) else handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise SettingsFileError(f"the settings file is larger than {MAX_BYTES // 1024} KB; it is not one")
    try:
        body = json.loads(data)
    except (UnicodeDecodeError, ValueError) as exc:
        raise SettingsFileError(f"the settings file is not JSON ({exc})") from None
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise SettingsFileError(f'the settings file must be a JSON object with "format": "{FORMAT}"')
    if body.get("version") != VERSION:
        raise SettingsFileError(f"the settings file's version must be {VERSION}")
    protocol, options = body.get("protocol"), body.get("options", {})
    if not isinstance(protocol, str) or not isinstance(options, dict):
        raise SettingsFileError('the settings file needs "protocol" (a name) and "options" (an object)')
    try:
        spec = get_protocol(protocol)
    except UnknownProtocol as exc:
        raise SettingsFileError(f"the settings file's protocol: {exc}") from None
    if spec.stage_only:
        raise SettingsFileError(f"the settings file is for {protocol!r}, a later stage, which is not imported")
    return CampaignSettings(protocol, options)


def combine(protocol: str | None, given: Mapping[str, object], settings: CampaignSettings | None
            ) -> tuple[str | None, dict]:
    """The protocol and raw option values of an import: the settings file's values, then the options given
    beside it (non-blank ones win). A protocol given beside the file must be the file's."""
    if settings is None:
        return protocol, dict(given)
    if protocol and protocol != settings.protocol:
        raise SettingsFileError(f"the settings file is for protocol {settings.protocol!r}, not {protocol!r}")
    given = {name: value for name, value in given.items() if not is_blank(value)}
    raw = dict(settings.options)
    if given:  # the file's values that only followed from others (a preset's test) follow the options given
        spec = get_protocol(settings.protocol)
        for name in defaulted(spec.name, spec.option_fields(), raw) - set(given):
            del raw[name]
    raw.update(given)
    return settings.protocol, raw

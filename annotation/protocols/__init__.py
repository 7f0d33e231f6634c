"""The protocol registry: one package per protocol family says how its HITs are built,
what its screen shows, what a judgment holds and which statistics apply.

The registry holds what `settings.MTEVAL_PROTOCOLS` names (dotted paths to protocol objects or
lists of them, e.g. "annotation.protocols.ranking.PROTOCOLS"), imported the first time it is
read. This module imports none of the protocol packages, so `annotation.models` may import it
(`Campaign.protocol_spec`) without importing a protocol. Views, the importer and the exporter
ask `get_protocol(campaign.protocol)`; nothing outside this package branches on protocol names.
"""
from config.registry import SettingRegistry

from . import options as _options
from .base import JudgmentError, Protocol, UnknownProtocol

_REGISTRY: SettingRegistry[Protocol] = SettingRegistry("protocol", "MTEVAL_PROTOCOLS", UnknownProtocol)
register = _REGISTRY.register
get_protocol = _REGISTRY.get_registered
all_protocols = _REGISTRY.all


def protocol_choices() -> list[tuple[str, str]]:
    """Every registered protocol (a campaign's protocol may be a later stage's)."""
    return [(p.name, p.label) for p in _REGISTRY.values()]


def importable_protocol_choices() -> list[tuple[str, str]]:
    """The protocols an import may name: later stages are created by their first stage's import."""
    return [(p.name, p.label) for p in _REGISTRY.values() if not p.stage_only]


def _default_redundancy(values: dict):
    try:
        return get_protocol(values.get("_protocol", "")).default_redundancy
    except UnknownProtocol:
        return 1


_options.set_default("redundancy", _default_redundancy)

__all__ = ["JudgmentError", "Protocol", "UnknownProtocol", "all_protocols", "get_protocol",
           "importable_protocol_choices", "protocol_choices", "register"]

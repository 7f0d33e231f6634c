"""The protocol registry: one package per protocol family says how its HITs are built,
what its screen shows, what a judgment holds and which statistics apply.

The registry holds what `settings.MTEVAL_PROTOCOLS` names (dotted paths to protocol objects or
lists of them, e.g. "annotation.protocols.ranking.PROTOCOLS"), imported the first time it is
read. This module imports none of the protocol packages, so `annotation.models` may import it
(`Campaign.protocol_spec`) without importing a protocol. Views, the importer and the exporter
ask `get_protocol(campaign.protocol)`; nothing outside this package branches on protocol names.
"""
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from config.registry import SettingRegistry

from . import options as _options
from .base import JudgmentError, Protocol, UnknownProtocol

_REGISTRY: SettingRegistry[Protocol] = SettingRegistry("protocol", "MTEVAL_PROTOCOLS", UnknownProtocol)
register = _REGISTRY.register
get_protocol = _REGISTRY.get_registered
all_protocols = _REGISTRY.all
#: `derived(key, compute)`: what `compute()` makes of the registered protocols, kept until the registry changes.
derived = _REGISTRY.derived


def protocol_choices() -> list[tuple[str, str]]:
    """Every registered protocol (a campaign's protocol may be a later stage's)."""
    return [(p.name, p.label) for p in _REGISTRY.values()]


def importable_protocol_choices() -> list[tuple[str, str]]:
    """The protocols an import may name: later stages are created by their first stage's import."""
    return [(p.name, p.label) for p in _REGISTRY.values() if not p.stage_only]


def declared_objects(attribute: str, kind: type, label: str) -> dict:
    """What the registered protocols declare by dotted path in `attribute` (e.g. their judgment formats), as
    name -> object, in the order first declared (settings.MTEVAL_PROTOCOLS). A path that names no `kind`, or one name
    declared as two different objects, is a configuration error naming the protocol."""
    found: dict = {}
    for protocol in _REGISTRY.values():
        for path in getattr(protocol, attribute):
            try:
                item = import_string(path)
            except ImportError as exc:
                raise ImproperlyConfigured(f"protocol {protocol.name!r}: cannot import {label} {path!r}: "
                                           f"{exc}") from exc
            if not isinstance(item, kind):
                raise ImproperlyConfigured(f"protocol {protocol.name!r}: {path!r} is not a {kind.__name__}")
            if found.setdefault(item.name, item) is not item:
                raise ImproperlyConfigured(f"{label} {item.name!r} is declared twice, differently "
                                           f"(protocol {protocol.name!r}: {path!r})")
    return found


def _default_redundancy(values: dict):
    try:
        return get_protocol(values.get("_protocol", "")).default_redundancy
    except UnknownProtocol:
        return 1


_options.set_default("redundancy", _default_redundancy)

__all__ = ["JudgmentError", "Protocol", "UnknownProtocol", "all_protocols", "declared_objects", "derived",
           "get_protocol", "importable_protocol_choices", "protocol_choices", "register"]

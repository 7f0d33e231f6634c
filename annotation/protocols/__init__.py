"""The protocol registry: one module per protocol family says how its HITs are built,
what its screen shows, what a judgment holds and which statistics apply.

Views, the importer and the exporter ask `get_protocol(campaign.protocol)`; nothing
outside this package branches on protocol names.
"""
from config.registry import Registry

from .base import JudgmentError, Protocol, UnknownProtocol

_REGISTRY: Registry[Protocol] = Registry("protocol", UnknownProtocol)
register = _REGISTRY.register
get_protocol = _REGISTRY.get_registered
all_protocols = _REGISTRY.all


def protocol_choices() -> list[tuple[str, str]]:
    """Every registered protocol (a campaign's protocol may be a later stage's)."""
    return [(p.name, p.label) for p in _REGISTRY.values()]


def importable_protocol_choices() -> list[tuple[str, str]]:
    """The protocols an import may name: later stages are created by their first stage's import."""
    return [(p.name, p.label) for p in _REGISTRY.values() if not p.stage_only]


# Registered in this order, which the protocol choices show.
from . import (  # noqa: E402,F401,I001  (register the protocols)
    direct_assessment,
    ranking,
    error_spans,
    pairwise,
    post_edit,
    reading_comprehension,
    reference_translation,
)
from . import options as _options  # noqa: E402


def _default_redundancy(values: dict):
    try:
        return get_protocol(values.get("_protocol", "")).default_redundancy
    except UnknownProtocol:
        return 1


_options.set_default("redundancy", _default_redundancy)

__all__ = ["JudgmentError", "Protocol", "UnknownProtocol", "all_protocols", "get_protocol",
           "importable_protocol_choices", "protocol_choices",
           "register"]

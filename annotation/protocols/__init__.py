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
    return [(p.name, p.label) for p in _REGISTRY.values()]


from . import direct_assessment, error_spans, pairwise, ranking  # noqa: E402,F401  (register the protocols)

__all__ = ["JudgmentError", "Protocol", "UnknownProtocol", "all_protocols", "get_protocol", "protocol_choices",
           "register"]

"""The protocol registry: one module per protocol family says how its HITs are built,
what its screen shows, what a judgment holds and which statistics apply.

Views, the importer and the exporter ask `get_protocol(campaign.protocol)`; nothing
outside this package branches on protocol names.
"""
from .base import JudgmentError, Protocol, UnknownProtocol

_REGISTRY: dict[str, Protocol] = {}


def register(protocol: Protocol) -> Protocol:
    if protocol.name in _REGISTRY:
        raise ValueError(f"protocol {protocol.name!r} registered twice")
    _REGISTRY[protocol.name] = protocol
    return protocol


def get_protocol(name: str) -> Protocol:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownProtocol(f"unknown protocol {name!r}; one of: {', '.join(_REGISTRY)}") from None


def all_protocols() -> list[Protocol]:
    return list(_REGISTRY.values())


def protocol_choices() -> list[tuple[str, str]]:
    return [(p.name, p.label) for p in _REGISTRY.values()]


from . import direct_assessment, pairwise  # noqa: E402,F401  (register the protocols)

__all__ = ["JudgmentError", "Protocol", "UnknownProtocol", "all_protocols", "get_protocol", "protocol_choices",
           "register"]

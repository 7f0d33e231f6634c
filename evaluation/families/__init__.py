"""The result families: one package per kind of result, from statistics to page, API, CSV and admin.

A protocol (annotation/protocols/) names its family; the family says how that protocol's
judgments are analysed, which tables it stores, what the API answers, which section the
results page shows, which CSV and LaTeX tables it offers and what the admin displays.
Which families exist is a setting, `MTEVAL_RESULT_FAMILIES` (dotted paths to family objects,
read by `evaluation.registry.FAMILIES`); no family package registers itself, and none imports another
(shared pieces live in `evaluation/families/common/`). Views, tasks and the admin ask
`family_of(campaign)`; nothing outside this package branches on a family or protocol name.
"""
from annotation.protocols import UnknownProtocol

from ..registry import FAMILIES as _REGISTRY
from .base import TOO_LITTLE_DATA, BadQuery, Family, NoFamily, NotEnoughData, Table

register = _REGISTRY.register  # a test's own family; `override_settings(MTEVAL_RESULT_FAMILIES=...)` also works
unregister = _REGISTRY.unregister
all_families = _REGISTRY.all
NO_FAMILY = NoFamily()


def get_family(name: str) -> Family:
    """The family registered under `name`, or the empty family (no results) for an unknown name."""
    return _REGISTRY.get(name, NO_FAMILY)


def family_of(campaign) -> Family:
    """The family of the campaign's protocol; the empty family when the protocol is no longer registered."""
    try:
        return get_family(campaign.protocol_spec.family)
    except UnknownProtocol:
        return NO_FAMILY


def all_endpoints() -> set[str]:
    """Every family-specific API endpoint name, for the API's error messages."""
    return {name for family in _REGISTRY.values() for name in family.endpoints}


__all__ = ["TOO_LITTLE_DATA", "BadQuery", "Family", "NotEnoughData", "Table", "all_endpoints", "all_families",
           "family_of", "get_family", "register", "unregister"]

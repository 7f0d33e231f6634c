"""The result-family registry: one module per kind of result, from statistics to page, API, CSV and admin.

A protocol (annotation/protocols/) names its family; the family says how that protocol's
judgments are analysed, which tables it stores, what the API answers, which section the
results page shows, which CSV and LaTeX tables it offers and what the admin displays.
Views, tasks and the admin ask `family_of(campaign)`; nothing outside this package branches
on a family or protocol name.
"""
from annotation.protocols import UnknownProtocol
from config.registry import Registry

from .base import TOO_LITTLE_DATA, BadQuery, Family, NoFamily, NotEnoughData, Table

_REGISTRY: Registry[Family] = Registry("result family")
register = _REGISTRY.register
unregister = _REGISTRY.unregister  # for tests that register their own
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


from . import (  # noqa: E402,F401  (register the families)
    acceptance,
    direct_assessment,
    error_spans,
    pairwise,
    post_edit,
    ranking,
    reading_comprehension,
    reference_translation,
)

__all__ = ["TOO_LITTLE_DATA", "BadQuery", "Family", "NotEnoughData", "Table", "all_endpoints", "all_families",
           "family_of", "get_family", "register", "unregister"]

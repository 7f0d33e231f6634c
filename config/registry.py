"""A named registry: what the protocol, result-family and reliability-test registries share.

Each registry is a dict from name to a registered object with a `name`; registering a name
twice is a programming error, and looking up an unknown name raises the registry's own error
listing the names it knows.
"""
from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Registry(dict, Generic[T]):
    def __init__(self, kind: str, unknown: type[Exception] = KeyError):
        super().__init__()
        self.kind = kind
        self.unknown = unknown

    def register(self, item: T) -> T:
        if item.name in self:
            raise ValueError(f"{self.kind} {item.name!r} registered twice")
        self[item.name] = item
        return item

    def unregister(self, name: str) -> None:
        self.pop(name, None)

    def get_registered(self, name: str) -> T:
        try:
            return self[name]
        except KeyError:
            raise self.unknown(f"unknown {self.kind} {name!r}; one of: {', '.join(self)}") from None

    def all(self) -> list[T]:
        return list(self.values())

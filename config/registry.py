"""Named registries: what the protocol, result-family, preset and reliability-test registries share.

Each registry maps a name to a registered object with a `name`; registering a name twice is a
programming error, and looking up an unknown name raises the registry's own error listing the
names it knows.

`SettingRegistry` is filled from a setting of dotted paths, as Django chooses its session engine
and authentication backends: the registry imports what the setting names the first time it is
read (with `import_string`, so that the module holding the registry imports none of the modules
it lists), and reloads when the setting changes (`override_settings` in a test). A deployment
adds a protocol or a result family that lives in another installed package by adding its path to
the setting; nothing in this project is edited (docs/architecture.md).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

from django.core.signals import setting_changed
from django.utils.module_loading import import_string

T = TypeVar("T")


class Registry(dict, Generic[T]):
    def __init__(self, kind: str, unknown: type[Exception] = KeyError):
        super().__init__()
        self.kind = kind
        self.unknown = unknown
        self._derived: dict[str, object] = {}

    def register(self, item: T) -> T:
        if item.name in self:
            raise ValueError(f"{self.kind} {item.name!r} registered twice")
        dict.__setitem__(self, item.name, item)
        self._derived.clear()
        return item

    def unregister(self, name: str) -> None:
        self.pop(name, None)
        self._derived.clear()

    def derived(self, key: str, compute: Callable[[], object]):
        """What `compute()` makes of the registered objects, computed once and kept until the registry changes
        (a registration, or the setting changing): for what a request would otherwise rebuild from every entry."""
        self._read()
        try:
            return self._derived[key]
        except KeyError:
            value = self._derived[key] = compute()
            return value

    def _read(self):
        return self

    def get_registered(self, name: str) -> T:
        try:
            return self[name]
        except KeyError:
            raise self.unknown(f"unknown {self.kind} {name!r}; one of: {', '.join(self)}") from None

    def all(self) -> list[T]:
        return list(self.values())


class SettingRegistry(Registry[T]):
    """A registry holding what `settings.<setting>` names, in the setting's order.

    Each entry of the setting is the dotted path of one registered object, or of a list or tuple of
    them (a package that ships several variants, e.g. `annotation.protocols.ranking.PROTOCOLS`).
    An entry that cannot be imported, or names something without a `name`, raises
    `ImproperlyConfigured` naming the entry. `register` still adds an object by hand (a test's own);
    such objects are dropped with the rest when the setting changes.
    """

    def __init__(self, kind: str, setting: str, unknown: type[Exception] = KeyError):
        super().__init__(kind, unknown)
        self.setting = setting
        self._loaded = False
        setting_changed.connect(self._setting_changed, weak=False)

    def _setting_changed(self, setting: str, **kwargs) -> None:
        if setting == self.setting:
            dict.clear(self)
            self._derived.clear()
            self._loaded = False

    def load(self) -> None:
        """Import what the setting names (once; again after the setting changes)."""
        if self._loaded:
            return
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        self._loaded = True  # set first: a registered object's module may read the registry while it imports
        loaded: list = []
        for path in getattr(settings, self.setting):
            try:
                found = import_string(path)
            except ImportError as exc:
                self._loaded = False
                raise ImproperlyConfigured(f"{self.setting}: cannot import {path!r}: {exc}") from exc
            for item in (found if isinstance(found, (list, tuple)) else [found]):
                if not isinstance(getattr(item, "name", None), str):
                    self._loaded = False
                    raise ImproperlyConfigured(f"{self.setting}: {path!r} names no {self.kind} (nothing with a name)")
                loaded.append(item)
        by_hand = dict(self)
        dict.clear(self)
        self._derived.clear()
        for item in loaded:
            self.register(item)
        for item in by_hand.values():
            if item.name not in self:
                self.register(item)

    def _read(self):
        self.load()
        return self

    # Every read goes through `load` first.
    def __getitem__(self, name):
        return dict.__getitem__(self._read(), name)

    def __contains__(self, name) -> bool:
        return dict.__contains__(self._read(), name)

    def __iter__(self):
        return dict.__iter__(self._read())

    def __len__(self) -> int:
        return dict.__len__(self._read())

    def get(self, name, default=None):
        return dict.get(self._read(), name, default)

    def keys(self):
        return dict.keys(self._read())

    def values(self):
        return dict.values(self._read())

    def items(self):
        return dict.items(self._read())

    def register(self, item: T) -> T:
        self.load()
        return super().register(item)


class LiveMapping(Mapping):
    """A mapping computed afresh whenever it is read (e.g. from a registry filled from a setting), so that what a
    protocol added through the setting (or a test's `override_settings`) declares reaches every reader."""

    def __init__(self, compute: Callable[[], Mapping]):
        self._compute = compute

    def __getitem__(self, key):
        return self._compute()[key]

    def __iter__(self) -> Iterator:
        return iter(self._compute())

    def __len__(self) -> int:
        return len(self._compute())

"""Files that ship inside registered packages: a template loader and a staticfiles finder that look into the
folders `templates/` and `static/` beside each registered object's module (a protocol's strategy, a result family),
as Django's app-directories loader and finder do for apps. So a protocol or a family, this project's or one from
another installed Python package, ships its own screen or results section, and no shared setting or folder lists
it. Each app subclasses them with the registry it reads (docs/architecture.md)."""
from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder, searched_locations
from django.core.files.storage import FileSystemStorage
from django.template.loaders.filesystem import Loader as FilesystemLoader


def package_folders(registered: Iterable, kind: str) -> list[Path]:
    """The existing `kind` folders ("templates" or "static") beside the module that defines each `registered`
    object's class, each once, in the registry's order (the first one holding a name wins, as with apps)."""
    folders: list[Path] = []
    for item in registered:
        module = sys.modules[type(item).__module__]
        folder = Path(module.__file__).resolve().parent / kind
        if folder.is_dir() and folder not in folders:
            folders.append(folder)
    return folders


class RegisteredTemplateLoader(FilesystemLoader):
    """Templates in the registered objects' `templates/` folders; a subclass says which objects (`registered`)."""

    def registered(self) -> Iterable:
        raise NotImplementedError

    def get_dirs(self):
        return package_folders(self.registered(), "templates")


class RegisteredStaticFinder(BaseFinder):
    """Static files in the registered objects' `static/` folders (for `{% static %}`, collectstatic and WhiteNoise's
    finders in development); a subclass says which objects (`registered`). The registry is read at each call: an
    object registered later is found too."""

    def registered(self) -> Iterable:
        raise NotImplementedError

    def _storages(self) -> list[FileSystemStorage]:
        return [FileSystemStorage(location=str(folder)) for folder in package_folders(self.registered(), "static")]

    def find(self, path, find_all=False, **kwargs):
        if kwargs:  # Django 5.2 still accepts the old name `all` (RemovedInDjango61Warning)
            find_all = self._check_deprecated_find_param(find_all=find_all, **kwargs)
        matches = []
        for storage in self._storages():
            if storage.location not in searched_locations:
                searched_locations.append(storage.location)
            if storage.exists(path):
                if not find_all:
                    return storage.path(path)
                matches.append(storage.path(path))
        return matches

    def list(self, ignore_patterns):
        for storage in self._storages():
            for path in utils.get_files(storage, ignore_patterns):
                yield path, storage

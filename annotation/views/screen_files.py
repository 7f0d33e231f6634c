"""Where the screens' files are found: a template loader and a staticfiles finder that look into the folders
`templates/` and `static/` beside each registered protocol's module, as Django's app-directories loader and finder
do for apps. So a protocol package, this project's or another installed Python package's, ships its own screen
(annotation.protocols.base.Screen names files in them) and no shared setting or folder lists it."""
from __future__ import annotations

import sys
from pathlib import Path

from django.contrib.staticfiles import utils
from django.contrib.staticfiles.finders import BaseFinder, searched_locations
from django.core.files.storage import FileSystemStorage
from django.template.loaders.filesystem import Loader as FilesystemLoader

from ..protocols import all_protocols


def protocol_folders(kind: str) -> list[Path]:
    """The existing `kind` folders ("templates" or "static") beside the registered protocols' modules, each once, in
    the registry's order (the first one holding a name wins, as with apps)."""
    folders: list[Path] = []
    for protocol in all_protocols():
        module = sys.modules[type(protocol).__module__]
        folder = Path(module.__file__).resolve().parent / kind
        if folder.is_dir() and folder not in folders:
            folders.append(folder)
    return folders


class ProtocolTemplateLoader(FilesystemLoader):
    """Templates in the registered protocols' `templates/` folders."""

    def get_dirs(self):
        return protocol_folders("templates")


class ProtocolStaticFinder(BaseFinder):
    """Static files in the registered protocols' `static/` folders (for `{% static %}`, collectstatic and
    WhiteNoise's finders in development). The registry is read at each call: a protocol registered later is
    found too."""

    def _storages(self) -> list[FileSystemStorage]:
        return [FileSystemStorage(location=str(folder)) for folder in protocol_folders("static")]

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

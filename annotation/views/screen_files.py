"""Where the screens' files are found: the `templates/` and `static/` folders beside each registered protocol's
module (config/package_files.py). So a protocol package, this project's or another installed Python package's, ships
its own screen (annotation.protocols.base.Screen names files in them) and no shared setting or folder lists it."""
from __future__ import annotations

from config.package_files import RegisteredStaticFinder, RegisteredTemplateLoader

from ..protocols import all_protocols


class ProtocolTemplateLoader(RegisteredTemplateLoader):
    """Templates in the registered protocols' `templates/` folders."""

    def registered(self):
        return all_protocols()


class ProtocolStaticFinder(RegisteredStaticFinder):
    """Static files in the registered protocols' `static/` folders."""

    def registered(self):
        return all_protocols()

"""Where the result families' page sections are found: the `templates/` folder beside each registered family's
module (config/package_files.py), so a family package, this project's or another installed Python package's, ships
its own section of the results page and no shared folder lists it."""
from __future__ import annotations

from config.package_files import RegisteredTemplateLoader

from ..families import all_families


class FamilyTemplateLoader(RegisteredTemplateLoader):
    """Templates in the registered result families' `templates/` folders."""

    def registered(self):
        return all_families()

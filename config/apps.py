"""The project itself as an app, so that its system checks (config/checks.py) are registered."""
from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "config"
    label = "project"
    verbose_name = "Project configuration"

    def ready(self):
        from . import checks  # noqa: F401  (registers the checks)

"""Start-up checks for deployments.

With DEBUG off the static files are served by WhiteNoise's manifest storage, which names each file by
its hash from STATIC_ROOT/staticfiles.json, the manifest `collectstatic` writes. Without it every page
answers 500 ("Missing staticfiles manifest entry") and nothing says why. So a missing manifest is an
error, found

- by `manage.py check --deploy` (a deployment check, id `project.E001`), and
- at start-up by config/wsgi.py, which gunicorn and `manage.py runserver` load: the server stops with
  the message instead of serving pages that fail.

It is a deployment check rather than one every management command runs, so that commands which serve
no page (import_campaign, compute_results, Celery) keep working on a production configuration before
`collectstatic` has run. With DEBUG on (`make run`, the tests) the plain storage is used and nothing is
checked.
"""
from pathlib import Path

from django.contrib.staticfiles.storage import ManifestFilesMixin, staticfiles_storage
from django.core.checks import Error, register

MISSING_MANIFEST = "project.E001"


def static_manifest_errors() -> list[Error]:
    """An error when the configured static files storage needs a manifest and it is missing."""
    if not isinstance(staticfiles_storage, ManifestFilesMixin):
        return []
    manifest = staticfiles_storage.manifest_storage
    if manifest.exists(staticfiles_storage.manifest_name):
        return []
    path = Path(manifest.location) / staticfiles_storage.manifest_name
    return [Error(
        f"The static files manifest {path} is missing: with DEBUG off every page would answer 500 "
        "(\"Missing staticfiles manifest entry\").",
        hint="Run `python manage.py collectstatic --noinput` with the same settings before starting the "
             "server (the Docker image and docker-compose.yml do), or set DEBUG=1 for development.",
        id=MISSING_MANIFEST,
    )]


@register(deploy=True)
def check_static_manifest(app_configs=None, **kwargs):
    return static_manifest_errors()

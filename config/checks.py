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


MEDIA_SERVE_MODES = ("django", "x-accel-redirect", "x-sendfile", "signed-url")
BAD_MEDIA_SERVE = "project.E002"


@register()
def media_serving(app_configs=None, **kwargs) -> list[Error]:
    """MEDIA_SERVE must name a way of serving campaign media (docs/api.md §8.5) that the media storage offers:
    x-sendfile needs files on a local path, signed-url a storage that signs URLs (S3)."""
    from django.conf import settings

    mode = settings.MEDIA_SERVE
    backend = settings.STORAGES.get("media", {}).get("BACKEND", "")
    problem = None
    if mode not in MEDIA_SERVE_MODES:
        problem = f"MEDIA_SERVE is {mode!r}; it must be one of {', '.join(MEDIA_SERVE_MODES)}."
    elif mode == "signed-url" and backend.endswith("FileSystemStorage"):
        problem = "MEDIA_SERVE=signed-url needs a storage that signs URLs (MEDIA_STORAGE=s3)."
    elif mode in ("x-sendfile", "x-accel-redirect") and not backend.endswith("FileSystemStorage"):
        problem = f"MEDIA_SERVE={mode} needs the media on the web server's file system (MEDIA_STORAGE=filesystem)."
    return [Error(problem, hint="docs/api.md §8.5", id=BAD_MEDIA_SERVE)] if problem else []

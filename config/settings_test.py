"""Settings for the test suite: the project's settings with development defaults and fast hashing."""
import os

os.environ.setdefault("DEBUG", "1")

from .settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not shared-cache memory: threads and the live server then lock like production SQLite does.
    import tempfile

    DATABASES["default"]["TEST"] = {"NAME": os.path.join(tempfile.gettempdir(), f"mteval-test-{os.getpid()}.sqlite3")}  # noqa: F405

# Tests run tasks in-process unless a test starts a real worker; nothing recomputes behind a test's back.
CELERY_TASK_ALWAYS_EAGER = True
RESULTS_AUTO_RECOMPUTE = False

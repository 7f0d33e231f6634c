"""Settings for the test suite: the project's settings with development defaults and fast hashing."""
import os
import tempfile
import uuid

os.environ.setdefault("DEBUG", "1")
# Each test run (and the Celery worker it starts, which inherits the environment) gets its own
# cache keys and queue, so nothing left in Redis by another run can interfere.
# Under pytest-xdist every worker process is a run of its own (its own test database already, from pytest-django):
# the id the controller handed down gets the worker's name, so workers never share a queue or cache keys.
_run_id = os.environ.setdefault("TEST_RUN_ID", uuid.uuid4().hex[:12])
_xdist_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if _xdist_worker and not _run_id.endswith(f"-{_xdist_worker}"):
    os.environ["TEST_RUN_ID"] = f"{_run_id}-{_xdist_worker}"
    os.environ["CACHE_KEY_PREFIX"] = f"test-{os.environ['TEST_RUN_ID']}"
os.environ.setdefault("CACHE_KEY_PREFIX", f"test-{os.environ['TEST_RUN_ID']}")

from .settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

if DATABASES["default"]["ENGINE"].endswith("sqlite3"):  # noqa: F405
    # A file, not shared-cache memory: threads, the live server and a Celery worker process then
    # share it and lock like production SQLite does.
    DATABASES["default"]["TEST"] = {  # noqa: F405
        "NAME": os.path.join(tempfile.gettempdir(), f"mteval-test-{os.environ['TEST_RUN_ID']}.sqlite3")
    }

# Tests run tasks in-process unless a test starts a real worker; nothing recomputes behind a test's back.
CELERY_TASK_ALWAYS_EAGER = os.environ.get("TEST_CELERY_EAGER", "1") == "1"
CELERY_TASK_DEFAULT_QUEUE = f"test-{os.environ['TEST_RUN_ID']}"
RESULTS_AUTO_RECOMPUTE = False
# Bradley–Terry's bootstrap runs on every pairwise and ranking computation: few resamples, in one subtask (each
# reloads the battles; tests/test_bradley_terry_results.py splits them into shares).
BRADLEY_TERRY_RUNS = 20
BRADLEY_TERRY_RUNS_PER_TASK = 20
# The live reliability gate runs at once after a finished HIT's commit (production: a Celery task).
GATE_INLINE_WHEN_EAGER = True

# Crowd-entry protections (rate limits, open HITs per address) are off for the suite, whose simulated crowds
# all come from one address; tests/test_entry_identity.py turns each on where it is tested.
CROWD_ENTRY_RATE_PER_IP = None
CROWD_ENTRY_RATE_PER_CAMPAIGN = None
CROWD_MAX_OPEN_HITS_PER_IP = None
# Prolific calls (prolific/client.py) run at once in the caller when tasks run in-process, and back off briefly.
PROLIFIC_INLINE_WHEN_EAGER = True
PROLIFIC_BACKOFF_SECONDS = 0.01
PROLIFIC_TIMEOUT_SECONDS = 2.0
PROLIFIC_MAX_WAIT_SECONDS = 0.05  # the fake's Retry-After: 1 costs no second (tests/prolific/test_client.py raises it)

"""The Celery app for the fault tests' worker: the project's app, with every results run slowed down by
FAULT_SLEEP seconds (set in the worker's environment) so that a test can kill the worker mid-run."""
import os
import time

import django

from config.celery import app  # noqa: F401  (celery -A tests.fault_worker finds it here)

django.setup()

from evaluation import tasks  # noqa: E402  (needs the apps loaded)

_compute = tasks.compute_results


def _slow_compute(campaign):
    time.sleep(float(os.environ.get("FAULT_SLEEP", "0")))
    return _compute(campaign)


tasks.compute_results = _slow_compute

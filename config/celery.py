"""The Celery application; settings come from Django's (CELERY_ prefix).

`CatchUp` runs each time a worker's consumer (re)connects to the broker: it queues a run for every
stale campaign (results older than its judgments, or a requested compute not yet covered), so that
runs lost while the broker, the database or the worker was down are made up by themselves
(evaluation.tasks.catch_up_after_connect: it checks the worker's database connection first, and
tries again later while the database is unreachable).
"""
import logging
import os

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger(__name__)

app = Celery("mteval")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class CatchUp(bootsteps.StartStopStep):
    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, consumer):
        from evaluation.tasks import catch_up_after_connect

        try:
            queued = catch_up_after_connect()
        except Exception:  # never stop the consumer over it: the next reconnect, or new judgments, retry
            log.exception("catching up on stale results failed")
        else:
            if queued is not None:  # None: the database is unreachable, and a retry is scheduled
                log.info("catch-up: queued %d stale campaign(s)", queued)


app.steps["consumer"].add(CatchUp)

"""The Celery application; settings come from Django's (CELERY_ prefix).

`CatchUp` runs each time a worker's consumer (re)connects to the broker: it queues a run for every
campaign whose results are older than its judgments, so that runs lost while the broker or the
worker was down are made up by themselves (evaluation.tasks.catch_up).
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
        from evaluation.tasks import catch_up

        try:
            queued = catch_up()
        except Exception:  # the database may be restarting too: the next reconnect, or new judgments, retry
            log.exception("catching up on stale results failed")
        else:
            log.info("catch-up: queued %d stale campaign(s)", queued)


app.steps["consumer"].add(CatchUp)

"""The Celery application; settings come from Django's (CELERY_ prefix).

`CatchUp` runs each time a worker's consumer (re)connects to the broker: the catch-ups registered with
config/jobs.py (the results of every stale campaign, adaptive looks) queue what was lost while the broker, the
database or the worker was down (`jobs.catch_up_after_connect`: it checks the worker's database connection first,
and tries again later while the database is unreachable).

`GuardedTask` is every task's class: publishing from a web process gives up at once on a broker that failed a
moment ago, and reports every failure to queue as kombu's OperationalError (config/redis_guard.py); workers
never skip the broker (`worker_init` turns the guard off).
"""
import logging
import os

from celery import Celery, Task, bootsteps
from celery.signals import worker_init
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from . import redis_guard
from .jobs import catch_up_after_connect

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

log = logging.getLogger(__name__)


class GuardedTask(Task):
    def apply_async(self, args=None, kwargs=None, **options):
        """Queue the task; a broker or result store that cannot be reached raises OperationalError, within the
        socket timeouts and bounded retries of config/settings.py, or at once while the guard skips it."""
        if self.app.conf.task_always_eager or not redis_guard.enabled:
            return super().apply_async(args, kwargs, **options)
        key = redis_guard.server(self.app.conf.broker_url)
        if redis_guard.skipping(key):
            raise OperationalError(f"the task queue at {key} did not answer a moment ago; not waiting again")
        try:
            return super().apply_async(args, kwargs, **options)
        except (OperationalError, RedisError, RuntimeError) as exc:
            # RuntimeError: Celery's Redis result store gives up on its retries with one ("Retry limit exceeded").
            redis_guard.failed(key)
            if isinstance(exc, OperationalError):
                raise
            raise OperationalError(" ".join(f"{exc.__class__.__name__}: {exc}".split())) from exc


app = Celery("mteval", task_cls=GuardedTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class CatchUp(bootsteps.StartStopStep):
    requires = {"celery.worker.consumer.tasks:Tasks"}

    def start(self, consumer):
        try:
            catch_up_after_connect()  # logs what it queued, or that it tries again later
        except Exception:  # never stop the consumer over it: the next reconnect, or new judgments, retry
            log.exception("catching up on stale results failed")


app.steps["consumer"].add(CatchUp)


@worker_init.connect
def _workers_never_skip_redis(**kwargs):
    redis_guard.enabled = False

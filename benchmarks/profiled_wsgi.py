"""config.wsgi's application under cProfile, for the annotator benchmark only:

    BENCH_PROFILE=benchmarks/out/gunicorn.prof .venv/bin/python benchmarks/annotate.py --mode capacity \\
        --app benchmarks.profiled_wsgi:application

The first gunicorn worker to start claims the profile (one worker, so that the others serve at full speed);
it counts CPU time (time.process_time), not wall clock, so waiting for PostgreSQL is left out, starts after
BENCH_PROFILE_SKIP (100) requests, and writes its pstats file every 500 requests and at exit. Without
BENCH_PROFILE it is config.wsgi's application unchanged.
benchmarks/profile_report.py reads the file.
"""
import atexit
import cProfile
import json
import os
import time
from collections import Counter

from config.wsgi import application as django_application

_path = os.environ.get("BENCH_PROFILE", "")
#: Requests served before profiling starts: one-time costs (lazy imports such as redis, URL reversing's first
#: population) would otherwise weigh on a sample of a few hundred requests.
_skip = int(os.environ.get("BENCH_PROFILE_SKIP", "100"))
_profile: cProfile.Profile | None = None
_requests = 0
_methods: Counter = Counter()  # requests profiled, by method ("POST": the judgments)


def _claim() -> cProfile.Profile | None:
    """A profiler if this process is the first worker of its gunicorn to claim `_path` (a lock file beside it)."""
    try:
        os.close(os.open(f"{_path}.{os.getppid()}.lock", os.O_CREAT | os.O_EXCL | os.O_WRONLY))  # per gunicorn
    except FileExistsError:
        return None
    atexit.register(_dump)
    return cProfile.Profile(time.process_time)


def _dump() -> None:
    if _profile is not None:
        _profile.dump_stats(_path)
        with open(_path + ".json", "w") as handle:
            json.dump(dict(_methods), handle)


def application(environ, start_response):
    """Profile each request's handling (the response body included) in the claiming worker."""
    global _profile, _requests
    if not _path:
        return django_application(environ, start_response)
    if _profile is None and _requests == 0:
        _profile = _claim()
        _requests = 1
    if _profile is None:
        return django_application(environ, start_response)
    if _requests <= _skip:
        _requests += 1
        return django_application(environ, start_response)
    _methods[environ.get("REQUEST_METHOD", "")] += 1
    _profile.enable()
    try:
        return list(django_application(environ, start_response))
    finally:
        _profile.disable()
        _requests += 1
        if _requests % 500 == 0:
            _dump()

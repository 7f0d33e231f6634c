"""config.wsgi's application counting SQL statements per request, for the annotator benchmark only:

    BENCH_STATEMENTS=benchmarks/out/statements .venv/bin/python benchmarks/annotate.py \\
        --app benchmarks.counted_wsgi:application
    .venv/bin/python benchmarks/counted_wsgi.py benchmarks/out/statements

Every gunicorn worker counts the statements each request sends through Django's connection (PREPARE and
EXECUTE of judging_sql included), by kind of request (`GET /api/hit/`, `POST /api/hit/`, `GET /c/start/`,
`GET /hit/`), and writes `<BENCH_STATEMENTS>.<pid>.json` every 200 requests and at exit: how many requests
of each kind sent how many statements. Run as a script, it adds up the files of one prefix and prints the
distribution and mean per kind, so that two versions of the code can be compared on the benchmark's own
requests ("same number of statements per request"). A separate run: the count is not free, so the timed
runs use config.wsgi. Without BENCH_STATEMENTS it is config.wsgi's application unchanged.
"""
import atexit
import glob
import json
import os
import re
import sys
from collections import Counter, defaultdict

_path = os.environ.get("BENCH_STATEMENTS", "")
_counts: dict[str, Counter] = defaultdict(Counter)  # kind -> {statements per request: requests}
_requests = 0


def _kind(environ) -> str:
    """The request's method and route, without its token or slug."""
    path = environ.get("PATH_INFO", "")
    route = ("/api/hit/" if path.startswith("/api/hit/") else "/c/start/" if re.match(r"^/c/[^/]+/start/", path)
             else "/hit/" if path.startswith("/hit/") else "other")
    return f"{environ.get('REQUEST_METHOD', '')} {route}"


def _dump() -> None:
    with open(f"{_path}.{os.getpid()}.json", "w") as handle:
        json.dump({kind: dict(counts) for kind, counts in _counts.items()}, handle)


def _counting_application():
    from django.db import connection

    from config.wsgi import application as django_application

    atexit.register(_dump)

    def application(environ, start_response):
        """Serve the request (its body included) and count the statements it sent."""
        global _requests
        sent = [0]

        def count(execute, sql, params, many, context):
            sent[0] += 1
            return execute(sql, params, many, context)

        with connection.execute_wrapper(count):
            response = django_application(environ, start_response)
            try:
                body = list(response)
            finally:
                response.close()  # request_finished, as gunicorn would send it after the body
        _counts[_kind(environ)][sent[0]] += 1
        _requests += 1
        if _requests % 200 == 0:
            _dump()
        return body

    return application


if __name__ != "__main__":
    if _path:
        application = _counting_application()
    else:
        from config.wsgi import application  # noqa: F401


def summary(prefix: str) -> dict:
    """Requests by kind and statements per request, added up over the workers' files of `prefix`."""
    total: dict[str, Counter] = defaultdict(Counter)
    for name in glob.glob(f"{glob.escape(prefix)}.*.json"):
        with open(name) as handle:
            for kind, counts in json.load(handle).items():
                total[kind].update({int(k): v for k, v in counts.items()})
    return {kind: {"requests": sum(c.values()), "mean": round(sum(k * v for k, v in c.items()) / sum(c.values()), 3),
                   "distribution": dict(sorted(c.items()))} for kind, c in sorted(total.items())}


if __name__ == "__main__":
    print(json.dumps(summary(sys.argv[1]), indent=2))

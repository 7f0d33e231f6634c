#!/usr/bin/env python
"""Where a gunicorn worker's CPU goes, from the pstats file benchmarks/profiled_wsgi.py writes:

    .venv/bin/python benchmarks/profile_report.py benchmarks/out/gunicorn.prof [--judgments N] [--top 25]

Every function's own time (tottime, CPU seconds) goes to one bucket by where the function lives, so the
buckets add up to the whole: request handling, middleware, URL resolving, JSON, the database driver, the ORM,
the cache (Redis), our own code (annotation/, evaluation/, config/), the rest. With --judgments (the POSTs the
profiled worker answered), figures per judgment. Then the top functions by own time and by cumulative time.
"""
from __future__ import annotations

import argparse
import json
import os
import pstats

#: (bucket, substrings of the file path or builtin's name); the first that matches wins.
BUCKETS = [
    ("middleware", ("django/middleware/", "django/contrib/sessions/", "django/contrib/auth/",
                    "django/contrib/messages/", "/csp/", "whitenoise/", "config/middleware.py")),
    ("URL resolving", ("django/urls/",)),
    ("JSON encode/decode", ("json/", "_json", "rest_framework/renderers", "rest_framework/parsers")),
    ("DB driver (psycopg2)", ("psycopg2",)),
    ("ORM and DB layer (django/db)", ("django/db/",)),
    ("cache / broker (Redis, ratelimit, Celery)", ("redis/", "django_ratelimit/", "kombu/", "celery/",
                                                   "django/core/cache/", "config/cache.py", "socket")),
    ("request/response (django core, http)", ("django/core/handlers/", "django/http/", "django/core/signals",
                                              "django/dispatch/", "django/utils/", "django/conf/",
                                              "django/views/", "django/template/", "django/shortcuts")),
    ("DRF (views, requests, serializers)", ("rest_framework/",)),
    ("our code (annotation/, evaluation/, config/)", ("/annotation/", "/evaluation/", "/config/")),
    ("the profiler wrapper", ("profiled_wsgi",)),
]


def bucket_of(path: str, name: str) -> str:
    where = f"{path}:{name}"
    for bucket, needles in BUCKETS:
        if any(n in where for n in needles):
            return bucket
    return "other (stdlib, builtins)"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path")
    parser.add_argument("--judgments", type=int, default=0,
                        help="POSTs answered by the profiled worker (default: from the file's .json beside it)")
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args(argv)
    if not args.judgments and os.path.exists(args.path + ".json"):
        with open(args.path + ".json") as handle:
            methods = json.load(handle)
        print(f"requests profiled: {methods}")
        args.judgments = methods.get("POST", 0)
    stats = pstats.Stats(args.path)
    totals: dict[str, float] = {}
    for (path, _line, name), (_cc, _nc, tottime, _cum, _callers) in stats.stats.items():
        key = bucket_of(path, name)
        totals[key] = totals.get(key, 0.0) + tottime
    whole = sum(totals.values())
    per = f", ms per judgment ({args.judgments} judgments)" if args.judgments else ""
    print(f"CPU seconds profiled: {whole:.2f}{per}")
    for key, seconds in sorted(totals.items(), key=lambda kv: -kv[1]):
        extra = f"  {1000 * seconds / args.judgments:6.3f} ms" if args.judgments else ""
        print(f"  {key:<48} {seconds:8.2f} s  {100 * seconds / whole:5.1f} %{extra}")
    print(f"\nTop {args.top} by own time:")
    stats.sort_stats("tottime").print_stats(args.top)
    print(f"Top {args.top} by cumulative time:")
    stats.sort_stats("cumulative").print_stats(args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""gunicorn's settings for this project: `gunicorn -c config/gunicorn.conf.py config.wsgi` (Dockerfile,
docker-compose.yml). Each can be changed by environment variable or on the command line.

gthread workers with one thread each keep a client's (or a proxy's) HTTP connection open between
requests; gunicorn's sync workers close it after every response, so every annotator answer paid a new
TCP connection. Alternating on one machine, one answer per request cost 3.5 ms of server CPU with sync
workers and 2.5 ms with these (benchmarks/README.md, "Session 11"). One thread per worker keeps one
database connection per process (CONN_MAX_AGE, prepared statements) and no two requests of a process
compete for Python's lock; more threads cost more CPU per request there. An idle kept connection
holds no thread: it waits in the worker's poller until its next request or `keepalive` seconds.
"""
import os

bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY", "3"))
worker_class = "gthread"
threads = int(os.environ.get("GUNICORN_THREADS", "1"))
# Seconds an idle connection is kept. Behind a proxy that keeps upstream connections (nginx
# `keepalive` in its upstream block), set it above the proxy's own idle timeout.
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "30"))  # gunicorn's own default

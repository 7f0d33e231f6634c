"""Dump every output of a fixture campaign of every protocol, one file per request, so that two versions of the code
can be compared byte for byte (issue 24: a reshaping with no change of behaviour):

    python scripts/dump_outputs.py OUTDIR [--protocols fluency,ranking,...] [--hits N] [--no-migrations]
    diff -r dump-before dump-after

It makes its own fresh database (Django's test-database creation: a new SQLite file, or with DATABASE_URL a new
PostgreSQL database beside the one named, dropped at the end), runs Celery tasks in-process (config.settings_test:
no broker, eager tasks, inline gates, no crowd-entry limits), and drives the site only through its public surfaces:
management commands (createsuperuser, drf_create_token) and HTTP through django.test.Client. For each root protocol
(scripts/dump_fixture.py: every protocol; its later stages follow) it imports a campaign through `POST
/api/campaigns/`, lets simulated workers (careful ones and a random one, fixed seeds) do its HITs and those of each
stage, computes the results, sets a reference ranking and runs ranking stability where offered, and then writes:
every researcher-API GET of every campaign (detail, settings, workers, systems, tables and each table in each format,
every family endpoint docs/api.md lists, whether the family offers it or answers 400, gates, costs, approvals,
adaptive, reference ranking, the judgment export in every format), the campaign list, studies, `GET /api/`, the
OpenAPI schema (YAML and JSON), the results pages and their CSV and LaTeX downloads, the power page, the comparison
page, the admin's change page of each campaign, and the annotator's `GET /api/hit/<token>/` (first item and the
finished HIT) of one HIT of each protocol. `_index.tsv` lists every request with its status, content type and
Content-Disposition or Location.

Determinism: the wall clock is replaced by a virtual one (`django.utils.timezone.now`, from 2026-03-02 08:00 UTC,
moved on by the script: one second per request, and each worker's think time before an answer; rows stamped by
auto_now in one request a microsecond apart, to keep their order), so created_at, computed_at, finished_at, the
measured seconds per item and the progress tables are the same in every run. What is still random or measured is
normalised, and only that: HIT tokens, completion codes, the API token and cookie values (replaced by the values this
run saw); the random candidate keys of ranking, constituent and contrastive-ESA screens (numbered in the order first
seen, and an object keyed by them written in that order, since PostgreSQL's jsonb orders keys by their value); CSRF
form tokens; UUIDs (task and job ids); the microseconds of ISO times (the clock's ticks); and the time a run
measured (a stability run's `seconds` after `finished_at`, the results page's "took … s" of a results run). Two
runs on the same code are byte-identical, on SQLite and on PostgreSQL (tests/test_dump_outputs.py checks two
protocols).
"""
import argparse
import datetime
import json
import logging
import os
import random
import re
import sys
import tempfile
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts")]

import dump_fixture as fixture  # noqa: E402

FAMILY_ENDPOINTS = ("significance", "agreement", "calibration", "power", "stability", "pairwise", "head_to_head",
                    "gold", "combined", "spearman", "edits", "curve", "stages", "translators", "accepted",
                    "translations", "mt", "questions", "answers")
JUDGMENT_FORMATS = ("csv", "json", "mqm-tsv", "esa-jsonl")
EXTENSIONS = {"application/json": "json", "text/csv": "csv", "application/x-tex": "tex", "text/html": "html",
              "text/tab-separated-values": "tsv", "application/x-ndjson": "jsonl",
              "application/vnd.oai.openapi": "yaml"}
PASSWORD = "dump-outputs-pw"


class Clock:
    """The virtual wall clock: `now()` moves only when the script says, except that each row stamped by a field's
    auto_now(_add) gets one microsecond more than the row before it, so that rows made in one request are ordered
    by time as they were made (on PostgreSQL rows tied on the ordering column come back in any order)."""

    def __init__(self):
        self.at = datetime.datetime(2026, 3, 2, 8, 0, tzinfo=datetime.UTC)
        self.ticks = 0

    def now(self):
        if sys._getframe(1).f_code.co_name == "pre_save":  # DateTimeField/DateField's auto_now, auto_now_add
            self.ticks += 1
            return self.at + datetime.timedelta(microseconds=self.ticks)
        return self.at

    def advance(self, seconds: float):
        self.at += datetime.timedelta(seconds=seconds)
        self.ticks = 0


CLOCK = Clock()


def configure() -> None:
    """Settings for the dump, read when Django starts: before any project module is imported."""
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings_test"
    os.environ["TEST_RUN_ID"] = f"dump{os.getpid()}"
    os.environ["TEST_CELERY_EAGER"] = "1"
    os.environ.pop("CELERY_BROKER_URL", None)  # tasks in-process, cache in memory
    os.environ.setdefault("DEBUG", "1")
    if not os.environ.get("DATABASE_URL"):
        os.environ["DATABASE_URL"] = f"sqlite:///{scratch()}/mteval-dump-{os.getpid()}.sqlite3"
    from django.utils import timezone

    timezone.now = CLOCK.now


def scratch() -> str:
    """Where a SQLite database goes: memory-backed /dev/shm where there is one (no fsync to wait for)."""
    return "/dev/shm" if os.access("/dev/shm", os.W_OK) else tempfile.gettempdir()


#: A flat JSON object (also doubled-quoted, inside a CSV cell) keyed by candidate keys only: its order comes from the
#: random keys (PostgreSQL's jsonb sorts keys), so it is written in the order the keys were first seen.
_KEYED_ENTRY = r'(?:""|")<key-\d+>(?:""|"): ?[^,{}\[\]]*'
KEYED_OBJECT = re.compile(rf"\{{({_KEYED_ENTRY}(?:, ?{_KEYED_ENTRY})*)\}}")


def in_key_order(match) -> str:
    entries = re.split(r",\s?(?=\"+<key-)", match.group(1))
    separator = ", " if ", " in match.group(1) else ","
    return "{" + separator.join(sorted(entries, key=lambda e: int(re.search(r"<key-(\d+)>", e).group(1)))) + "}"


class Dump:
    """The clients, what this run saw that is volatile, and the files written."""

    def __init__(self, outdir: Path, api, browser, hits: int):
        self.outdir, self.api, self.browser, self.hits = outdir, api, browser, hits
        self.volatile: dict[str, str] = {}
        self.keys = 0
        self.files: dict[str, str] = {}  # written at the end, once every volatile value is known
        self.index: list[tuple[str, ...]] = []

    def forget(self, value: str | None, label: str) -> None:
        if value:
            self.volatile.setdefault(value, f"<{label}>")

    def learn(self, state: dict) -> None:
        """The random keys of the candidates an item shows, numbered in the order first seen."""
        for candidate in (state.get("item") or {}).get("candidates") or ():
            if candidate["key"] not in self.volatile:
                self.keys += 1
                self.forget(candidate["key"], f"key-{self.keys}")

    def normalise(self, text: str) -> str:
        """Each volatile value this run saw (a whole word: letters, digits, - and _), then UUIDs, CSRF form tokens
        and measured durations."""
        text = re.sub(r"[A-Za-z0-9_-]+", lambda m: self.volatile.get(m.group(0), m.group(0)), text)
        text = re.sub(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>", text)
        text = re.sub(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\.\d{1,6}", r"\1", text)  # the clock's microsecond ticks
        text = KEYED_OBJECT.sub(in_key_order, text)
        text = re.sub(r'(name="csrfmiddlewaretoken" value=")[^"]*', r"\1<csrf>", text)
        text = re.sub(r"(took )[0-9.]+( s\))", r"\1<seconds>\2", text)
        text = re.sub(r'("finished_at": ?"[^"]*", ?"seconds": ?)[-0-9.eE+]+', r'\1"<seconds>"', text)
        return text

    def request(self, client, method: str, path: str, data=None, name: str | None = None, **extra):
        """One request, its answer written to OUTDIR/`name` (the path's, by default) and listed in the index."""
        CLOCK.advance(1)
        response = getattr(client, method)(path, data, **extra)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        kind = response.get("Content-Type", "").split(";")[0]
        name = name or (path.strip("/").replace("/", "~") or "root")
        target = f"{name}.{EXTENSIONS.get(kind, 'txt')}"
        assert target not in self.files, f"{target} written twice"
        self.files[target] = body.decode("utf-8", "surrogateescape")
        where = response.get("Location") or response.get("Content-Disposition") or ""
        self.index.append((target, method.upper(), path, str(response.status_code), kind, where))
        return response, body

    def write(self) -> int:
        """Write every answer, normalised, and the index; how many files."""
        for name, text in self.files.items():
            target = self.outdir / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(self.normalise(text), "utf-8", "surrogateescape")
        lines = [self.normalise("\t".join(row)) for row in self.index]
        (self.outdir / "_index.tsv").write_text("\n".join(lines) + "\n", "utf-8")
        return len(self.files) + 1

    def get(self, path: str, params: dict | None = None, group: str = "", client=None, **extra):
        query = f"?{urlencode(params)}" if params else ""
        base = path.strip("/").replace("/", "~")
        name = f"{group}/{base}{'@' + urlencode(params).replace('&', '@') if params else ''}"
        return self.request(client or self.api, "get", path + query, name=name, **extra)


def work(dump: Dump, slug: str, oracle, group: str, workers=fixture.WORKERS) -> None:
    """Each simulated worker takes up to `dump.hits` HITs of the campaign and answers every item."""
    from django.test import Client

    first = True
    for worker, noise in workers:
        client = Client()
        for h in range(dump.hits):
            CLOCK.advance(1)
            entry = client.get(f"/c/{slug}/start/", {"worker_id": worker})
            if entry.status_code != 302:
                break
            token = entry["Location"].rstrip("/").split("/")[-1]
            dump.forget(token, "hit-token")
            for value in client.cookies.values():
                dump.forget(value.value, "cookie")
            if first:
                state = json.loads(dump.request(client, "get", f"/api/hit/{token}/", name=f"{group}/hit-first-item")[1])
            else:
                state = client.get(f"/api/hit/{token}/").json()
            if state.get("done"):
                break
            rng = random.Random(f"{slug}:{worker}:{h}")
            while not state.get("done"):
                dump.learn(state)
                CLOCK.advance(rng.randint(4, 40))  # the worker's think time: the item's seconds
                body = {"item": state["item"]["id"], **fixture.answer(state["item"], oracle, rng, noise, worker)}
                response = client.post(f"/api/hit/{token}/", json.dumps(body), content_type="application/json")
                assert response.status_code == 201, (slug, worker, body, response.content[:300])
                state = response.json()
            dump.forget(state.get("completion_code"), "completion-code")
            if first:
                dump.request(client, "get", f"/api/hit/{token}/", name=f"{group}/hit-finished")
                first = False
        for value in client.cookies.values():
            dump.forget(value.value, "cookie")


def import_campaign(dump: Dump, protocol: str) -> tuple[str, list[str], object]:
    """Import the protocol's fixture campaign through the API, let the workers do it and every stage after it; the
    slugs of the task's campaigns, first stage first."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    systems, options = fixture.ROOTS[protocol]
    data = {"name": f"dump {protocol}", "protocol": protocol, "seed": 11, "payment_per_hit": "0.50", **options,
            "file": SimpleUploadedFile(f"{protocol}.jsonl", fixture.campaign_file(systems))}
    response, body = dump.request(dump.api, "post", "/api/campaigns/", data, name=f"{protocol}/import")
    assert response.status_code == 201, body[:500]
    slug = json.loads(body)["campaign"]
    oracle = fixture.Oracle(fixture.campaign_lines(systems))
    work(dump, slug, oracle, f"{protocol}/{protocol}")
    stages = json.loads(dump.api.get(f"/api/campaigns/{slug}/").content)["stages"] or []
    slugs = [slug] + [s["campaign"] for s in stages if s["campaign"] != slug]
    for k, stage in enumerate(slugs):
        if k:
            protocol_of = json.loads(dump.api.get(f"/api/campaigns/{stage}/").content)["protocol"]
            work(dump, stage, oracle, f"{protocol}/{protocol_of}", fixture.stage_workers(k))
        if len(slugs) > 1:
            dump.request(dump.api, "post", f"/api/campaigns/{stage}/build-stages/", name=f"{protocol}/build-{k}")
    return slug, slugs, oracle


def analyse(dump: Dump, protocol: str, slugs: list[str]) -> None:
    """Compute the results of every campaign of the task, a reference ranking where the family takes one, and ranking
    stability where it is offered."""
    for k, slug in enumerate(slugs):
        dump.request(dump.api, "post", f"/api/campaigns/{slug}/compute/", name=f"{protocol}/compute-{k}")
    systems = list(fixture.SYSTEMS)[:fixture.ROOTS[protocol][0]]
    ranking = {"kind": "rank", "values": {name: k + 1 for k, name in enumerate(systems)}}
    dump.request(dump.api, "post", f"/api/campaigns/{slugs[0]}/reference-ranking/", json.dumps(ranking),
                 name=f"{protocol}/reference-ranking", content_type="application/json")
    for workers in ("reliable", "all"):
        dump.request(dump.api, "post", f"/api/campaigns/{slugs[0]}/stability/",
                     json.dumps({"workers": workers, "resamples": 200, "seed": 5}),
                     name=f"{protocol}/stability-{workers}", content_type="application/json")


def dump_campaign(dump: Dump, protocol: str, slug: str, others: dict) -> None:
    """Every GET of one campaign: the researcher API, the results pages and downloads, the admin's change page."""
    group = f"{protocol}/{slug}"
    api = f"/api/campaigns/{slug}/"
    for path in ("", "settings/", "workers/", "gates/", "costs/", "adaptive/", "reference-ranking/", "tables/"):
        dump.get(api + path, group=group)
    for workers in ("reliable", "all"):
        dump.get(api + "systems/", {"workers": workers}, group=group)
    for fmt in ("json", "csv"):
        dump.get(api + "approvals/", {"format": fmt}, group=group)
    for fmt in JUDGMENT_FORMATS:
        dump.get(api + "judgments/", {"format": fmt}, group=group)
    for endpoint in FAMILY_ENDPOINTS:
        params = {"calibration": {"against": others.get("calibration", slug), "benchmark": "sys-C"},
                  "power": {"delta": 10, "repetitions": 50}}.get(endpoint)
        dump.get(f"{api}{endpoint}/", params, group=group)
        if endpoint in ("significance", "stability"):
            dump.get(f"{api}{endpoint}/", {"workers": "all"}, group=group)
    tables = json.loads(dump.api.get(api + "tables/").content)["tables"]
    for table in tables:
        for fmt in ("csv", "json") + (("latex",) if table["latex"] else ()):
            dump.get(f"{api}tables/{table['name']}/", {"format": fmt}, group=group)
        dump.get(f"/results/{slug}/{table['name']}.csv", group=group, client=dump.browser)
        if table["latex"]:
            dump.get(f"/results/{slug}/{table['name']}.tex", group=group, client=dump.browser)
    dump.get(f"/results/{slug}/", group=group, client=dump.browser)
    dump.get(f"/results/{slug}/power/", {"delta": 10}, group=group, client=dump.browser)
    changelist = dump.browser.get("/admin/annotation/campaign/", {"q": slug}).content.decode()
    for row in re.findall(r"<tr.*?</tr>", changelist, re.S):
        found = re.search(r'href="(/admin/annotation/campaign/\d+/change/)[^"]*"', row)
        if found and f">{slug}<" in row:
            dump.request(dump.browser, "get", found.group(1), name=f"{group}/admin-change")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("outdir", type=Path)
    parser.add_argument("--protocols", default=",".join(fixture.ROOTS),
                        help="root protocols to dump, comma-separated (their stages follow); default: all")
    parser.add_argument("--hits", type=int, default=fixture.HITS_PER_WORKER,
                        help=f"HITs each worker takes at most, per stage (default {fixture.HITS_PER_WORKER})")
    parser.add_argument("--no-migrations", action="store_true",
                        help="make the schema from the models instead of running the migrations (faster; the "
                             "migrations hold no data for an empty database)")
    args = parser.parse_args(argv)
    protocols = [p for p in args.protocols.split(",") if p]
    unknown = sorted(set(protocols) - set(fixture.ROOTS))
    if unknown:
        parser.error(f"unknown root protocol(s): {', '.join(unknown)}; known: {', '.join(fixture.ROOTS)}")
    args.outdir.mkdir(parents=True, exist_ok=True)
    if any(args.outdir.iterdir()):
        parser.error(f"{args.outdir} is not empty")
    configure()
    import django

    django.setup()
    from django.db import connection
    from django.test.utils import setup_test_environment

    setup_test_environment()  # the test client's host is allowed; outgoing mail stays in memory
    logging.getLogger("django.request").setLevel(logging.ERROR)  # no line per 400 asked for on purpose
    test_settings = connection.settings_dict.setdefault("TEST", {})
    if connection.vendor == "postgresql":
        test_settings["NAME"] = f"{connection.settings_dict['NAME']}_dump_{os.getpid()}"
    else:
        test_settings["NAME"] = f"{scratch()}/mteval-dump-test-{os.getpid()}.sqlite3"
    test_settings["MIGRATE"] = not args.no_migrations
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        run(args.outdir, protocols, args.hits)
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)
    return 0


def run(outdir: Path, protocols: list[str], hits: int) -> None:
    import io

    from django.core.management import call_command
    from django.test import Client
    from rest_framework.test import APIClient

    os.environ["DJANGO_SUPERUSER_PASSWORD"] = PASSWORD
    call_command("createsuperuser", "--noinput", username="researcher", email="researcher@example.org",
                 stdout=io.StringIO())
    printed = io.StringIO()
    call_command("drf_create_token", "researcher", stdout=printed)
    key = re.search(r"[0-9a-f]{40}", printed.getvalue()).group(0)
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    browser = Client()
    assert browser.login(username="researcher", password=PASSWORD)
    dump = Dump(outdir, api, browser, hits)
    dump.forget(key, "api-token")
    for value in browser.cookies.values():
        dump.forget(value.value, "cookie")
    tasks = {}
    for protocol in protocols:
        _, slugs, _ = import_campaign(dump, protocol)
        tasks[protocol] = slugs
    for protocol, slugs in tasks.items():
        analyse(dump, protocol, slugs)
    da = [tasks[p][0] for p in ("fluency", "adequacy", "source-adequacy") if p in tasks]
    for protocol, slugs in tasks.items():
        for slug in slugs:
            others = {"calibration": next((s for s in da if s != slug), slug)}
            dump_campaign(dump, protocol, slug, others)
    site = "site"
    dump.get("/api/", group=site)
    dump.get("/api/campaigns/", group=site)
    dump.get("/api/campaigns/", {"protocol": protocols[0]}, group=site)
    studies = json.loads(api.get("/api/studies/").content)
    dump.get("/api/studies/", group=site)
    for study in studies.get("results", studies) if isinstance(studies, dict) else studies:
        dump.get(f"/api/studies/{study['slug']}/", group=site)
        dump.get(f"/results/study/{study['slug']}/", group=site, client=browser)
    dump.get("/api/schema/", group=site)
    dump.request(api, "get", "/api/schema/", name=f"{site}/api~schema-json", HTTP_ACCEPT="application/json")
    dump.get("/results/", group=site, client=browser)
    if len(da) >= 2:
        compare = {"old": da[1], "new": da[0], "benchmark": "sys-C"}
        dump.get("/results/compare/", compare, group=site, client=browser)
        dump.get("/results/compare.csv", compare, group=site, client=browser)
    files = dump.write()
    print(json.dumps({"outdir": str(outdir), "files": files, "campaigns": sum(map(len, tasks.values()))}))


if __name__ == "__main__":
    sys.exit(main())

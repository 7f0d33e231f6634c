"""`manage.py campaign publish|pause|close|list|export`: a study scripted end to end (docs/api.md §4).

publish, pause and close set the status as the admin's buttons and `POST /api/campaigns/<slug>/status/` do;
list prints every campaign with its counts (a table, or `--json`); export streams the judgments in the formats of
`GET /api/campaigns/<slug>/judgments/` (annotation/services/export.py; z-scores from the installed results source,
annotation/extensions.py). An unknown slug, or a status an analysis-only campaign cannot take, ends the command
with a one-line message and exit status 1.
"""
import json

from django.core.management.base import BaseCommand, CommandError

from annotation.extensions import results_source
from annotation.models import Campaign
from annotation.services import lifecycle
from annotation.services.export import (
    EXPORT_FORMATS,
    as_csv,
    as_json,
    columns_for,
    export_format_problem,
    judgment_rows,
)
from annotation.services.parquet_export import as_parquet
from annotation.services.progress import campaign_counts

STATUS = {"publish": Campaign.Status.ACTIVE, "pause": Campaign.Status.PAUSED, "close": Campaign.Status.CLOSED}
#: The list's columns; places are HITs × redundancy, done when a worker finishes a HIT (at most the redundancy per
#: HIT), as the admin's campaign list and campaign page count them (services/progress.py).
LIST_COLUMNS = ["slug", "protocol", "status", "hits_total", "hits_done", "places_done", "places_total", "judgments",
                "name"]
COUNTED = ("hits_total", "hits_done", "places_done", "places_total", "judgments")


def set_status(campaign: Campaign, status: str) -> None:
    """Give the campaign's whole task `status` through the lifecycle service the admin and the API use (every stage
    of a multi-stage task; an analysis-only campaign stays as it is)."""
    try:
        lifecycle.set_status(campaign, status)
    except lifecycle.AnalysisOnly as exc:
        raise CommandError(f"{campaign.slug} holds imported judgments only; its status stays as it is") from exc
    campaign.status = status


def find(slug: str) -> Campaign:
    campaign = Campaign.objects.filter(slug=slug).first()
    if campaign is None:
        raise CommandError(f"no campaign {slug!r} (manage.py campaign list shows them)")
    return campaign


def export_lines(campaign: Campaign, fmt: str):
    """The export's text, chunk by chunk, as the API streams it."""
    if fmt in EXPORT_FORMATS:
        problem = export_format_problem(campaign, fmt)
        if problem:
            raise CommandError(problem)
        return EXPORT_FORMATS[fmt].writer(campaign)
    rows = judgment_rows(campaign, results_source().standardisation(campaign))
    if fmt == "parquet":
        return as_parquet(rows, columns_for(campaign))
    return as_json(rows) if fmt == "json" else as_csv(rows, columns_for(campaign))


class Command(BaseCommand):
    help = "Publish, pause or close a campaign, list the campaigns, or export a campaign's judgments."

    def add_arguments(self, parser):
        commands = parser.add_subparsers(dest="action", required=True, metavar="publish|pause|close|list|export")
        for action, status in STATUS.items():
            sub = commands.add_parser(action, help=f"set the campaign's status to {status.label.lower()}")
            sub.add_argument("slug")
        listing = commands.add_parser("list", help="every campaign: slug, protocol, status, HITs, places, judgments, "
                                                   "name")
        listing.add_argument("--json", action="store_true", help="one JSON array instead of a table")
        export = commands.add_parser("export", help="the campaign's judgments, as the API's judgments/ export")
        export.add_argument("slug")
        export.add_argument("--format", choices=["csv", "json", "parquet", *EXPORT_FORMATS], default="csv",
                            help="parquet needs --output (a binary file)")
        export.add_argument("--output", "-o", default="", help="write to this file instead of the standard output")

    def handle(self, *args, action, **options):
        if action in STATUS:
            campaign = find(options["slug"])
            set_status(campaign, STATUS[action])
            self.stdout.write(json.dumps({"campaign": campaign.slug, "status": campaign.status}))
        elif action == "list":
            self.list(options["json"])
        else:
            self.export(find(options["slug"]), options["format"], options["output"])

    def list(self, as_json_array: bool) -> None:
        campaigns = list(Campaign.objects.order_by("pk"))
        counts = campaign_counts(campaigns)
        rows = [{"slug": c.slug, "name": c.name, "protocol": c.protocol, "status": c.status,
                 "analysis_only": c.analysis_only, **{k: counts[c.pk][k] for k in COUNTED}}
                for c in campaigns]
        if as_json_array:
            self.stdout.write(json.dumps(rows, ensure_ascii=False))
            return
        table = [LIST_COLUMNS] + [[str(row[k]) for k in LIST_COLUMNS] for row in rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(LIST_COLUMNS))]
        for line in table:
            self.stdout.write("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip())

    def export(self, campaign: Campaign, fmt: str, output: str) -> None:
        chunks = export_lines(campaign, fmt)
        if fmt == "parquet":
            if not output:
                raise CommandError("--format parquet writes a binary file: give it with --output")
            with open(output, "wb") as handle:
                for chunk in chunks:
                    handle.write(chunk)
            return
        if not output:
            for chunk in chunks:
                self.stdout.write(chunk, ending="")
            return
        with open(output, "w", encoding="utf-8", newline="") as handle:
            for chunk in chunks:
                handle.write(chunk)

"""`manage.py compute_results SLUG [--json]`: compute a campaign's statistics here and now (no Celery needed)."""
import json

from django.core.management.base import BaseCommand, CommandError
from django.http import QueryDict

from annotation.models import Campaign
from evaluation.analyses import compute_results
from evaluation.families import BadQuery, family_of


class Command(BaseCommand):
    help = ("Compute and store a campaign's results (its whole study's, when it has one); with --json, print "
            "its systems/ and workers/ answers and every family table the API offers. A pilot with too little data "
            "exits 0 and says what is missing (data_state); a run that fails exits 1 with a one-line message.")

    def add_arguments(self, parser):
        parser.add_argument("slug")
        parser.add_argument("--json", action="store_true", help="Print the results as one JSON object.")

    def handle(self, *args, slug, **opts):
        campaign = Campaign.objects.filter(slug=slug).first()
        if campaign is None:
            raise CommandError(f"no campaign {slug!r}")
        try:
            header = compute_results(campaign)
        except Exception as exc:  # a real failure (too little data is a state, not an exception: analyses.py)
            detail = " ".join(str(exc).split()) or "no message"
            raise CommandError(f"computing the results of {slug} failed: {type(exc).__name__}: {detail}") from exc
        if not opts["json"]:
            judgments = header.judgments if header else 0
            state = (header.summary or {}).get("data_state") if header else None
            self.stdout.write(json.dumps({"campaign": campaign.slug, "judgments": judgments, "data_state": state}))
            return
        family = family_of(campaign)
        params = QueryDict()
        body = {"campaign": campaign.slug, "systems": {}, "workers": family.workers(campaign, params)["results"]}
        for workers in ("reliable", "all"):
            body["systems"][workers] = family.systems(campaign, QueryDict(f"workers={workers}"))["results"]
        for name in family.endpoints:
            try:
                body[name] = family.endpoint(name)(campaign, params)
            except BadQuery:  # an endpoint that needs a parameter (calibration, one document) is left out
                continue
        self.stdout.write(json.dumps(body, default=str, sort_keys=True))

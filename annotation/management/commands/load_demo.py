"""Load the demo campaigns and an admin account, and print where to go (used by `make run`).

Each demo campaign has room for DEMO_WORKERS distinct workers at once: short HITs (DEMO_HIT_SIZE items, a few
minutes each; the demo file's 70 outputs make five of them) each done by enough workers. A demo database
loaded before this was so keeps its HITs and gets the redundancy that makes the room.
"""
import math
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from rest_framework.authtoken.models import Token

from annotation.models import Campaign
from annotation.protocols import get_protocol
from annotation.services.campaign_import import import_campaign

DEMO_FILE = Path(__file__).resolve().parents[2] / "demo" / "demo-de-en.jsonl"
DEMOS = [
    ("Demo: adequacy de-en", "adequacy"),
    ("Demo: fluency de-en", "fluency"),
]
#: The error-span demo (ESA, docs/methods.md §11): HITs of DEMO_SPAN_SEGMENTS segments, whole documents.
DEMO_SPANS = ("Demo: ESA de-en", "esa")
DEMO_SPAN_SEGMENTS = 12
#: Distinct workers who can each get a HIT of a demo campaign at the same time.
DEMO_WORKERS = 25
#: Items per demo HIT (the smallest DA HIT: 14 outputs, with their quality controls).
DEMO_HIT_SIZE = 20


def make_room(campaign: Campaign, workers: int = DEMO_WORKERS) -> Campaign:
    """Raise the campaign's redundancy so that `workers` distinct workers can each have a HIT."""
    needed = math.ceil(workers / max(1, campaign.hits.count()))
    if campaign.redundancy < needed:
        campaign.redundancy = needed
        campaign.save(update_fields=["redundancy"])
    return campaign


class Command(BaseCommand):
    help = "Create the demo campaigns (once) and the demo admin account; print the links."

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--admin-password", default="admin")

    def handle(self, *args, base_url, admin_password, **options):
        slugs = []
        for name, protocol in DEMOS:
            campaign = Campaign.objects.filter(name=name).first()
            if campaign is None:
                with DEMO_FILE.open("rb") as handle:
                    campaign = import_campaign(handle, name=name, protocol=protocol, seed=2026,
                                               hit_size=DEMO_HIT_SIZE, source_language="de",
                                               target_language="en").campaign
            slugs.append(make_room(campaign).slug)
        name, protocol = DEMO_SPANS
        campaign = Campaign.objects.filter(name=name).first()
        if campaign is None:
            with DEMO_FILE.open("rb") as handle:
                parsed = get_protocol(protocol).parse_options({
                    "seed": 2026, "segments_per_hit": DEMO_SPAN_SEGMENTS, "source_language": "de",
                    "target_language": "en", "min_items": 1})
                campaign = import_campaign(handle, name=name, protocol=protocol, parsed=parsed).campaign
        slugs.append(make_room(campaign).slug)
        user_model = get_user_model()
        admin, created = user_model.objects.get_or_create(username="admin", defaults={"is_staff": True,
                                                                                     "is_superuser": True})
        if created:
            admin.set_password(admin_password)
            admin.save()
        token, _ = Token.objects.get_or_create(user=admin)
        self.stdout.write("\nDemo ready.")
        for slug in slugs:
            self.stdout.write(f"  Annotator link: {base_url}/c/{slug}/start/?worker_id=demo-worker-1")
        self.stdout.write(f"  (any worker id: up to {DEMO_WORKERS} workers at once; {DEMO_HIT_SIZE} items per DA HIT, "
                          f"{DEMO_SPAN_SEGMENTS} segments per ESA HIT)")
        password = admin_password if created else "(unchanged since it was created)"
        self.stdout.write(f"  Admin login:    {base_url}/admin/  user: admin  password: {password}")
        self.stdout.write(f"  API token:      curl -H 'Authorization: Token {token.key}' {base_url}/api/campaigns/\n")

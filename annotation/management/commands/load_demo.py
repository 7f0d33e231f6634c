"""Load the demo campaigns and an admin account, and print where to go (used by `make run`).

Each demo campaign has room for DEMO_WORKERS distinct workers at once: short HITs (a few
minutes each; the demo file's 70 outputs make five of them) each done by enough workers. A demo database
loaded before this was so keeps its HITs and gets the redundancy that makes the room.

`--demo NAME` (or `--protocol NAME`) loads instead the sample campaign of one protocol, from
annotation/demo/NAME.jsonl (`make run DEMO=ranking`); every protocol that can be imported has one.
"""
import io
import json
import math
import zipfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from rest_framework.authtoken.models import Token

from annotation.models import Campaign
from annotation.protocols import get_protocol, importable_protocol_choices
from annotation.services.campaign_import import import_campaign

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
DEMO_FILE = DEMO_DIR / "demo-de-en.jsonl"
#: Distinct workers who can each get a HIT of a demo campaign at the same time.
DEMO_WORKERS = 25
#: The sample campaign files' manifest: each protocol's sample and its import options (short HITs, and what the
#: protocol cannot do without: pairwise its two systems, ranking gold units), and the default demo.
_MANIFEST = json.loads((DEMO_DIR / "samples.json").read_text(encoding="utf-8"))
SAMPLE_OPTIONS = {name: sample["options"] for name, sample in _MANIFEST["samples"].items()}
#: The default demo (`make run` without DEMO=): (campaign name, protocol, import options) on DEMO_FILE, from the
#: manifest's `default_demo`: DA in HITs of 20 items (the smallest with their quality controls), ESA in HITs of
#: whole documents (12 segments).
DEMOS = [(c["name"], c["protocol"], c["options"]) for c in _MANIFEST["default_demo"]["campaigns"]]
#: The media and instructions demo (issue 26): contrastive ESA on annotation/demo/media/media-demo.jsonl, whose
#: documents carry generated images, a short video and an audio clip (make_media.py) and whose lines carry the
#: instructions the systems were given; judges play each clip to at least half before Submit.
MEDIA_DIR = DEMO_DIR / "media"
MEDIA_DEMO = ("Demo: media and instructions (contrastive ESA)", "contrastive-esa",
              {"segments_per_hit": 3, "min_items": 1, "require_media_played": 50})


def sample_file(name: str) -> Path:
    """The sample campaign file of protocol `name`."""
    return DEMO_DIR / f"{name}.jsonl"


def sample_names() -> list[str]:
    """Every protocol with a sample campaign: the importable ones (later stages come with their first)."""
    return [name for name, _label in importable_protocol_choices()]


def make_room(campaign: Campaign, workers: int = DEMO_WORKERS) -> Campaign:
    """Raise the campaign's redundancy so that `workers` distinct workers can each have a HIT."""
    needed = math.ceil(workers / max(1, campaign.hits.count()))
    if campaign.redundancy < needed:
        campaign.redundancy = needed
        campaign.save(update_fields=["redundancy"])
    return campaign


def load_sample(name: str) -> Campaign:
    """The sample campaign of protocol `name` ("Demo: <name>"), imported once with its SAMPLE_OPTIONS. A
    one-stage campaign gets room for DEMO_WORKERS workers; a multi-stage one keeps its protocol's redundancy
    (there it counts editors, translators or writers per item)."""
    campaign = Campaign.objects.filter(name=f"Demo: {name}").first()
    if campaign is None:
        spec = get_protocol(name)
        parsed = spec.parse_options({"seed": 2026, "source_language": "de", "target_language": "en",
                                     **SAMPLE_OPTIONS.get(name, {})})
        campaign = import_campaign(str(sample_file(name)), name=f"Demo: {name}", protocol=name,
                                   parsed=parsed).campaign
    return campaign if campaign.protocol_spec.stage_name else make_room(campaign)


def media_bundle() -> bytes:
    """The media demo as the bundle a researcher would upload: its campaign file and media files, zipped here."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as bundle:
        for path in sorted(MEDIA_DIR.iterdir()):
            if path.suffix != ".py" and path.is_file():
                bundle.write(path, path.name)
    return out.getvalue()


def load_media_demo() -> Campaign:
    """The media and instructions demo (MEDIA_DEMO), imported once from its bundle."""
    name, protocol, options = MEDIA_DEMO
    campaign = Campaign.objects.filter(name=name).first()
    if campaign is None:
        parsed = get_protocol(protocol).parse_options({"seed": 2026, "source_language": "de", "target_language": "en",
                                                       **options})
        campaign = import_campaign(io.BytesIO(media_bundle()), name=name, protocol=protocol, parsed=parsed).campaign
    return make_room(campaign)


def load_default() -> list[str]:
    """The default demo (DEMOS, on demo-de-en.jsonl, then MEDIA_DEMO), each campaign imported once; their slugs."""
    slugs = []
    for name, protocol, options in DEMOS:
        campaign = Campaign.objects.filter(name=name).first()
        if campaign is None:
            parsed = get_protocol(protocol).parse_options({"seed": 2026, "source_language": "de",
                                                           "target_language": "en", **options})
            with DEMO_FILE.open("rb") as handle:
                campaign = import_campaign(handle, name=name, protocol=protocol, parsed=parsed).campaign
        slugs.append(make_room(campaign).slug)
    return [*slugs, load_media_demo().slug]


class Command(BaseCommand):
    help = ("Create the demo campaigns (once) and the demo admin account; print the links. With --demo NAME, "
            "the sample campaign of protocol NAME (annotation/demo/NAME.jsonl) instead.")

    def add_arguments(self, parser):
        parser.add_argument("--base-url", default="http://127.0.0.1:8000")
        parser.add_argument("--admin-password", default="admin")
        parser.add_argument("--demo", "--protocol", dest="demo", default="",
                            help="load the sample campaign of this protocol instead of the default demo: "
                                 "one of " + ", ".join(sample_names()))

    def handle(self, *args, base_url, admin_password, demo, **options):
        if demo and demo not in sample_names():
            raise CommandError(f"no sample campaign {demo!r}; one of: {', '.join(sample_names())}")
        slugs = [load_sample(demo).slug] if demo else load_default()
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
        if demo:
            self.stdout.write(f"  (the sample campaign of {demo}: annotation/demo/{demo}.jsonl; "
                              "its later stages, if any, are in the admin with their own links)")
        else:
            self.stdout.write(f"  (any worker id: up to {DEMO_WORKERS} workers at once, in short HITs)")
        password = admin_password if created else "(unchanged since it was created)"
        self.stdout.write(f"  Admin login:    {base_url}/admin/  user: admin  password: {password}")
        self.stdout.write(f"  API token:      curl -H 'Authorization: Token {token.key}' {base_url}/api/campaigns/\n")
